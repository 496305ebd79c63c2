import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { OUTSIDE_A_JOB } from "../../src/cycle/confine.js";
import { runDeploy } from "../../src/deploy/deploy.js";
import { hashFrozenText } from "../../src/gates/hash.js";
import { runPromote, snapshotBranchName } from "../../src/deploy/promote.js";
import { DeployEvidence, DeployRequest, PromoteRequest } from "../../src/contracts/deploy.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { EXAMPLE, checkout, exampleConfig, uniqueBranch, type Checkout } from "../cycle/stockflow.js";

/** Release verification and promotion on the finished StockFlow F1, on real database branches. */

const F1_REPLAY = uniqueBranch("f1-replay");
const F1_PREVIEW = uniqueBranch("f1-preview");
const F1_UNMIGRATED = uniqueBranch("f1-unmigrated");
const TRUNK_OK = uniqueBranch("trunk-ok");
const TRUNK_BROKEN = uniqueBranch("trunk-broken");
let config: ConsortConfig;
let provider: BranchProvider;
let root: string;
let done: Checkout;
const LIST = await readFile(join(EXAMPLE, ".consort/test-list.json"), "utf8");

beforeAll(async () => {
  ({ config, provider } = await exampleConfig());
  root = await provider.rootBranch();
  done = await checkout([{ message: "F1 done" }]);
});
afterAll(async () => {
  await done?.remove();
  await provider?.close();
});

async function hasTable(branch: string, table: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: await provider.connectionUrl(branch) });
  await client.connect();
  try {
    const { rows } = await client.query<{ found: string | null }>("SELECT to_regclass($1)::text AS found", [table]);
    return rows[0]!.found !== null;
  } finally {
    await client.end();
  }
}

const VERIFY_TABLE = `node -e "const pg=require('pg');const c=new pg.Client(process.env.DATABASE_URL);c.connect().then(()=>c.query(\\"select to_regclass('stock_records') t\\")).then(r=>{if(!r.rows[0].t)process.exit(4);return c.end()})"`;

describe.concurrent("deploy", { timeout: 120_000 }, () => {
  test("with no deploy command, every migration is replayed on a fresh fork of the parent and the whole suite passes there", async () => {
    await provider.createBranch(F1_REPLAY, { from: root });
    // As the app dispatches it: the whole list by id, its files and titles read from git at the commit.
    const request = DeployRequest.parse({
      track: "f1",
      commit: done.commit,
      database: { branch: F1_REPLAY, parent: root },
      testList: { path: ".consort/test-list.json", sha256: hashFrozenText(LIST), tests: ["T1-T8"] },
    });
    const evidence = await runDeploy(request, { provider, config, cwd: done.dir });

    expect(evidence.reasons).toEqual([]);
    expect(evidence).toMatchObject({
      mode: "replay",
      verdict: "verified",
      previewUrl: null,
      verify: { outcome: "passed", cycle: { verdict: "verified", total: 8, passed: 8 } },
    });
    expect(evidence.migrationsApplied).toContain("migrations/0001_create_stock_records.up.sql");
    expect(evidence.database.branch).not.toBe(root);
    expect(evidence.confinement).toEqual({ confined: false, reason: OUTSIDE_A_JOB.reason });
    expect(await provider.getBranch(evidence.database.branch)).toBeUndefined();
    expect(await hasTable(root, "stock_records")).toBe(false);
    expect(DeployEvidence.parse(JSON.parse(JSON.stringify(evidence)))).toEqual(evidence);
  });

  test("with a deploy command, the preview runs on the track's branch and the verify command checks it", async () => {
    await provider.createBranch(F1_PREVIEW, { from: root });
    const withDeploy = {
      ...config,
      commands: {
        ...config.commands,
        deploy: "node --import tsx src/db/migrate.ts && echo PREVIEW_URL=http://127.0.0.1:4000/f1",
        verify: VERIFY_TABLE,
      },
    };
    const request = DeployRequest.parse({
      track: "f1",
      commit: done.commit,
      database: { branch: F1_PREVIEW, parent: root },
    });
    const evidence = await runDeploy(request, { provider, config: withDeploy, cwd: done.dir });

    expect(evidence.reasons).toEqual([]);
    expect(evidence).toMatchObject({
      mode: "preview",
      verdict: "verified",
      previewUrl: "http://127.0.0.1:4000/f1",
      database: { branch: F1_PREVIEW },
      verify: { outcome: "passed" },
    });
    expect(await hasTable(F1_PREVIEW, "stock_records")).toBe(true);
  });

  test("a preview whose verification fails is refused", async () => {
    await provider.createBranch(F1_UNMIGRATED, { from: root });
    const noMigration = {
      ...config,
      commands: { ...config.commands, deploy: "echo deployed without migrating", verify: VERIFY_TABLE },
    };
    const request = DeployRequest.parse({
      track: "f1",
      commit: done.commit,
      database: { branch: F1_UNMIGRATED, parent: root },
    });
    const evidence = await runDeploy(request, { provider, config: noMigration, cwd: done.dir });

    expect(evidence.verdict).toBe("refused");
    expect(evidence.verify).toMatchObject({ outcome: "failed", record: { exitCode: 4 } });
    expect(evidence.reasons.join("\n")).toContain("the verify command");
  });
});

describe.concurrent("promote", { timeout: 120_000 }, () => {
  test("a merged migration is applied to the parent's branch and the snapshot is deleted", async () => {
    await provider.createBranch(TRUNK_OK, { from: root });
    const result = await runPromote(
      PromoteRequest.parse({ track: "f1", commit: done.commit, database: { parent: TRUNK_OK } }),
      { provider, config, cwd: done.dir },
    );

    expect(result.reasons).toEqual([]);
    expect(result).toMatchObject({
      verdict: "promoted",
      database: { snapshot: snapshotBranchName(TRUNK_OK, done.commit), snapshotKept: false },
    });
    expect(await hasTable(TRUNK_OK, "stock_records")).toBe(true);
    expect(await provider.getBranch(result.database.snapshot!)).toBeUndefined();
    // Outside a job the migrate command ran as the caller, and the result says so.
    expect(result.confinement).toEqual({ confined: false, reason: OUTSIDE_A_JOB.reason });
  });

  test("a migration that fails on the parent keeps the pre-migration snapshot for a restore", async () => {
    const broken = await checkout([
      {
        message: "F1 plus a broken migration",
        mutate: [
          async (dir) => {
            await mkdir(join(dir, "migrations"), { recursive: true });
            await writeFile(
              join(dir, "migrations/0002_broken.up.sql"),
              "ALTER TABLE stock_records ADD COLUMN batch text REFERENCES nowhere(id);\n",
            );
            await writeFile(
              join(dir, "migrations/0002_broken.down.sql"),
              "ALTER TABLE stock_records DROP COLUMN batch;\n",
            );
          },
        ],
      },
    ]);
    try {
      await provider.createBranch(TRUNK_BROKEN, { from: root });
      const result = await runPromote(
        PromoteRequest.parse({ track: "f1", commit: broken.commit, database: { parent: TRUNK_BROKEN } }),
        { provider, config, cwd: broken.dir },
      );

      expect(result.verdict).toBe("failed");
      expect(result.database.snapshotKept).toBe(true);
      expect(await provider.getBranch(result.database.snapshot!)).toBeDefined();
      expect(await hasTable(result.database.snapshot!, "stock_records")).toBe(false);
      expect(result.reasons[0]).toContain(`restore from ${result.database.snapshot}`);
    } finally {
      await broken.remove();
    }
  });
});

describe.concurrent("a release job on a checkout of another commit", () => {
  const other = "0".repeat(40);
  const refusal = (doing: string) =>
    `the checkout is at ${done.commit.slice(0, 12)}, but the request asks to ${doing} ${other.slice(0, 12)}`;

  test("a deploy refuses before it migrates or runs anything", async () => {
    const request = DeployRequest.parse({ track: "f1", commit: other, database: { branch: root, parent: root } });
    const evidence = await runDeploy(request, { provider, config, cwd: done.dir });

    expect(evidence).toMatchObject({ commit: other, verdict: "refused", reasons: [refusal("release")] });
    expect(evidence.verify).toEqual({ outcome: "not-run", command: config.commands.verify ?? null });
    expect(evidence.migrationsApplied).toEqual([]);
  });

  test("a promotion fails before it takes a snapshot of the parent", async () => {
    const request = PromoteRequest.parse({ track: "f1", commit: other, database: { parent: root } });
    const result = await runPromote(request, { provider, config, cwd: done.dir });

    expect(result).toMatchObject({ commit: other, verdict: "failed", reasons: [refusal("promote")] });
    expect(result.database).toEqual({
      provider: provider.kind,
      parent: root,
      snapshot: null,
      snapshotKept: false,
      migrated: true,
    });
    expect(result.migrate).toBeUndefined();
  });
});

describe("the pre-migration snapshot's name", () => {
  test("is a valid branch id even when the parent is a root database such as consort_root", () => {
    const name = snapshotBranchName("consort_root", "0123456789abcdef0123456789abcdef01234567");
    expect(name).toBe("consort-root-pre-01234567");
    expect(snapshotBranchName(`trunk-${"x".repeat(80)}`, "0123456789abcdef")).toMatch(
      /^[a-z][a-z0-9-]{0,49}-pre-01234567$/,
    );
  });
});
