import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { benchRuns, measure, printJson, printTable, summarise, wantsJson, type Summary } from "./lib.js";
import { startLakebaseEmulator } from "./lakebase-emulator.js";
import { logicalCopy } from "./logical-copy.js";
import { LakebaseProviderSettings } from "../src/config/consort-config.js";
import { createLakebaseProvider } from "../src/substrate/lakebase/provider.js";
import { ensureLocalServer, stopLocalServer } from "../src/substrate/local-server.js";
import { baseDatabaseName } from "../src/substrate/postgres-catalog.js";
import { PostgresBranchProvider } from "../src/substrate/postgres-provider.js";

/**
 * `npm run bench:branch [-- --json] [-- --dir <folder>]`: how long a database branch takes.
 * Seeds a ~10 MB and a ~200 MB root on an embedded Postgres 18 (file_copy_method = clone), then
 * times, median of BENCH_RUNS (default 5):
 * - a throwaway fork by our provider: a rename of the warm spare made since the last fork;
 * - the spare's rebuild, which that fork starts in the background (a file copy of the frozen base).
 *   A cycle pays it: it runs beside the cycle's migrate and tests, and the action waits for it
 *   before it exits. The steady-state cost of a fork is therefore the rename plus the rebuild
 *   (one spare per fork), and that is the figure the goal and the ratio use;
 * - a fork while the spare is still being made (back-to-back cycles): a file copy beside the rebuild;
 * - a fork with no spare at all (CREATE DATABASE … STRATEGY FILE_COPY from the frozen base), the
 *   bare statement, the same copy with STRATEGY WAL_LOG, fork-plus-drop, a track fork (branch + its base);
 * - the baseline: the fastest logical copy, as pg_dump | pg_restore -j (see logical-copy.ts).
 * - a burst of 16 concurrent throwaway forks of the 200 MB root, cold (one spare) and once the spare
 *   pool has grown to the burst (the second burst), p99 of the 16;
 * - Lakebase: a fork against an emulation of the REST API whose operations take 300 ms and 3 s
 *   (bench/lakebase-emulator.ts); the row is the time the provider adds on top of its two
 *   operations (branch, then endpoint).
 * `--dir` puts the server's data on another filesystem (e.g. an XFS loop mount, where the clone is
 * a reflink and should not grow with size).
 */

const RUNS = benchRuns(5);
/** The table's rows, by what the JSON calls them. An indented row is a part of the row above it. */
const CASE = {
  rename10: "fork 10 MB (ours: rename of the warm spare)",
  spare10: "  spare rebuild 10 MB (after the fork, in the background)",
  steady10: "fork 10 MB steady state (fork + spare rebuild)",
  rename200: "fork 200 MB (ours: rename of the warm spare)",
  spare200: "  spare rebuild 200 MB (after the fork, in the background)",
  steady200: "fork 200 MB steady state (fork + spare rebuild)",
  notReady200: "fork 200 MB (ours, spare still being made)",
  noSpare200: "fork 200 MB (ours, no spare)",
  track200: "track fork 200 MB (branch + base)",
  forkDrop200: "fork + drop 200 MB (ours)",
  bare200: "bare FILE_COPY 200 MB",
  walLog200: "WAL_LOG 200 MB",
  logical10: "logical copy 10 MB",
  logical200: "logical copy 200 MB",
  burstCold: "burst of 16 forks 200 MB, cold (per fork)",
  burstWarm: "burst of 16 forks 200 MB, pool grown (per fork)",
  lakebase300: "Lakebase fork, added to 2 × 300 ms operations",
  lakebase3000: "Lakebase fork, added to 2 × 3 s operations",
} as const;

/** The time the Lakebase provider adds to a fork whose two operations take `operationMs` each. */
async function lakebaseAdded(operationMs: number, runs: number): Promise<number[]> {
  const emulator = await startLakebaseEmulator(operationMs);
  try {
    const provider = createLakebaseProvider(
      LakebaseProviderSettings.parse({ host: emulator.origin, project: "shop" }),
      { env: { DATABRICKS_TOKEN: "bench" } },
    );
    await provider.rootBranch();
    const added: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await provider.createBranch(`bench-${operationMs}-${i}`);
      added.push(performance.now() - start - 2 * operationMs);
    }
    return added;
  } finally {
    await emulator.close();
  }
}

const argDir = process.argv.indexOf("--dir");
const parentDir = argDir > 0 ? process.argv[argDir + 1]! : tmpdir();
const json = wantsJson();
const log = (message: string) => {
  if (!json) console.log(message);
  else process.stderr.write(`${message}\n`);
};

const dataDir = mkdtempSync(join(parentDir, "consort-bench-"));
chmodSync(dataDir, 0o755);
const fsType = (() => {
  try {
    return execFileSync("stat", ["-f", "-c", "%T", dataDir]).toString().trim();
  } catch {
    return "unknown";
  }
})();

async function query(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

const ITEMS = (rows: number) => `
  CREATE TABLE items (id bigint PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, note text);
  INSERT INTO items SELECT g, 'SKU-' || g, g % 1000, md5(g::text) || repeat('x', 60) FROM generate_series(1, ${rows}) g;`;

async function seed(
  provider: PostgresBranchProvider,
  adminUrl: string,
  rows: number,
): Promise<{ root: string; bytes: number }> {
  const root = await provider.rootBranch();
  const url = await provider.connectionUrl(root);
  await query(url, ITEMS(rows));
  await query(url, "VACUUM ANALYZE items");
  // A branch's own login role may not checkpoint (pg_checkpoint): the server's admin does it.
  await query(adminUrl, "CHECKPOINT");
  await provider.refreshBase(root);
  const size = await query(url, "SELECT pg_database_size(current_database())::bigint AS b");
  return { root, bytes: Number(size.rows[0].b) };
}

async function main(): Promise<void> {
  log(`data folder ${dataDir} (${fsType})`);
  const server = await ensureLocalServer({ dataDir, onProgress: log });
  const admin = server.url("postgres");
  const small = new PostgresBranchProvider({ kind: "local", adminUrl: admin, rootDatabase: "root_10mb" });
  const large = new PostgresBranchProvider({ kind: "local", adminUrl: admin, rootDatabase: "root_200mb" });
  // The same root without warm spares: every fork is a file copy.
  const cold = new PostgresBranchProvider({
    kind: "local",
    adminUrl: admin,
    rootDatabase: "root_200mb",
    warmSpares: false,
  });
  const rows: Summary[] = [];
  try {
    const method = (await query(admin, "SHOW file_copy_method")).rows[0].file_copy_method as string;
    log("seeding ~10 MB and ~200 MB roots");
    const s = await seed(small, admin, 14_000);
    const l = await seed(large, admin, 1_130_000);
    log(`roots: ${(s.bytes / 1e6).toFixed(1)} MB and ${(l.bytes / 1e6).toFixed(1)} MB; file_copy_method = ${method}`);

    let n = 0;
    const made: Array<[PostgresBranchProvider, string]> = [];
    // Between runs: drop the forks and let the spare for the next fork be made, as between cycles.
    const cleanUp = async () => {
      for (const [provider, name] of made.splice(0)) await provider.deleteBranch(name);
      await Promise.all([small.settled(), large.settled()]);
    };
    const forkWith = (provider: PostgresBranchProvider, ttl: boolean) => async () => {
      const name = `bench-${++n}`;
      await provider.createBranch(name, ttl ? { ttlSeconds: 3600 } : {});
      made.push([provider, name]);
    };

    /**
     * A throwaway fork as a cycle makes it, with the spare ready: the fork (a rename of the spare),
     * then the rebuild of the spare it starts, which the process waits for before it exits.
     */
    const forkAndRebuild = async (
      provider: PostgresBranchProvider,
      names: { fork: string; spare: string; steady: string },
    ): Promise<Summary[]> => {
      const fork: number[] = [];
      const spare: number[] = [];
      for (let i = 0; i <= RUNS; i++) {
        await cleanUp();
        const name = `bench-${++n}`;
        const start = performance.now();
        await provider.createBranch(name, { ttlSeconds: 3600 });
        const forked = performance.now();
        made.push([provider, name]);
        await provider.settled();
        if (i === 0) continue; // the first run warms caches up
        fork.push(forked - start);
        spare.push(performance.now() - forked);
      }
      return [
        summarise(names.fork, fork),
        summarise(names.spare, spare),
        summarise(
          names.steady,
          fork.map((f, i) => f + spare[i]!),
        ),
      ];
    };

    rows.push(...(await forkAndRebuild(small, { fork: CASE.rename10, spare: CASE.spare10, steady: CASE.steady10 })));
    rows.push(...(await forkAndRebuild(large, { fork: CASE.rename200, spare: CASE.spare200, steady: CASE.steady200 })));
    // Back-to-back cycles: the previous fork took the spare and its rebuild is still running.
    rows.push(
      await measure(CASE.notReady200, forkWith(large, true), {
        runs: RUNS,
        before: async () => {
          await cleanUp();
          await forkWith(large, true)();
        },
      }),
    );
    rows.push(await measure(CASE.noSpare200, forkWith(cold, true), { runs: RUNS, before: cleanUp }));

    // A burst of 16 concurrent forks: the first meets one spare; the pool then grows to the burst.
    let burstErrors = 0;
    const burst = async (): Promise<number[]> => {
      const times = await Promise.all(
        Array.from({ length: 16 }, async () => {
          const start = performance.now();
          try {
            await forkWith(large, true)();
          } catch (error) {
            burstErrors++;
            log(`burst fork failed: ${(error as Error).message}`);
          }
          return performance.now() - start;
        }),
      );
      await cleanUp();
      return times;
    };
    log("burst of 16 forks (cold, then with the pool grown)");
    await cleanUp();
    rows.push(summarise(CASE.burstCold, await burst()));
    rows.push(summarise(CASE.burstWarm, await burst()));
    const p99 = (name: string) => {
      const samples = [...rows.find((r) => r.name === name)!.samples].sort((a, b) => a - b);
      return samples[Math.min(samples.length - 1, Math.ceil(samples.length * 0.99) - 1)]!;
    };
    rows.push(await measure(CASE.track200, forkWith(large, false), { runs: RUNS, before: cleanUp }));
    rows.push(
      await measure(
        CASE.forkDrop200,
        async () => {
          const name = `bench-${++n}`;
          await large.createBranch(name, { ttlSeconds: 3600 });
          await large.deleteBranch(name);
        },
        { runs: RUNS, before: cleanUp },
      ),
    );
    await cleanUp();

    const walNames: string[] = [];
    const dropWal = async () => {
      for (const name of walNames.splice(0)) await query(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    };
    // The bare statement our fork runs, to show what the provider's bookkeeping adds.
    rows.push(
      await measure(
        CASE.bare200,
        async () => {
          const name = `bench_raw_${++n}`;
          walNames.push(name);
          await query(
            admin,
            `CREATE DATABASE "${name}" TEMPLATE "${baseDatabaseName("root_200mb")}" STRATEGY FILE_COPY`,
          );
        },
        { runs: RUNS, before: dropWal },
      ),
    );
    await dropWal();
    rows.push(
      await measure(
        CASE.walLog200,
        async () => {
          const name = `bench_wal_${++n}`;
          walNames.push(name);
          await query(admin, `CREATE DATABASE "${name}" TEMPLATE "${baseDatabaseName("root_200mb")}" STRATEGY WAL_LOG`);
        },
        { runs: RUNS, before: dropWal },
      ),
    );
    await dropWal();

    const logical = (label: string, root: string) =>
      measure(
        label,
        async () => {
          const name = `bench_logical_${++n}`;
          walNames.push(name);
          const url = new URL(admin);
          url.pathname = `/${root}`;
          await logicalCopy(admin, url.toString(), name);
        },
        { runs: RUNS, warmup: 0, before: dropWal },
      );
    rows.push(await logical(CASE.logical10, "root_10mb"));
    rows.push(await logical(CASE.logical200, "root_200mb"));
    await dropWal();

    log("Lakebase forks against the API emulation (300 ms and 3 s operations)");
    rows.push(summarise(CASE.lakebase300, await lakebaseAdded(300, RUNS)));
    rows.push(summarise(CASE.lakebase3000, await lakebaseAdded(3000, Math.min(RUNS, 3))));

    const median = (name: string) => {
      const row = rows.find((r) => r.name === name);
      if (!row) throw new Error(`no row named "${name}"`);
      return row.median;
    };
    printTable(`database branch forks on ${fsType} (file_copy_method = ${method}), ms`, rows, {
      baseline: CASE.logical200,
    });
    const rename200 = median(CASE.rename200);
    const steady200 = median(CASE.steady200);
    const logical200 = median(CASE.logical200);
    if (!json) {
      console.log(
        `\nThe rename alone (${rename200.toFixed(1)} ms, ${(logical200 / rename200).toFixed(0)}× a logical copy) leaves out the spare's rebuild, which every fork starts and a cycle waits for; the steady state counts it.` +
          `\ngoal: a burst of 16 forks of 200 MB with p99 under 500 ms once the pool has grown (${p99(CASE.burstWarm).toFixed(0)} ms; cold ${p99(CASE.burstCold).toFixed(0)} ms, ${burstErrors} errors)` +
          `\ngoal: Lakebase adds under 250 ms to a fork (${median(CASE.lakebase300).toFixed(0)} ms at 300 ms operations, ${median(CASE.lakebase3000).toFixed(0)} ms at 3 s)` +
          `\ngoal: fork of 200 MB under 150 ms median in the steady state (${steady200.toFixed(0)} ms) and ≥ 20× faster than a logical copy (${(logical200 / steady200).toFixed(1)}×)`,
      );
    }
    printJson({
      fs: fsType,
      file_copy_method: method,
      runs: RUNS,
      size_mb_10mb: Math.round(s.bytes / 1e5) / 10,
      size_mb_200mb: Math.round(l.bytes / 1e5) / 10,
      fork_ms_10mb: round(median(CASE.rename10)),
      fork_ms_10mb_steady: round(median(CASE.steady10)),
      spare_ms_10mb: round(median(CASE.spare10)),
      fork_ms_200mb: round(rename200),
      fork_ms_200mb_steady: round(steady200),
      spare_ms_200mb: round(median(CASE.spare200)),
      fork_spare_not_ready_ms_200mb: round(median(CASE.notReady200)),
      fork_no_spare_ms_200mb: round(median(CASE.noSpare200)),
      track_fork_ms_200mb: round(median(CASE.track200)),
      fork_drop_ms_200mb: round(median(CASE.forkDrop200)),
      logical_ms_10mb: round(median(CASE.logical10)),
      logical_ms_200mb: round(logical200),
      walog_ms_200mb: round(median(CASE.walLog200)),
      bare_file_copy_ms_200mb: round(median(CASE.bare200)),
      ratio_logical_200mb: round(logical200 / steady200),
      ratio_logical_200mb_rename: round(logical200 / rename200),
      burst16_fork_ms_p99: round(p99(CASE.burstWarm)),
      burst16_fork_ms_p99_cold: round(p99(CASE.burstCold)),
      burst16_errors: burstErrors,
      lakebase_added_ms_300: round(median(CASE.lakebase300)),
      lakebase_added_ms_3000: round(median(CASE.lakebase3000)),
    });
  } finally {
    await small.close();
    await large.close();
    await cold.close();
    await stopLocalServer(dataDir).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
