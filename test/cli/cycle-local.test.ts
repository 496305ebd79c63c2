import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { postgresUrl } from "../helpers/postgres.js";

/** `consort cycle` as a person runs it: a warning for a dirty tree, and Ctrl-C drops the throwaway branch. */

const run = promisify(execFile);
const BIN = resolve("bin/consort.js");
const URL_ENV = "CONSORT_CLI_CYCLE_TEST_URL";
const root = `clicycle_${Date.now().toString(36)}`;
let repo: string;
const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", [URL_ENV]: postgresUrl() };

async function databases(prefix: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      `${prefix}%`,
    ]);
    return rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-cli-cycle-"));
  const sh = (line: string) => run("sh", ["-c", line], { cwd: repo, env });
  await sh("git init -q --initial-branch=main && git config user.name T && git config user.email t@example.com");
  await mkdir(join(repo, ".github"));
  await mkdir(join(repo, ".consort"));
  await mkdir(join(repo, "test"));
  await writeFile(
    join(repo, ".github/consort.yml"),
    stringify({
      database: { provider: "postgres", postgres: { urlEnv: URL_ENV, rootDatabase: root } },
      // The test command waits long enough to be interrupted.
      commands: { migrate: "node -e 0", test: 'node -e "setTimeout(() => {}, 60000)"' },
    }),
  );
  await writeFile(
    join(repo, ".consort/test-list.json"),
    JSON.stringify({ tests: [{ id: "T1", ac: "S1-AC1", file: "test/a.test.mjs", title: "a", kind: "behavior" }] }),
  );
  await writeFile(join(repo, "test/a.test.mjs"), "// T1\n");
  await sh("git add -A && git commit -qm base && git switch -qc f1-slow");
}, 60_000);
afterAll(async () => {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  for (const name of await databases(root)) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(`DROP DATABASE IF EXISTS "f1-slow" WITH (FORCE)`);
  await client.end();
  await rm(repo, { recursive: true, force: true });
});

describe("consort cycle", () => {
  it("warns that uncommitted changes are not what it tests", async () => {
    await writeFile(join(repo, "test/a.test.mjs"), "// T1, edited\n");
    const failing = { ...env, [URL_ENV]: "" };
    const outcome = await run(process.execPath, [BIN, "cycle", "--step", "red", "--tests", "T1", "--quiet"], {
      cwd: repo,
      env: failing,
    }).catch((error: { stderr: string }) => error);
    expect(outcome.stderr).toMatch(
      /^warning: the working tree has 1 uncommitted change\(s\) \(test\/a\.test\.mjs\); the cycle tests commit [0-9a-f]{12} \(HEAD\), not them: commit them first to test them$/m,
    );
    await run("git", ["checkout", "--", "test/a.test.mjs"], { cwd: repo });
  });

  it("interrupted with Ctrl-C, drops its throwaway branch instead of leaving it to its TTL", async () => {
    const child = spawn(process.execPath, [BIN, "cycle", "--step", "red", "--tests", "T1"], { cwd: repo, env });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    for (let i = 0; i < 300 && !/testing: /.test(stderr); i++) await new Promise((r) => setTimeout(r, 100));
    const forked = /forking (f1-slow-cycle-\S+) from/.exec(stderr)?.[1];
    expect(forked).toMatch(/^f1-slow-cycle-[0-9a-f]{8}$/);
    expect(await databases(forked!)).toEqual([forked]);
    child.kill("SIGINT");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(130);
    expect(stderr).toContain(`interrupted: dropping the throwaway branch ${forked}`);
    expect(await databases(forked!)).toEqual([]);
  });
});

/** Where a cycle's outputs go: under the git directory, said on stderr, never into the checkout for a commit. */
describe("consort cycle's outputs", () => {
  let fast: string;
  const fastRoot = `clicycleout_${Date.now().toString(36)}`;
  // A test command that writes a JUnit report where the configuration says, as a runner would.
  const report =
    '<testsuites><testsuite name="a" tests="1"><testcase classname="test/a.test.mjs" file="test/a.test.mjs" name="a"><failure type="AssertionError" message="expected 1 to be 2">AssertionError: expected 1 to be 2</failure></testcase></testsuite></testsuites>';
  beforeAll(async () => {
    fast = await mkdtemp(join(tmpdir(), "consort-cli-cycle-out-"));
    const sh = (line: string) => run("sh", ["-c", line], { cwd: fast, env });
    await sh("git init -q --initial-branch=main && git config user.name T && git config user.email t@example.com");
    await mkdir(join(fast, ".github"));
    await mkdir(join(fast, ".consort"));
    await mkdir(join(fast, "test"));
    await writeFile(
      join(fast, "write-report.mjs"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync("junit.xml", ${JSON.stringify(report)});\nprocess.exit(1);\n`,
    );
    await writeFile(
      join(fast, ".github/consort.yml"),
      stringify({
        database: { provider: "postgres", postgres: { urlEnv: URL_ENV, rootDatabase: fastRoot } },
        commands: { migrate: "node -e 0", test: "node write-report.mjs" },
      }),
    );
    await writeFile(
      join(fast, ".consort/test-list.json"),
      JSON.stringify({ tests: [{ id: "T1", ac: "S1-AC1", file: "test/a.test.mjs", title: "a", kind: "behavior" }] }),
    );
    await writeFile(join(fast, "test/a.test.mjs"), "// T1\n");
    await sh("git add -A && git commit -qm base && git switch -qc f2-out");
  }, 60_000);
  afterAll(async () => {
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    for (const name of [...(await databases(fastRoot)), ...(await databases("f2-out"))])
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
    await rm(fast, { recursive: true, force: true });
  });

  it("writes the result under the git directory, says where, and never asks to commit what the cycle wrote", async () => {
    const cycle = () =>
      run(process.execPath, [BIN, "cycle", "--step", "red", "--tests", "T1"], { cwd: fast, env }).catch(
        (error: { stdout: string; stderr: string }) => error,
      );
    const first = await cycle();
    const gitDir = (await run("git", ["rev-parse", "--absolute-git-dir"], { cwd: fast })).stdout.trim();
    const outDir = join(gitDir, "consort", "cycle");
    expect(first.stderr).toContain(`wrote cycle-result.json and cycle-summary.md to ${outDir}`);
    expect(JSON.parse(await readFile(join(outDir, "cycle-result.json"), "utf8"))).toMatchObject({ step: "red" });
    await expect(readFile(join(fast, "cycle-result.json"), "utf8")).rejects.toThrow(/ENOENT/);
    // The JUnit report the test command left in the checkout is the cycle's, not a change to commit.
    const second = await cycle();
    expect(second.stderr).not.toMatch(/uncommitted|commit them/);
  });
});
