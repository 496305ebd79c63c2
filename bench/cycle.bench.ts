import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadConfigFile } from "../src/cycle/config-file.js";
import { CycleRequest } from "../src/cycle/request.js";
import type { CycleResult } from "../src/cycle/result.js";
import { runCycle } from "../src/cycle/run.js";
import { hashFrozenText } from "../src/gates/freeze.js";
import { ensureLocalServer, stopLocalServer } from "../src/substrate/local-server.js";
import { createProvider } from "../src/substrate/index.js";
import type { BranchProvider, CreateBranchOptions, DatabaseBranch } from "../src/substrate/provider.js";
import { benchRuns, printJson, printTable, summarise, wantsJson } from "./lib.js";

/**
 * `npm run bench:cycle`: a GREEN cycle of StockFlow's T8 on the finished example, split into fork,
 * migrate, tests, verdict and drop; our overhead is everything but the user's migrate and test
 * commands. For comparison, the same cycle on a database made by a logical copy (create an empty
 * database, rebuild the schema, copy the rows through a client) instead of a file-copy fork.
 * The track's database holds ROWS stock records so a copy has something to copy.
 */

const RUNS = benchRuns(5);
const ROWS = Number(process.env.BENCH_ROWS ?? 50_000);
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const example = join(root, "examples/stockflow");
const say = (message: string) => {
  if (!wantsJson()) console.error(message);
};

// A real git checkout of the finished example, resolving pg/vitest/tsx through the repo's node_modules.
const checkout = mkdtempSync(join(tmpdir(), "consort-bench-cycle-"));
cpSync(example, checkout, { recursive: true, filter: (src) => !/[/\\](node_modules|junit\.xml)$/.test(src) });
symlinkSync(join(root, "node_modules"), join(checkout, "node_modules"), "dir");
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@consort.invalid", ...args], { cwd: checkout })
    .toString()
    .trim();
git("init", "-q", "-b", "f1");
git("add", "-A");
git("commit", "-q", "-m", "F1 done");
const commit = git("rev-parse", "HEAD");

const dataDir = mkdtempSync(join(tmpdir(), "consort-bench-pg-"));
// As root the server runs as the `postgres` user, who must be able to enter the folder.
chmodSync(dataDir, 0o755);
const server = await ensureLocalServer({ dataDir });
const env = { BENCH_PG_URL: server.url() };
const { config: exampleConfig } = await loadConfigFile(join(example, ".github/consort.yml"));
const database = {
  ...exampleConfig.database,
  provider: "postgres" as const,
  postgres: { urlEnv: "BENCH_PG_URL", rootDatabase: "bench_root" },
};
const config = { ...exampleConfig, database };
const provider = await createProvider(database, { env });

try {
  // The track: migrated and filled, then its frozen base retaken so forks see the rows.
  await provider.createBranch("f1-track", { from: await provider.rootBranch() });
  const trackUrl = await provider.connectionUrl("f1-track");
  execFileSync(process.execPath, ["--import", "tsx", "src/db/migrate.ts"], {
    cwd: checkout,
    env: { ...process.env, DATABASE_URL: trackUrl },
  });
  const client = new pg.Client({ connectionString: trackUrl });
  await client.connect();
  await client.query(
    "INSERT INTO stock_records (sku, location, quantity, inventory_code) SELECT 'SKU-' || i, 'LOC-' || (i % 500), i % 1000, 'CODE-' || i FROM generate_series(1, $1) AS i",
    [ROWS],
  );
  await client.end();
  const refresh = (provider as { refreshBase?: (name: string) => Promise<unknown> }).refreshBase;
  if (refresh) await refresh.call(provider, "f1-track");

  const list = JSON.parse(readFileSync(join(example, ".consort/test-list.json"), "utf8")) as {
    tests: Array<{ id: string; file: string; title: string }>;
  };
  const tests = list.tests.map(({ id, file, title }) => ({ id, file, title }));
  const files = [...new Set(tests.map((t) => t.file))];
  const request = CycleRequest.parse({
    track: "f1",
    step: "green",
    commit,
    tests: { inTurn: tests.slice(-1), earlierGreen: tests.slice(0, -1) },
    frozenTestFiles: files.map((path) => {
      const text = readFileSync(join(checkout, path), "utf8");
      return { path, sha256: hashFrozenText(text), text };
    }),
    database: { branch: "f1-track" },
  });

  async function cycles(label: string, branches: BranchProvider): Promise<CycleResult[]> {
    const results: CycleResult[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const result = await runCycle(request, { provider: branches, config, cwd: checkout });
      if (result.verdict !== "verified")
        throw new Error(`${label} cycle ${i} was refused: ${result.reasons.join("; ")}`);
      if (i > 0) results.push(result); // the first run warms caches up
      say(`${label} ${i === 0 ? "warm-up" : `run ${i}`}: ${result.timingsMs.total} ms`);
    }
    return results;
  }

  const forked = await cycles("fork", provider);
  const logical = await cycles("logical copy", logicalCopyProvider(provider, server.url, checkout));

  const pick = (results: CycleResult[], f: (r: CycleResult) => number, name: string) => summarise(name, results.map(f));
  const overhead = (r: CycleResult) => r.timingsMs.total - r.timingsMs.migrate - r.timingsMs.tests;
  const rows = [
    pick(forked, (r) => r.timingsMs.total, "cycle (file-copy fork)"),
    pick(forked, (r) => r.timingsMs.fork, "  fork"),
    pick(forked, (r) => r.timingsMs.migrate, "  migrate (user command)"),
    pick(forked, (r) => r.timingsMs.tests, "  tests (user command)"),
    pick(forked, (r) => r.timingsMs.verdict, "  verdict"),
    pick(forked, (r) => r.timingsMs.drop, "  drop"),
    pick(forked, overhead, "  our overhead"),
    pick(logical, (r) => r.timingsMs.total, "cycle (logical copy)"),
    pick(logical, (r) => r.timingsMs.fork, "  logical copy"),
  ];
  const cycleMedian = rows[0]!.median;
  const overheadMedian = rows[6]!.median;
  const logicalMedian = rows[7]!.median;
  if (!wantsJson()) {
    printTable(
      `StockFlow GREEN cycle, ${ROWS} rows on the track, median of ${RUNS} (goal: our overhead < 300 ms)`,
      rows,
      { baseline: "cycle (file-copy fork)" },
    );
  }
  printJson({
    overhead_ms_median: overheadMedian,
    cycle_ms_median: cycleMedian,
    logical_cycle_ms_median: logicalMedian,
  });
} finally {
  await provider.close();
  await stopLocalServer(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(checkout, { recursive: true, force: true });
}

/**
 * The comparison: a "branch" made by a logical copy of the track, as a tool without copy-on-write
 * branches would make it: an empty database, the schema rebuilt by the migrations, the rows copied
 * through a client. Only createBranch/connectionUrl/deleteBranch are used by a cycle.
 */
function logicalCopyProvider(inner: BranchProvider, urlFor: (db: string) => string, cwd: string): BranchProvider {
  const admin = () => new pg.Client({ connectionString: urlFor("postgres") });
  return {
    ...inner,
    kind: inner.kind,
    async createBranch(name: string, options: CreateBranchOptions = {}): Promise<DatabaseBranch> {
      const a = admin();
      await a.connect();
      await a.query(`CREATE DATABASE "${name}" TEMPLATE template0`);
      await a.end();
      execFileSync(process.execPath, ["--import", "tsx", "src/db/migrate.ts"], {
        cwd,
        env: { ...process.env, DATABASE_URL: urlFor(name) },
      });
      const source = new pg.Client({ connectionString: await inner.connectionUrl(options.from!) });
      const target = new pg.Client({ connectionString: urlFor(name) });
      await Promise.all([source.connect(), target.connect()]);
      const { rows } = await source.query<{
        id: string;
        sku: string;
        location: string;
        quantity: number;
        inventory_code: string;
        created_at: Date;
        updated_at: Date;
      }>("SELECT id, sku, location, quantity, inventory_code, created_at, updated_at FROM stock_records");
      for (let i = 0; i < rows.length; i += 5000) {
        const batch = rows.slice(i, i + 5000);
        await target.query(
          "INSERT INTO stock_records SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::timestamptz[])",
          ["id", "sku", "location", "quantity", "inventory_code", "created_at", "updated_at"].map((c) =>
            batch.map((r) => r[c as keyof typeof r]),
          ),
        );
      }
      await Promise.all([source.end(), target.end()]);
      return { name, parent: options.from, isRoot: false };
    },
    connectionUrl: async (name: string) => urlFor(name),
    async deleteBranch(name: string): Promise<void> {
      const a = admin();
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end();
    },
  };
}
