import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, test } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { BEGIN, END, README, configReference, fieldComments, withReference } from "../../scripts/docs.js";
import { checkStates, isPlaceholder } from "../../src/gates/checks.js";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { simulatedTrack } from "../handlers/scenario.js";

/** The README a newcomer follows: its generated reference is current, and what it tells you to run exists. */

const ROOT = join(README, "..");
const readme = readFileSync(README, "utf8");

/** Every `consort <command> [--options]` the README shows, in code spans and blocks. */
function documentedInvocations(text: string): Array<{ command: string; options: string[] }> {
  const code = [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .concat([...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!));
  const found: Array<{ command: string; options: string[] }> = [];
  for (const snippet of code) {
    for (const match of snippet.matchAll(/\bconsort ([a-z][a-z-]*)((?: +(?:--?[a-z][a-z-]*|[^\s#-][^\s#]*))*)/g)) {
      found.push({
        command: match[1]!,
        options: [...(match[2] ?? "").matchAll(/(?:^|\s)(--?[a-z][a-z-]*)/g)].map((o) => o[1]!),
      });
    }
  }
  return found;
}

function optionsOf(command: Command): string[] {
  return [...command.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f))), "--help", "-h"];
}

describe("README.md", () => {
  test("its configuration reference is the one the zod schema generates (run `npm run docs` when this fails)", () => {
    expect(readme.includes(BEGIN) && readme.includes(END)).toBe(true);
    expect(withReference(readme)).toBe(readme);
  });

  test("the staleness check notices a reference that no longer matches the schema", () => {
    const stale = readme.replace(/\| `repairBound` \|[^\n]*\n/, "");
    expect(stale).not.toBe(readme);
    expect(withReference(stale)).toBe(readme);
  });

  test("the reference lists every setting of the schema, explained", () => {
    const reference = configReference();
    for (const key of [
      "database.provider",
      "database.postgres.urlEnv",
      "database.lakebase.host",
      "commands.migrate",
      "commands.test",
      "junit",
      "paths.tests",
      "approvers.users",
      "granularity",
      "repairBound",
      "cycle.timeoutMinutes",
    ]) {
      expect(reference).toContain(`| \`${key}\` |`);
    }
    expect(reference).toContain("| `roles.<key>` |");
    // Explanations come from the doc comments in the schema's source.
    expect(fieldComments().get("cycle.timeoutMinutes")).toMatch(/has not reported/);
    for (const row of reference.split("\n").filter((line) => line.startsWith("| `")))
      expect(row, row).not.toMatch(/\|\s*\|$/);
  });

  test("every consort command and option it shows exists in the CLI", async () => {
    const program = await buildProgram();
    const invocations = documentedInvocations(readme);
    expect(invocations.map((i) => i.command)).toEqual(
      expect.arrayContaining(["init", "protect", "cycle", "db", "state", "mcp", "tools"]),
    );
    for (const { command, options } of invocations) {
      const sub = program.commands.find((c) => c.name() === command);
      expect(sub, `README shows \`consort ${command}\`, which the CLI does not have`).toBeDefined();
      for (const option of options)
        expect(optionsOf(sub!), `README shows \`consort ${command} ${option}\``).toContain(option);
    }
  });

  test("the CLI it points to answers `node bin/consort.js --help`", () => {
    const help = execFileSync(process.execPath, [join(ROOT, "bin/consort.js"), "--help"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    for (const command of ["init", "protect", "cycle", "db", "state", "mcp", "tools"])
      expect(help).toMatch(new RegExp(`\\n  ${command}\\b`));
  });

  test("every npm script it names exists, and the two commands are the ones package.json runs", () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    // The generated reference quotes users' own commands (`npm run migrate`): only the prose counts here.
    const prose = readme.slice(0, readme.indexOf(BEGIN)) + readme.slice(readme.indexOf(END));
    for (const [, name] of prose.matchAll(/npm run ([a-z:]+)/g))
      expect(Object.keys(scripts), `README names npm run ${name}`).toContain(name);
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
    expect(scripts.start).toBe("tsx src/main.ts");
    expect(scripts.test).toBe("vitest run");
    expect(scripts.docs).toBe("tsx scripts/docs.ts");
  });
});

describe("README.md: what a pull request shows", () => {
  const section = readme.slice(
    readme.indexOf("- **What a pull request shows.**"),
    readme.indexOf("- **Merge queues.**"),
  );

  test("says a check of a lane not reached is not posted, and GitHub lists it as expected, waiting", () => {
    expect(section).toContain("is not posted, to save writes");
    expect(section).toContain("*Expected — Waiting for status to be reported*");
    // The protection table no longer promises a posted check on every head.
    expect(readme).not.toContain("The seven checks Consort posts on every head of a track.");
  });

  test("the checks it says a new track's PR shows in the design lane are the ones the app writes there", () => {
    const lane = /- \*\*Design lane\*\*[^\n]*\n(?: {4}[^\n]*\n)*/.exec(section)?.[0] ?? "";
    const said = [...lane.matchAll(/`(consort\/[a-z-]+)`/g)].map((m) => m[1]);
    const written = checkStates(simulatedTrack("feature-readme").snapshot)
      .filter((check) => !isPlaceholder(check))
      .map((check) => check.name);
    expect(said).toEqual(written);
    expect(lane).toContain("the other six are listed as expected and waiting");
    expect(CHECK_NAMES.length - written.length).toBe(6);
  });

  test("says what happens to a fork's pull request and to a merge queue's group", () => {
    expect(readme).toContain("- **Pull requests from forks** cannot be gated");
    expect(readme).toContain("Push the branch to the repository");
    expect(readme).toContain("`gh-readonly-queue/<base>/pr-<n>-<sha>`");
  });
});
