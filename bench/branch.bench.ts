import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import { benchRuns, measure, printJson, printTable, wantsJson, type Summary } from "./lib.js";
import { ensureLocalServer, stopLocalServer } from "../src/substrate/local-server.js";
import { PostgresBranchProvider, baseDatabaseName } from "../src/substrate/postgres-provider.js";

/**
 * `npm run bench:branch [-- --json] [-- --dir <folder>]`: how long a database branch takes.
 * Seeds a ~10 MB and a ~200 MB root on an embedded Postgres 18 (file_copy_method = clone), then
 * times, median of 5: a throwaway fork by our provider (taking the warm spare made since the last
 * fork, as between cycles), the same without a spare (CREATE DATABASE … STRATEGY FILE_COPY from the
 * frozen base), the bare statement, the same copy with STRATEGY WAL_LOG, a logical copy (schema, COPY out, COPY in,
 * index build: what pg_dump | pg_restore does), fork-plus-drop, and a track fork (branch + its base).
 * `--dir` puts the server's data on another filesystem (e.g. an XFS loop mount, where the clone is
 * a reflink and should not grow with size).
 */

const RUNS = benchRuns(5);
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

async function seed(provider: PostgresBranchProvider, rows: number): Promise<{ root: string; bytes: number }> {
  const root = await provider.rootBranch();
  const url = await provider.connectionUrl(root);
  await query(url, ITEMS(rows));
  await query(url, "VACUUM ANALYZE items");
  await query(url, "CHECKPOINT");
  await provider.refreshBase(root);
  const size = await query(url, "SELECT pg_database_size(current_database())::bigint AS b");
  return { root, bytes: Number(size.rows[0].b) };
}

/** What a user without us does: make the database, copy each table out and in, build the indexes. */
async function logicalCopy(adminUrl: string, sourceUrl: string, target: string): Promise<void> {
  await query(adminUrl, `CREATE DATABASE "${target}"`);
  const targetUrl = new URL(adminUrl);
  targetUrl.pathname = `/${target}`;
  const source = new pg.Client({ connectionString: sourceUrl });
  const sink = new pg.Client({ connectionString: targetUrl.toString() });
  await Promise.all([source.connect(), sink.connect()]);
  try {
    await sink.query("CREATE TABLE items (id bigint NOT NULL, sku text NOT NULL, quantity int NOT NULL, note text)");
    await pipeline(source.query(copyTo("COPY items TO STDOUT")), sink.query(copyFrom("COPY items FROM STDIN")));
    await sink.query("ALTER TABLE items ADD PRIMARY KEY (id)");
  } finally {
    await Promise.all([source.end(), sink.end()]);
  }
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
    const s = await seed(small, 14_000);
    const l = await seed(large, 1_130_000);
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

    rows.push(await measure("fork 10 MB (ours)", forkWith(small, true), { runs: RUNS, before: cleanUp }));
    rows.push(await measure("fork 200 MB (ours)", forkWith(large, true), { runs: RUNS, before: cleanUp }));
    rows.push(await measure("fork 200 MB (ours, no spare)", forkWith(cold, true), { runs: RUNS, before: cleanUp }));
    rows.push(
      await measure("track fork 200 MB (branch + base)", forkWith(large, false), { runs: RUNS, before: cleanUp }),
    );
    rows.push(
      await measure(
        "fork + drop 200 MB (ours)",
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
        "bare FILE_COPY 200 MB",
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
        "WAL_LOG 200 MB",
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
    rows.push(await logical("logical copy 10 MB", "root_10mb"));
    rows.push(await logical("logical copy 200 MB", "root_200mb"));
    await dropWal();

    const median = (name: string) => rows.find((r) => r.name === name)!.median;
    printTable(`database branch forks on ${fsType} (file_copy_method = ${method}), ms`, rows, {
      baseline: "logical copy 200 MB",
    });
    const fork200 = median("fork 200 MB (ours)");
    const logical200 = median("logical copy 200 MB");
    if (!json) {
      console.log(
        `\ngoal: fork of 200 MB under 150 ms median (${fork200.toFixed(0)} ms) and ≥ 20× faster than a logical copy (${(logical200 / fork200).toFixed(1)}×)`,
      );
    }
    printJson({
      fs: fsType,
      file_copy_method: method,
      size_mb_10mb: Math.round(s.bytes / 1e5) / 10,
      size_mb_200mb: Math.round(l.bytes / 1e5) / 10,
      fork_ms_10mb: round(median("fork 10 MB (ours)")),
      fork_ms_200mb: round(fork200),
      fork_no_spare_ms_200mb: round(median("fork 200 MB (ours, no spare)")),
      track_fork_ms_200mb: round(median("track fork 200 MB (branch + base)")),
      fork_drop_ms_200mb: round(median("fork + drop 200 MB (ours)")),
      logical_ms_10mb: round(median("logical copy 10 MB")),
      logical_ms_200mb: round(logical200),
      walog_ms_200mb: round(median("WAL_LOG 200 MB")),
      bare_file_copy_ms_200mb: round(median("bare FILE_COPY 200 MB")),
      ratio_logical_200mb: round(logical200 / fork200),
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
