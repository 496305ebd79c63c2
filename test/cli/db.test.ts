import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { readCheckoutConfig } from "../../src/config/load.js";
import { createTrack } from "../../src/orchestrator/index.js";
import { trackIdForBranch } from "../../src/state/schema.js";
import { stopLocalServer } from "../../src/substrate/local-server.js";
import { sanitiseBranchName } from "../../src/substrate/names.js";
import { baseDatabaseName } from "../../src/substrate/postgres-catalog.js";
import { postgresUrl, sql } from "../helpers/postgres.js";

/** `consort db …` as a person types it: in process against the shared server, and as real processes on the embedded default. */

const suffix = randomBytes(3).toString("hex");
const rootDatabase = `cliroot_${suffix}`;
let checkout: string;

async function consort(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  process.exitCode = undefined;
  try {
    const code = await runCli(["node", "consort", ...args, "-C", checkout]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = undefined;
  }
}

beforeAll(() => {
  checkout = mkdtempSync(join(tmpdir(), "consort-cli-"));
  mkdirSync(join(checkout, ".github"));
  writeFileSync(
    join(checkout, ".github/consort.yml"),
    `database:\n  provider: postgres\n  postgres:\n    rootDatabase: ${rootDatabase}\n`,
  );
  process.env.CONSORT_POSTGRES_URL = postgresUrl();
});

afterAll(async () => {
  await consort("db", "delete", `feature/cli-${suffix}`, "--quiet");
  for (const db of [rootDatabase, baseDatabaseName(rootDatabase)])
    await sql(postgresUrl(), `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  rmSync(checkout, { recursive: true, force: true });
});

describe("consort db on a configured postgres server", () => {
  it("creates a branch from a git name, lists it, hands out its URL and deletes it", async () => {
    const git = `feature/CLI-${suffix}`;
    const id = sanitiseBranchName(git);
    expect(id).toMatch(new RegExp(`^feature-cli-${suffix}-[0-9a-f]{8}$`));
    const created = await consort("db", "create", git, "--json");
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).branch).toMatchObject({ name: id, parent: rootDatabase });
    expect(created.stderr).toContain(`forking "${id}"`);

    const listed = await consort("db", "list", "--json");
    expect(JSON.parse(listed.stdout)).toMatchObject({ provider: "postgres", root: rootDatabase });
    expect(JSON.parse(listed.stdout).branches.map((b: { name: string }) => b.name)).toEqual([rootDatabase, id]);
    // The disk warm spares take is stated, with what it costs without reflink.
    expect(JSON.parse(listed.stdout).spares).toMatchObject({ count: expect.any(Number), bytes: expect.any(Number) });
    const text = await consort("db", "list");
    expect(text.stdout).toMatch(/warm spares: \d+ \([\d.]+ MB\).*without reflink \(ext4\) each costs a full copy/s);

    const url = await consort("db", "url", git);
    expect(new URL(url.stdout.trim()).pathname).toBe(`/${id}`);

    const deleted = await consort("db", "delete", id, "--json");
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: id, existed: true, children: [] });
    const again = await consort("db", "delete", id);
    expect(again.stdout).toContain("did not exist");
  });

  it("deleting a parent says on stdout which children it dropped with it", async () => {
    const parent = `parent-${suffix}`;
    await consort("db", "create", parent, "--quiet");
    await consort("db", "create", `child-${suffix}`, "--from", parent, "--quiet");
    await consort("db", "create", `grandchild-${suffix}`, "--from", `child-${suffix}`, "--quiet");
    const deleted = await consort("db", "delete", parent, "--quiet");
    expect(deleted.stdout).toBe(
      `deleted ${parent} and its 2 child branch(es): child-${suffix}, grandchild-${suffix}\n`,
    );
    expect((await consort("db", "list", "--json")).stdout).not.toContain(`child-${suffix}`);
  });

  it("shows the schema diff and fails when a change would break the parent's rows", async () => {
    const root = (await consort("db", "url", rootDatabase)).stdout.trim();
    await sql(
      root,
      "CREATE TABLE IF NOT EXISTS stock (sku text PRIMARY KEY, note text); INSERT INTO stock VALUES ('A-1', 'keep me') ON CONFLICT DO NOTHING",
    );
    expect((await consort("db", "refresh", rootDatabase, "--quiet")).code).toBe(0);
    const id = `diff-${suffix}`;
    await consort("db", "create", id, "--quiet");
    await sql((await consort("db", "url", id)).stdout.trim(), "ALTER TABLE stock DROP COLUMN note");

    const markdown = await consort("db", "diff", id, "--quiet");
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).toContain("dropping column public.stock.note loses 1 non-null value");
    const json = await consort("db", "diff", id, "--json", "--quiet");
    expect(JSON.parse(json.stdout)).toMatchObject({
      branch: id,
      parent: rootDatabase,
      ok: false,
      summary: { dropped: 1 },
    });
    await consort("db", "delete", id, "--quiet");
  });

  it("refuses what the db_branch tool refuses, with its reason: the root, and a branch the track's state pairs", async () => {
    const root = await consort("db", "delete", rootDatabase);
    expect(root.code).toBe(1);
    expect(root.stderr).toContain(`ROOT_BRANCH: ${rootDatabase} is the root database branch`);

    // The checkout is on the track's git branch, and its state pairs the track with a database branch.
    const branch = `feature/paired-${suffix}`;
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: checkout });
    git("init", "-q", "-b", branch);
    git("add", ".");
    git("commit", "-q", "-m", "config");
    const id = JSON.parse((await consort("db", "create", branch, "--json", "--quiet")).stdout).branch.name as string;
    const trackId = trackIdForBranch(branch);
    const snapshot = createTrack(
      {
        trackId,
        branch,
        baseBranch: "main",
        head: git("rev-parse", "HEAD").toString().trim(),
        databaseBranch: id,
        parentDatabaseBranch: rootDatabase,
        at: new Date().toISOString(),
      },
      readCheckoutConfig(checkout).config,
    ).snapshot;
    const stateFile = join(tmpdir(), `consort-cli-state-${suffix}.json`);
    writeFileSync(stateFile, JSON.stringify(snapshot));
    try {
      const refused = await consort("db", "delete", branch, "--state", stateFile);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`TRACK_BRANCH: ${id} is paired with the track ${trackId}`);
      expect((await consort("db", "list", "--json")).stdout).toContain(id);
      // Without the state nothing says the branch is the track's: it goes, as with the tool.
      expect(JSON.parse((await consort("db", "delete", branch, "--json", "--quiet")).stdout)).toMatchObject({
        deleted: id,
        existed: true,
      });
    } finally {
      rmSync(stateFile, { force: true });
      rmSync(join(checkout, ".git"), { recursive: true, force: true });
    }
  });

  it("refuses a URL for a branch that does not exist, with the db_branch tool's code and what to do", async () => {
    const missing = await consort("db", "url", `feature/none-${suffix}`, "--json");
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error).toMatchObject({
      message: expect.stringContaining(`NO_SUCH_BRANCH: There is no database branch named feature-none-${suffix}`),
    });
  });

  it("explains a missing parent and an invalid ttl, with a non-zero exit", async () => {
    const missing = await consort("db", "create", `x-${suffix}`, "--from", "no-such-branch", "--json");
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error).toMatchObject({
      code: "PARENT_MISSING",
      hint: expect.stringContaining("create the parent"),
    });
    const ttl = await consort("db", "create", `y-${suffix}`, "--ttl", "soon");
    expect(ttl.code).not.toBe(0);
    expect(ttl.stderr).toContain("--ttl soon");
  });
});

describe("consort db with no configuration", () => {
  it("uses the embedded default, and a second process reuses the first one's server", async () => {
    const home = mkdtempSync(join(tmpdir(), "consort-cli-local-"));
    chmodSync(home, 0o755);
    const dataDir = join(home, "pg");
    const env = { ...process.env, CONSORT_DATA_DIR: dataDir, CONSORT_POSTGRES_URL: "" };
    const run = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ["bin/consort.js", ...args, "-C", home],
          { env, cwd: process.cwd() },
          (error, stdout, stderr) =>
            resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    try {
      const created = await run("db", "create", "feature/local", "--json");
      expect(created.stderr).toContain("starting the embedded Postgres server");
      // Said where the server starts: it outlives the command, and this is how to end it.
      expect(created.stderr).toContain(
        `in ${dataDir}; it keeps running after this command: stop it with npx --no-install consort db stop`,
      );
      const local = sanitiseBranchName("feature/local");
      expect(JSON.parse(created.stdout).branch).toMatchObject({ name: local, parent: "consort_root" });
      const listed = await run("db", "list", "--json");
      expect(listed.stderr).not.toContain("starting");
      expect(JSON.parse(listed.stdout)).toMatchObject({
        provider: "local",
        branches: [{ name: "consort_root" }, { name: local }],
      });
    } finally {
      expect(await stopLocalServer(dataDir)).toBe(true);
      rmSync(home, { recursive: true, force: true });
    }
  }, 90_000);
});
