import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parse as parseYaml, stringify } from "yaml";
import { MCP_SETUP } from "../../src/cli/invocation.js";
import { NextActionOutput } from "../../src/tools/track-tools.js";
import { README } from "../../scripts/docs.js";
import { postgresUrl } from "../helpers/postgres.js";

/**
 * A team's first day, by the README alone: on a new git repository, install the CLI the way the
 * install section says (from this checkout, with npm's --offline: no network), run `consort init`
 * as it shows, check that every action the written workflows use is there, run a cycle, and ask
 * the MCP server, started with the README's own line, for the next action with no state file,
 * no token and no network.
 */

const run = promisify(execFile);
const ROOT = join(README, "..");
const readme = readFileSync(README, "utf8");
const URL_ENV = "CONSORT_README_TEST_POSTGRES_URL";

/** The shell lines of the install section's step 3, in order. */
function installLines(): string[] {
  const section = readme.slice(
    readme.indexOf("## Install it on a repository"),
    readme.indexOf("## Where the databases live"),
  );
  const step3 = section.slice(section.indexOf("3. **Add Consort's files**"), section.indexOf("4. **Protect"));
  const block = /```sh\n([\s\S]*?)```/.exec(step3)?.[1] ?? "";
  return block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
}

let repo: string;
/** A clean environment: no GitHub token, no proxy to reach the network through. */
let env: NodeJS.ProcessEnv;
const sh = (line: string) => run("sh", ["-c", line], { cwd: repo, env, maxBuffer: 32 * 1024 * 1024 });

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-first-day-"));
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    npm_config_cache: process.env.npm_config_cache,
    [URL_ENV]: postgresUrl(),
  };
  await sh(
    "git init -q --initial-branch=main && git config user.name 'Shop Team' && git config user.email team@example.com",
  );
  await writeFile(
    join(repo, "package.json"),
    `${JSON.stringify({ name: "shop", version: "1.0.0", private: true }, null, 2)}\n`,
  );
  await writeFile(join(repo, ".gitignore"), "node_modules/\njunit.xml\n");
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe("the README's install section, followed on a new repository", { timeout: 240_000 }, () => {
  test("step 3 installs the CLI from this repository and runs it without a bare npx consort", async () => {
    const lines = installLines();
    expect(lines[0]).toBe("npm install --save-dev <path or git URL of Consort>");
    expect(lines.slice(1).every((line) => line.startsWith("npx --no-install consort "))).toBe(true);
    expect(readme).not.toMatch(/npx consort [a-z]/);
    // --offline: the test proves the install needs no network.
    await sh(`${lines[0]!.replace("<path or git URL of Consort>", `'${ROOT}'`)} --offline --no-audit --no-fund`);
    const pkg = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.devDependencies)).toEqual(["consort-for-github"]);
    for (const line of lines.slice(1)) await sh(line);
    expect(existsSync(join(repo, ".github/consort.yml"))).toBe(true);
    expect(await readFile(join(repo, ".github/CODEOWNERS"), "utf8")).toContain("@my-org/leads");
  });

  test("every `uses:` of the written workflows is GitHub's own action or a file in the repository", async () => {
    const workflows = (await readdir(join(repo, ".github/workflows"))).filter((name) => name.endsWith(".yml"));
    expect(workflows.sort()).toEqual([
      "consort-agent.yml",
      "consort-cycle.yml",
      "consort-deploy.yml",
      "consort-promote.yml",
    ]);
    const local: string[] = [];
    for (const name of workflows) {
      const flow = parseYaml(await readFile(join(repo, ".github/workflows", name), "utf8")) as {
        jobs: Record<string, { steps: Array<{ uses?: string }> }>;
      };
      for (const step of Object.values(flow.jobs).flatMap((job) => job.steps)) {
        if (!step.uses) continue;
        if (step.uses.startsWith("./")) local.push(step.uses);
        else
          expect(step.uses, `${name}: ${step.uses}`).toMatch(/^actions\/(checkout|setup-node|upload-artifact)@v\d+$/);
      }
    }
    expect(local.length).toBe(4);
    for (const uses of local) {
      const manifest = join(repo, uses, "action.yml");
      expect(existsSync(manifest), `${uses}/action.yml`).toBe(true);
      const action = parseYaml(await readFile(manifest, "utf8")) as { runs: { main: string } };
      expect(existsSync(join(repo, uses, action.runs.main)), `${uses}/${action.runs.main}`).toBe(true);
      expect(existsSync(join(repo, uses, "dist/main.mjs"))).toBe(true);
    }
    // The schemas the CLI's messages point at are in the repository too.
    expect(existsSync(join(repo, "node_modules/consort-for-github/schemas/spec.schema.json"))).toBe(true);
  });

  test("a cycle runs on a track: the failing test is a verified RED", async () => {
    const config = parseYaml(await readFile(join(repo, ".github/consort.yml"), "utf8")) as Record<string, unknown>;
    // The test run's shared Postgres stands in for the team's server (the embedded one is the default).
    config.database = { provider: "postgres", postgres: { urlEnv: URL_ENV, rootDatabase: `readme_${Date.now()}` } };
    // vitest (this checkout's: the new repository installs no runner), whose report names each
    // test's file; Node 20's junit reporter names none, so a cycle on it refuses (a test counts
    // only in its own file: the README's runner table).
    config.commands = {
      migrate: "node -e 0",
      test: `${join(ROOT, "node_modules/.bin/vitest")} run --globals --reporter=junit --outputFile=junit.xml`,
    };
    await writeFile(join(repo, ".github/consort.yml"), stringify(config));
    await sh("git add -A && git commit -qm 'Consort: configuration, workflows, action' && git switch -qc f1-discount");
    await mkdir(join(repo, ".consort"));
    await writeFile(
      join(repo, ".consort/test-list.json"),
      `${JSON.stringify({ tests: [{ id: "T1", ac: "S1-AC1", file: "test/discount.test.mjs", title: "takes ten percent off", kind: "behavior" }] }, null, 2)}\n`,
    );
    await mkdir(join(repo, "test"));
    await writeFile(
      join(repo, "test/discount.test.mjs"),
      '/* global test, expect */\ntest("takes ten percent off", () => {\n  expect(100).toBe(90);\n});\n',
    );
    await sh("git add -A && git commit -qm 'RED: T1' -m 'Consort-Role: navigator'");
    const { stdout } = await sh("npx --no-install consort cycle --step red --tests T1 --json --quiet");
    const result = JSON.parse(stdout) as { verdict: string; step: string };
    expect(result).toMatchObject({ verdict: "verified", step: "red" });
  });

  test("the MCP server, started with the README's line, gives the next action with no state file, token or network", async () => {
    expect(readme).toContain(`\`${MCP_SETUP}\``);
    const [command, ...args] = MCP_SETUP.slice(MCP_SETUP.indexOf(" -- ") + 4).split(" ");
    const transport = new StdioClientTransport({
      command: command!,
      args,
      cwd: repo,
      env: { ...env } as Record<string, string>,
      stderr: "pipe",
    });
    const client = new Client({ name: "first-day", version: "1.0.0" });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "next_action", arguments: {} });
      expect(result.isError ?? false).toBe(false);
      const output = NextActionOutput.parse(result.structuredContent);
      expect(output.state).toMatchObject({ trackId: "f1-discount", source: "commits", verified: false });
      // Replayed from main: the Product Owner writes the stories first; the early RED stands refused.
      expect(output.action).toMatchObject({ stage: "stories", role: "product-owner" });
    } finally {
      await client.close();
    }
  });
});
