import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { readCheckoutConfig } from "../src/config/load.js";
import { CycleRequest } from "../src/contracts/cycle-request.js";
import type { CycleResult } from "../src/contracts/cycle-result.js";
import { prepareConfinement } from "../src/cycle/confine.js";
import { runCycle } from "../src/cycle/run.js";
import { measureMutation } from "../src/deploy/mutation.js";
import { hashFrozenText } from "../src/gates/hash.js";
import { ensureLocalServer, stopLocalServer } from "../src/substrate/local-server.js";
import { PostgresBranchProvider } from "../src/substrate/postgres-provider.js";
import type { BranchProvider, CreateBranchOptions, DatabaseBranch } from "../src/substrate/provider.js";
import { measureBigReport } from "./big-report.js";
import { benchRuns, printJson, printTable, summarise, wantsJson } from "./lib.js";
import { logicalCopy } from "./logical-copy.js";

/**
 * `npm run bench:cycle`: a GREEN cycle of StockFlow's T8 on the finished example, split into fork,
 * migrate, tests, verdict and drop, three ways, taking turns so a busy machine slows each alike:
 * - as shipped: the fork renames the track's warm spare and starts its rebuild, which runs beside
 *   the user's migrate and tests; the action waits for it before it exits, so the cycle ends then;
 * - with no spare: the fork is a file copy and nothing else of ours runs beside the user's commands;
 * - on a logical copy, the baseline: the fastest a tool without branches can do (a dump and restore
 *   with COPY, see logical-copy.ts), then the same migrate, tests and verdict.
 * Our overhead is the cycle's wall time minus what the user's commands take when they run alone
 * (the median with no spare), so the spare's rebuild, and whatever it slows the commands by, is
 * charged to us. The track's database holds BENCH_ROWS stock records so a copy has something to copy.
 * First, the big report (big-report.ts): `big_report_ms` and `big_report_mb`; `--big-report-only`
 * stops after it.
 */

const RUNS = benchRuns(5);
/** git's empty tree: as a merge base, every line of the example is the feature's. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const ROWS = Number(process.env.BENCH_ROWS ?? 50_000);
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const example = join(root, "examples/stockflow");
const say = (message: string) => {
  if (!wantsJson()) console.error(message);
};

// A big report first, before our Postgres starts: ~50 MB, ~200,000 test cases, read and judged
// with 100 tests looked up, each run in a process of its own whose peak RSS is the reader's alone.
say("reading and judging the big report…");
const big = measureBigReport(RUNS);
const bigMs = summarise("big report: read and judge 100 tests", big.ms);
const bigJson = {
  big_report_ms: Math.round(bigMs.median),
  big_report_mb: Math.round(big.maxRssMb),
  big_report_testcases: big.testcases,
  big_report_file_mb: Math.round(big.reportMb),
};
if (!wantsJson()) {
  printTable(`a ${big.reportMb.toFixed(1)} MB vitest report of ${big.testcases} test cases, ${RUNS} runs`, [bigMs]);
  console.log(
    `goal: < 3000 ms and < 500 MB: ${bigJson.big_report_ms} ms median, ${bigJson.big_report_mb} MB peak RSS (the largest of the runs)`,
  );
}
if (process.argv.includes("--big-report-only")) {
  printJson({ runs: RUNS, ...bigJson });
  process.exit(0);
}

// A real git checkout of the finished example, resolving pg/vitest/tsx through the repo's node_modules.
const checkout = mkdtempSync(join(tmpdir(), "consort-bench-cycle-"));
cpSync(example, checkout, { recursive: true, filter: (src) => !/[/\\](node_modules|junit\.xml)$/.test(src) });
symlinkSync(join(root, "node_modules"), join(checkout, "node_modules"), "dir");
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@consort.invalid", ...args], { cwd: checkout })
    .toString()
    .trim();
git("init", "-q", "-b", "f1");
// As on a runner, where npm ci installs node_modules beside the commit: never committed. (The
// example's `node_modules/` pattern does not match this symlink; committed, it made every confined
// cycle copy the install's 400 links instead of layering it, which no real checkout does.)
writeFileSync(join(checkout, ".git", "info", "exclude"), "node_modules\n");
git("add", "-A");
git("commit", "-q", "-m", "F1 done");
const commit = git("rev-parse", "HEAD");

const dataDir = mkdtempSync(join(tmpdir(), "consort-bench-pg-"));
// As root the server runs as the `postgres` user, who must be able to enter the folder.
chmodSync(dataDir, 0o755);
const server = await ensureLocalServer({ dataDir, throwaway: true });
const { config } = readCheckoutConfig(example);
// The example's local provider, on this run's own server: warm spares on, as shipped.
const provider = new PostgresBranchProvider({
  kind: "local",
  adminUrl: server.url("postgres"),
  rootDatabase: "bench_root",
});
// The same root and track without warm spares: every fork is a file copy.
const noSpare = new PostgresBranchProvider({
  kind: "local",
  adminUrl: server.url("postgres"),
  rootDatabase: "bench_root",
  warmSpares: false,
});

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
  await provider.refreshBase("f1-track");

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
    frozenTestFiles: files.map((path) => ({
      path,
      sha256: hashFrozenText(readFileSync(join(checkout, path), "utf8")),
      commit,
    })),
    database: { branch: "f1-track" },
  });

  await provider.settled(); // the track's spare, as a cycle finds it

  // Confined as on a runner: as root here (a job gets there through sudo), its own checkout, which
  // each cycle copies for a throwaway user of its own (made, and deleted with its folder, per cycle).
  const confinement = await prepareConfinement(process.env.BENCH_CONFINED_USER ?? "consort-bench");
  if (!confinement.confined) say(`no confined column: ${confinement.reason}`);
  const confinedCheckout = `${checkout}-confined`;
  cpSync(checkout, confinedCheckout, { recursive: true, verbatimSymlinks: true });
  rmSync(join(confinedCheckout, "node_modules"));
  mkdirSync(join(confinedCheckout, "node_modules"));
  for (const name of readdirSync(join(root, "node_modules")))
    if (!name.startsWith(".vite"))
      symlinkSync(join(root, "node_modules", name), join(confinedCheckout, "node_modules", name));

  const cycle = async (
    label: string,
    branches: BranchProvider,
    round: number,
    confined = false,
  ): Promise<CycleResult> => {
    const result = await runCycle(request, {
      provider: branches,
      config,
      cwd: confined ? confinedCheckout : checkout,
      ...(confined ? { confinement } : {}),
    });
    if (result.verdict !== "verified")
      throw new Error(`${label} cycle ${round} was refused: ${result.reasons.join("; ")}`);
    return result;
  };
  const logicalProvider = logicalCopyProvider(provider, server.url);
  const shipped: Array<{ result: CycleResult; spareWaitMs: number }> = [];
  const confinedRuns: Array<{ result: CycleResult; spareWaitMs: number }> = [];
  const bare: CycleResult[] = [];
  const logical: CycleResult[] = [];
  for (let round = 0; round <= RUNS; round++) {
    const a = await cycle("as shipped", provider, round);
    const waitStart = performance.now();
    await provider.settled();
    const spareWaitMs = performance.now() - waitStart;
    const b = await cycle("no spare", noSpare, round);
    const c = await cycle("logical copy", logicalProvider, round);
    if (confinement.confined) {
      const d = await cycle("confined", provider, round, true);
      const confinedWait = performance.now();
      await provider.settled();
      if (round > 0) confinedRuns.push({ result: d, spareWaitMs: performance.now() - confinedWait });
    }
    say(
      `${round === 0 ? "warm-up" : `round ${round}`}: as shipped ${a.timingsMs.total} + ${spareWaitMs.toFixed(0)} ms, no spare ${b.timingsMs.total} ms, logical copy ${c.timingsMs.total} ms`,
    );
    if (round === 0) continue; // the first round warms caches up
    shipped.push({ result: a, spareWaitMs });
    bare.push(b);
    logical.push(c);
  }

  const user = (r: CycleResult) => r.timingsMs.migrate + r.timingsMs.tests;
  const userAlone = summarise("  migrate + tests (user commands, run alone)", bare.map(user));
  const wall = ({ result, spareWaitMs }: (typeof shipped)[number]) => result.timingsMs.total + spareWaitMs;
  const timing = (name: keyof CycleResult["timingsMs"]) => (r: CycleResult) => r.timingsMs[name] ?? 0;
  const of = <T>(items: T[], f: (item: T) => number, name: string) => summarise(name, items.map(f));
  const results = shipped.map((s) => s.result);
  const rows = [
    of(shipped, wall, "cycle as shipped (warm spare), until the action can exit"),
    of(results, timing("fork"), "  fork (rename of the warm spare)"),
    of(results, timing("migrate"), "  migrate (user command, beside the spare's rebuild)"),
    of(results, timing("tests"), "  tests (user command, beside the spare's rebuild)"),
    of(results, timing("verdict"), "  verdict"),
    of(results, timing("drop"), "  drop"),
    of(shipped, (s) => s.spareWaitMs, "  waiting for the spare's rebuild after the cycle"),
    of(shipped, (s) => wall(s) - userAlone.median, "  our overhead (wall − the user's commands alone)"),
    ...(confinedRuns.length > 0
      ? [
          of(confinedRuns, wall, "cycle as shipped, confined, until the action can exit"),
          of(
            confinedRuns,
            (r) => r.result.timingsMs.confine ?? 0,
            "  confinement (throwaway user, checkout copy, ending processes, removal)",
          ),
          of(
            confinedRuns,
            (r) => wall(r) - userAlone.median,
            "  our overhead, confined (wall − the user's commands alone)",
          ),
        ]
      : []),
    of(bare, timing("total"), "cycle with no spare (fork = file copy)"),
    of(bare, timing("fork"), "  fork (file copy)"),
    userAlone,
    of(bare, (r) => r.timingsMs.total - user(r), "  our overhead (total − the user's commands)"),
    of(logical, timing("total"), "cycle on a logical copy (dump and restore)"),
    of(logical, timing("fork"), "  logical copy"),
    of(logical, (r) => r.timingsMs.total - user(r), "  overhead (total − the user's commands)"),
  ];
  const median = (name: string) => {
    const row = rows.find((r) => r.name === name);
    if (!row) throw new Error(`no row named "${name}"`);
    return row.median;
  };
  const confinedMedian = (name: string) => (confinedRuns.length > 0 ? Math.round(median(name)) : null);
  const overhead = median("  our overhead (wall − the user's commands alone)");
  if (!wantsJson()) {
    printTable(`StockFlow GREEN cycle, ${ROWS} rows on the track, ${RUNS} rounds`, rows, {
      baseline: "cycle on a logical copy (dump and restore)",
    });
    console.log(
      `\ngoal: our overhead < 300 ms, counting the spare's rebuild: ${overhead.toFixed(0)} ms median` +
        ` (the user's commands take ${userAlone.median.toFixed(0)} ms alone; a cycle on a logical copy adds ${median("  overhead (total − the user's commands)").toFixed(0)} ms)`,
    );
    if (confinedRuns.length > 0)
      console.log(
        `confined, as on a runner: our overhead ${confinedMedian("  our overhead, confined (wall − the user's commands alone)")} ms median, of which confinement itself ${confinedMedian("  confinement (throwaway user, checkout copy, ending processes, removal)")} ms`,
      );
  }
  // The release's mutation measurement, once (it is minutes, not milliseconds): the example's tests
  // over its code, all of it counted as the feature's (its merge base is the empty tree), on a
  // throwaway fork of the track, confined when the cycles were.
  say("measuring the mutation score of the example's tests over its code, as the release does…");
  const mutationState = mkdtempSync(join(tmpdir(), "consort-bench-mutation-"));
  await provider.createBranch("f1-mutants", { from: "f1-track" });
  const mutationStarted = performance.now();
  const mutation = await measureMutation(
    { track: "bench-f1", base: EMPTY_TREE, databaseUrl: await provider.connectionUrl("f1-mutants") },
    {
      config,
      cwd: confinement.confined ? confinedCheckout : checkout,
      confinement,
      env: { ...process.env, CONSORT_MUTATION_TOOLS: root, CONSORT_MUTATION_STATE: mutationState },
    },
  );
  const mutationMs = Math.round(performance.now() - mutationStarted);
  await provider.deleteBranch("f1-mutants");
  rmSync(mutationState, { recursive: true, force: true });
  const mutants = Object.values(mutation.counts).reduce((a, b) => a + b, 0);
  if (!wantsJson())
    console.log(
      `mutation measurement (StrykerJS, ${mutation.runner ?? "no"} runner, ${mutation.confinement?.confined ? "confined" : "unconfined"}): ${mutationMs} ms for ${mutants} mutants, ${mutation.outcome}, score ${mutation.score ?? "none"}%${mutation.reason ? ` (${mutation.reason})` : ""}`,
    );
  printJson({
    runs: RUNS,
    mutation_ms_example: mutationMs,
    mutation_mutants_example: mutants,
    mutation_score_example: mutation.score,
    mutation_outcome_example: mutation.outcome,
    overhead_ms_median: Math.round(overhead),
    cycle_ms_median: Math.round(median("cycle as shipped (warm spare), until the action can exit")),
    spare_wait_ms_median: Math.round(median("  waiting for the spare's rebuild after the cycle")),
    user_commands_ms_median: Math.round(userAlone.median),
    no_spare_cycle_ms_median: Math.round(median("cycle with no spare (fork = file copy)")),
    no_spare_overhead_ms_median: Math.round(median("  our overhead (total − the user's commands)")),
    logical_cycle_ms_median: Math.round(median("cycle on a logical copy (dump and restore)")),
    logical_copy_ms_median: Math.round(median("  logical copy")),
    confined_overhead_ms_median: confinedMedian("  our overhead, confined (wall − the user's commands alone)"),
    confine_ms_median: confinedMedian("  confinement (throwaway user, checkout copy, ending processes, removal)"),
    ...bigJson,
  });
} finally {
  await noSpare.close();
  await provider.close();
  await stopLocalServer(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(checkout, { recursive: true, force: true });
  rmSync(`${checkout}-confined`, { recursive: true, force: true });
}

/**
 * The baseline: a "branch" made by the fastest logical copy of the track, as a tool without
 * copy-on-write branches would make it. Only createBranch/connectionUrl/deleteBranch are used by a cycle.
 */
function logicalCopyProvider(inner: BranchProvider, urlFor: (db: string) => string): BranchProvider {
  return {
    ...inner,
    kind: inner.kind,
    async createBranch(name: string, options: CreateBranchOptions = {}): Promise<DatabaseBranch> {
      await logicalCopy(urlFor("postgres"), await inner.connectionUrl(options.from!), name);
      return { name, parent: options.from, isRoot: false };
    },
    connectionUrl: async (name: string) => urlFor(name),
    async deleteBranch(name: string): Promise<void> {
      const admin = new pg.Client({ connectionString: urlFor("postgres") });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
