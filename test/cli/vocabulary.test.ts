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

/**
 * The CLI and the MCP tools name the same thing the same way: each tool's input, where the paired
 * command takes it, is that command's option in kebab case (a value placeholder may carry the
 * unit: `--ttl <seconds>` is `ttlSeconds`) or its positional argument. An older CLI spelling stays
 * as a hidden alias, so scripts that use it keep working.
 */
describe("one vocabulary across the CLI and the MCP tools", async () => {
  const { consortTools } = await import("../../src/tools/index.js");
  const kebab = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  const camel = (words: string) => words.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  /** The paired surfaces: each tool and the command(s) a person runs for the same thing. */
  const PAIRS: Record<string, string[]> = {
    run_cycle: ["cycle"],
    validate_artifacts: ["validate"],
    db_branch: ["db create", "db delete", "db list", "db url", "db diff"],
    schema_diff: ["db diff"],
  };
  /** Tool inputs with no CLI counterpart on purpose, and why. */
  const TOOL_ONLY: Record<string, string> = {
    "db_branch.action": "the subcommand's own name (db create, db delete, …)",
    "db_branch.branch": "the positional <branch> of each db subcommand",
  };
  const commands = new Map(commandsOf(program).map(({ name, command }) => [name, command]));
  /** Every name a command understands for a tool input: visible options, hidden aliases, positional arguments. */
  const namesOf = (command: Command) => ({
    visible: command.options.filter((o) => !o.hidden && o.long).map((o) => ({ long: o.long!, value: valueOf(o) })),
    hidden: command.options.filter((o) => o.hidden && o.long).map((o) => o.long!),
    positional: command.registeredArguments.map((a) => a.name()),
  });

  test("every tool input the paired command takes has the command option's name", () => {
    const mismatched: string[] = [];
    for (const [toolName, commandNames] of Object.entries(PAIRS)) {
      const tool = consortTools.find((t) => t.name === toolName)!;
      expect(tool, toolName).toBeDefined();
      for (const key of Object.keys(tool.input.shape)) {
        if (TOOL_ONLY[`${toolName}.${key}`]) continue;
        const spelled = commandNames.some((name) => {
          const { visible, positional } = namesOf(commands.get(name)!);
          return (
            positional.includes(key) ||
            visible.some(
              (o) => o.long === kebab(key) || camel(`${o.long.slice(2)}-${o.value.replace(/[<>[\]]/g, "")}`) === key,
            )
          );
        });
        if (!spelled) mismatched.push(`${toolName}.${key} has no option ${kebab(key)} in consort ${commandNames[0]}`);
      }
    }
    expect(mismatched).toEqual([]);
  });

  test("the former CLI names --up-to, --earlier and --db-branch still work, hidden from --help", () => {
    expect(namesOf(commands.get("validate")!).hidden).toContain("--up-to");
    expect(namesOf(commands.get("cycle")!).hidden).toEqual(expect.arrayContaining(["--earlier", "--db-branch"]));
    const help = [commands.get("validate")!.helpInformation(), commands.get("cycle")!.helpInformation()].join("\n");
    expect(help).not.toMatch(/--up-to|--earlier |--db-branch/);
  });
});

/** Where Consort keeps its data and binaries is told one way, in the README and in every --help that tells it. */
describe("one story of the data folder", async () => {
  const { readFileSync } = await import("node:fs");
  const { DATA_FOLDER } = await import("../../src/cli/invocation.js");
  const MENTIONS = /~\/\.consort|\/var\/lib\/consort|CONSORT_DATA_DIR|CONSORT_HOME/;

  /** A command's whole --help, with the text added after it, as a person sees it. */
  const fullHelp = (command: Command) => {
    let out = "";
    command.configureOutput({ writeOut: (text) => (out += text), writeErr: (text) => (out += text) });
    command.outputHelp();
    return out.replace(/\s+/g, " ");
  };

  test("db, cycle and mcp --help say it, word for word, and no help tells another story", () => {
    const helps = commandsOf(program).map(({ name, command }) => ({ name, text: fullHelp(command) }));
    for (const name of ["db", "cycle", "mcp"])
      expect(helps.find((help) => help.name === name)?.text, name).toContain(DATA_FOLDER);
    const other = helps.filter((help) => MENTIONS.test(help.text) && !help.text.includes(DATA_FOLDER));
    expect(other.map((help) => help.name)).toEqual([]);
  });

  test("the README tells the same", () => {
    expect(readFileSync("README.md", "utf8").replace(/\s+/g, " ")).toContain(DATA_FOLDER);
  });
});
