import type { Command, Option } from "commander";
import { describe, expect, test } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

/**
 * One name per concept across every command's --help: the working folder is always `-C, --cwd`,
 * a GitHub repository is always `--repo <owner/name>`, an option keeps one kind of value
 * wherever it appears, and an option a command cannot run without is marked required.
 */

/** Names that would be a second word for a concept the CLI already names. */
const SYNONYMS: Record<string, string> = {
  "--dir": "--cwd",
  "--directory": "--cwd",
  "--path": "--cwd",
  "--root": "--cwd",
  "--checkout": "--cwd",
  "--working-directory": "--cwd",
  "--repo-path": "--cwd",
  "--github-repo": "--repo",
  "--repository": "--repo",
  "--out-file": "--out",
  "--output": "--out",
};

/** Every command and subcommand, with its full name (`db create`). */
function commandsOf(program: Command): Array<{ name: string; command: Command }> {
  const walk = (command: Command, prefix: string): Array<{ name: string; command: Command }> =>
    command.commands.flatMap((sub) => {
      const name = `${prefix}${sub.name()}`;
      return [{ name, command: sub }, ...walk(sub, `${name} `)];
    });
  return walk(program, "");
}

/** The value an option takes as its help shows it (`<owner/name>`), or "" for a switch. */
const valueOf = (option: Option) => /[<[][^>\]]+[>\]]/.exec(option.flags)?.[0] ?? "";

const program = await buildProgram();
const all = commandsOf(program).flatMap(({ name, command }) =>
  command.options.map((option) => ({ command: name, option })),
);

describe("the CLI's vocabulary", () => {
  test("the walk reaches every command and its options", () => {
    const names = commandsOf(program).map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "init",
        "validate",
        "next",
        "status",
        "mcp",
        "cycle",
        "db create",
        "protect",
        "state show",
      ]),
    );
    expect(all.length).toBeGreaterThan(40);
  });

  test("no option is a second name for a concept another option names", () => {
    const offenders = all
      .filter(({ option }) => option.long && SYNONYMS[option.long])
      .map(({ command, option }) => `consort ${command} ${option.long} (say ${SYNONYMS[option.long!]})`);
    expect(offenders).toEqual([]);
  });

  test("each long name takes one kind of value everywhere, and each short flag stands for one long name", () => {
    const values = new Map<string, Set<string>>();
    const shorts = new Map<string, Set<string>>();
    for (const { option } of all) {
      if (!option.long) continue;
      values.set(option.long, (values.get(option.long) ?? new Set()).add(valueOf(option)));
      if (option.short) shorts.set(option.short, (shorts.get(option.short) ?? new Set()).add(option.long));
    }
    const mixed = [...values].filter(([, v]) => v.size > 1).map(([name, v]) => `${name}: ${[...v].join(" vs ")}`);
    expect(mixed).toEqual([]);
    const ambiguous = [...shorts].filter(([, l]) => l.size > 1).map(([short, l]) => `${short}: ${[...l].join(", ")}`);
    expect(ambiguous).toEqual([]);
  });

  test("the working folder is -C, --cwd <dir> and a GitHub repository is --repo <owner/name>, in every command that has one", () => {
    for (const { command, option } of all) {
      if (option.long === "--cwd") expect(option.flags, `consort ${command}`).toBe("-C, --cwd <dir>");
      if (option.long === "--repo") expect(option.flags, `consort ${command}`).toBe("--repo <owner/name>");
    }
    const withCwd = all.filter(({ option }) => option.long === "--cwd").map(({ command }) => command);
    expect(withCwd).toEqual(
      expect.arrayContaining(["init", "validate", "next", "status", "mcp", "cycle", "db create"]),
    );
  });

  test("an option whose help calls it required is marked required, and a required one is not shown with a default", () => {
    for (const { command, option } of all) {
      if (/\brequired\b/i.test(option.description))
        expect(option.mandatory, `consort ${command} ${option.long}`).toBe(true);
      if (option.mandatory) expect(option.defaultValue, `consort ${command} ${option.long}`).toBeUndefined();
    }
  });

  test("the checks bite: a command with --dir and one with --repo <path> are both reported", async () => {
    const { Command } = await import("commander");
    const odd = new Command("x");
    odd.command("a").option("--dir <dir>", "folder");
    odd.command("b").option("--repo <path>", "checkout");
    const options = commandsOf(odd).flatMap(({ command }) => command.options);
    expect(options.filter((o) => o.long && SYNONYMS[o.long]).map((o) => o.long)).toEqual(["--dir"]);
    expect(options.filter((o) => o.long === "--repo").map(valueOf)).toEqual(["<path>"]);
  });
});
