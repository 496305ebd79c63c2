import { readFileSync } from "node:fs";
import { ARTIFACT_PATHS } from "../src/artifacts/paths.js";
import { defaultConfig, type RoleName } from "../src/config/consort-config.js";
import { projectState } from "../src/engine/projection.js";
import { gitBlobId } from "../src/gates/hash.js";
import { recordRequestDigests } from "../src/engine/requests.js";
import { createTrack, restoreSnapshot, transition } from "../src/orchestrator/index.js";
import type { PushEvent, PushedCommit, TrackEvent, TrackSnapshot } from "../src/orchestrator/types.js";
import {
  compact,
  emptyTrackState,
  expand,
  openStateFile,
  sealState,
  serialiseStateFile,
  storedFormOf,
  unsealed,
  type TrackState,
} from "../src/state/index.js";
import { LONG_TRACK_TESTS_PER_UNIT, TrackSim } from "../test/orchestrator/helpers/track.js";
import { benchRuns, measure, printJson, printTable, summarise, tailEntry, wantsJson, type Summary } from "./lib.js";

/**
 * `npm run bench:decide`: how long the pure machine takes to decide a push of 100 commits: classify
 * every commit (trailer, turn, owned paths, frozen files incl. the append-only test-file rule) and
 * compute the next snapshot with its effects. StockFlow F1, track at GREEN for T2, so a frozen test
 * file is in play. With --json the last line is { decide_us_median, decide_us_p99 } (decide_us_p95 or
 * decide_us_max when BENCH_RUNS is too small for a p99: see bench/lib.ts).
 */

const config = defaultConfig();
const fixture = (name: string) =>
  readFileSync(new URL(`../test/orchestrator/fixtures/stockflow/${name}`, import.meta.url), "utf8");
const at = (n: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, 0) + n * 60_000).toISOString();
let counter = 0;
const sha = () => `b${(++counter).toString(16).padStart(6, "0")}${"0".repeat(33)}`;

function commit(role: RoleName, files: Record<string, string>): PushedCommit {
  return {
    sha: sha(),
    authorLogin: `${role}-bot[bot]`,
    message: `${role} step\n\nWhy this change.\n\nConsort-Role: ${role}\n`,
    changes: Object.keys(files).map((path) => ({ path, status: "modified" as const })),
    files,
    // As the handler reads it: the root's package.json before the commit (the bench's base has none).
    before: { "package.json": null },
  };
}

function step(snapshot: TrackSnapshot, event: TrackEvent): TrackSnapshot {
  const result = transition(snapshot, event, config);
  if (result.rejection) throw new Error(`setup step refused: ${result.rejection.reasons.join("; ")}`);
  return result.snapshot;
}

function push(snapshot: TrackSnapshot, commits: PushedCommit[]): PushEvent {
  return {
    type: "push",
    at: at(++counter),
    before: snapshot.context.head,
    after: commits.at(-1)!.sha,
    forced: false,
    commits,
  };
}

function approve(snapshot: TrackSnapshot, gate: "design" | "test-list"): TrackEvent {
  return {
    type: "gate.approved",
    at: at(++counter),
    gate,
    manifestHash: snapshot.context.gates[gate].pendingHash!,
    approver: "lead",
    reviewId: counter,
    commit: snapshot.context.head,
  };
}

function report(snapshot: TrackSnapshot): TrackEvent {
  const pending = snapshot.context.pendingDispatch!;
  return {
    type: "cycle.reported",
    at: at(++counter),
    dispatchId: pending.dispatchId,
    runId: counter,
    step: pending.step as "red" | "green",
    commit: pending.commit,
    outcome: "valid",
    reasons: [],
    evidence: { summary: "ok" },
  };
}

/** StockFlow through the design lane, both gates, T1 complete and T2's RED verified: at GREEN for T2. */
function trackAtGreen(): TrackSnapshot {
  let s = createTrack(
    {
      trackId: "acme/stockflow#1",
      branch: "feature/f1",
      baseBranch: "main",
      head: sha(),
      databaseBranch: "feature-f1",
      parentDatabaseBranch: "main",
      at: at(0),
    },
    config,
  ).snapshot;
  const design: Array<[RoleName, string, string]> = [
    ["product-owner", ARTIFACT_PATHS.spec, "spec.json"],
    ["spec-author", ARTIFACT_PATHS.spec, "spec.json"],
    ["architect", ARTIFACT_PATHS.architecture, "architecture.json"],
    ["dba", ARTIFACT_PATHS.dbDesign, "db-design.json"],
    ["ux-designer", ARTIFACT_PATHS.ux, "ux.json"],
  ];
  for (const [role, path, file] of design) s = step(s, push(s, [commit(role, { [path]: fixture(file) })]));
  s = step(s, approve(s, "design"));
  s = step(s, push(s, [commit("test-strategist", { [ARTIFACT_PATHS.testList]: fixture("test-list.json") })]));
  s = step(s, approve(s, "test-list"));
  let testFile = "";
  for (const id of ["T1", "T2"]) {
    testFile += `it(${JSON.stringify(id)}, () => { expect(fileStock()).toEqual(expected); });\n`;
    s = step(s, push(s, [commit("navigator", { "test/stock.test.ts": testFile })]));
    s = step(s, report(s));
    if (id === "T2") break;
    s = step(s, push(s, [commit("driver", { "src/services/stock.ts": "export {};\n" })]));
    s = step(s, report(s));
    s = step(
      s,
      push(s, [
        commit("navigator", {
          ".consort/reviews/T1.json": JSON.stringify({ unit: "T1", verdict: "accept", notes: ["ok"] }),
        }),
      ]),
    );
  }
  if (s.stage !== "green") throw new Error(`setup ended at ${s.stage}`);
  return s;
}

const snapshot = trackAtGreen();
const driverPush = (n: number) =>
  push(
    snapshot,
    Array.from({ length: n }, (_, i) =>
      commit("driver", {
        "src/services/stock.ts": `export const version = ${i};\n`,
        "src/routes/stock.ts": `export const route = ${i};\n`,
        [`migrations/${String(i).padStart(4, "0")}_step.sql`]: `alter table stock_records add column c${i} text;\n`,
      }),
    ),
  );
const hundred = driverPush(100);
const one = driverPush(1);
// A push of 100 where the last commit edits the frozen test: every commit is still classified.
const rejected = driverPush(100);
rejected.commits[99] = {
  ...rejected.commits[99]!,
  changes: [...rejected.commits[99]!.changes, { path: "test/stock.test.ts", status: "modified" }],
  files: { ...rejected.commits[99]!.files, "test/stock.test.ts": "it.skip('T1', () => {});\n" },
};

const sanity = transition(snapshot, hundred, config);
if (sanity.rejection || sanity.snapshot.stage !== "green-verify")
  throw new Error(`the 100-commit push should be accepted: ${sanity.rejection?.reasons.join("; ")}`);
if (!transition(snapshot, rejected, config).rejection)
  throw new Error("the push touching a frozen test should be rejected");

/**
 * The process's CPU time of each run of `fn` (µs, every thread: the collector's too), beside the wall
 * time `measure` takes: on a shared machine the wall time's tail is mostly other processes' turns.
 */
function withCpu(fn: () => unknown): { fn: () => unknown; cpu: number[] } {
  const cpu: number[] = [];
  return {
    cpu,
    fn: () => {
      const start = process.cpuUsage();
      fn();
      const spent = process.cpuUsage(start);
      cpu.push(spent.user + spent.system);
    },
  };
}
const hundredCpu = withCpu(() => transition(snapshot, hundred, config));

const runs = benchRuns(300);
const rows = [
  await measure("push of 1 commit", () => transition(snapshot, one, config), { runs, warmup: 30, unit: "us" }),
  await measure("push of 100 commits", hundredCpu.fn, { runs, warmup: 30, unit: "us" }),
  await measure("push of 100, last one rejected", () => transition(snapshot, rejected, config), {
    runs,
    warmup: 30,
    unit: "us",
  }),
];
printTable("decide: classify a push and compute the next snapshot (µs)", rows, {
  unit: "us",
  baseline: "push of 1 commit",
});

/**
 * A long track: one step early (unit 1) and late (unit 50) in a track of 500 tests, ten tests a
 * unit over 25 test files (TrackSim.longTrack, as test/security/dispatch-size.test.ts drives it).
 * The app runs one `transition` per webhook delivery and GitHub gives a delivery 10 seconds, so a
 * step late in a long track must cost what an early one does. Each position is measured on the
 * navigator's RED push (classified against every frozen test file) and on what the app does around
 * it per delivery: open the signed state file (parse, verify the seal, schema) and put back the
 * texts it refers to (held by the process, as a warm replica holds them), restore the snapshot,
 * decide, project the state, compact, seal and serialise it.
 */
const LONG_TESTS = 500;
const STATE_KEY = "bench-state-key-0123456789abcdef0123456789";

/** A measured case: `before` runs ahead of each run, unmeasured. */
interface Case {
  run: () => unknown;
  before?: () => unknown;
}
const CASES = {
  decide: "decide the RED push",
  restore: "restore the snapshot",
  open: "open the state file and put its texts back",
  seal: "compact, seal and serialise the state file",
  delivery: "the delivery: open, restore, decide, seal",
} as const;
type CaseName = keyof typeof CASES;

/** The state file the app writes for a snapshot after `previous` (the stored state it replaces, with its text), and what it writes with it. */
function written(snapshot: TrackSnapshot, previous: { state: TrackState; text: string } | undefined) {
  const base =
    previous?.state ??
    emptyTrackState({
      trackId: "f1-stock",
      repository: "acme/stockflow",
      branch: snapshot.context.branch,
      snapshot,
      now: new Date(at(0)),
    });
  const expanded = previous ? expand(previous.state, texts).state : base;
  const compacted = compact(
    projectState(expanded, snapshot),
    // As the store compacts: against the version read, named by its blob.
    previous
      ? { stored: storedFormOf(previous.state), loaded: undefined, blob: gitBlobId(previous.text) }
      : { stored: undefined, loaded: undefined },
    snapshot.context.head,
  );
  for (const [blob, text] of compacted.texts) texts.set(blob, text);
  const text = serialiseStateFile(sealState(compacted.state, STATE_KEY));
  const bytes = Buffer.byteLength(text) + compacted.records.reduce((n, r) => n + Buffer.byteLength(r.text), 0);
  return {
    state: unsealed(openStateFile(text, STATE_KEY, where)),
    text,
    bytes,
    writes: compacted.records.length > 0 ? 3 : 1,
  };
}
/** The texts the process holds, by blob id, as a replica that wrote the track's last state does. */
const texts = new Map<string, string>();
const where = { trackId: "f1-stock", path: "tracks/f1-stock.json", repository: "acme/stockflow" };

/** What one delivery of the unit's RED push costs at the sim's position, and the state file's size there. */
function position(sim: TrackSim, stored: TrackState): { cases: Record<CaseName, Case>; stateFileBytes: number } {
  const snapshot = sim.snapshot;
  const commit = sim.redCommit();
  const event: PushEvent = {
    type: "push",
    at: at(++counter),
    before: snapshot.context.head,
    after: commit.sha,
    forced: false,
    commits: [commit],
  };
  const text = serialiseStateFile(sealState(stored, STATE_KEY));
  const basis = { stored: storedFormOf(stored), loaded: undefined, blob: gitBlobId(text) };
  const state = expand(stored, texts).state;
  const snapshotJson: unknown = JSON.parse(JSON.stringify(state.snapshot));
  const sanity = transition(snapshot, event, sim.config);
  if (sanity.rejection || sanity.snapshot.stage !== "red-verify")
    throw new Error(`the RED push should be accepted: ${sanity.rejection?.reasons.join("; ")}`);
  // As a delivery finds it: restored from the stored file, so nothing read of it before is known.
  let restored = restoreSnapshot(snapshotJson);
  return {
    cases: {
      decide: {
        before: () => (restored = restoreSnapshot(snapshotJson)),
        run: () => transition(restored, event, sim.config),
      },
      restore: { run: () => restoreSnapshot(snapshotJson) },
      open: { run: () => expand(unsealed(openStateFile(text, STATE_KEY, where)), texts) },
      seal: {
        run: () => serialiseStateFile(sealState(compact(state, basis, snapshot.context.head).state, STATE_KEY)),
      },
      delivery: {
        run: () => {
          const current = expand(unsealed(openStateFile(text, STATE_KEY, where)), texts).state;
          const result = transition(restoreSnapshot(current.snapshot), event, sim.config);
          const next = recordRequestDigests(projectState(current, result.snapshot), result.effects, result.snapshot);
          return serialiseStateFile(sealState(compact(next, basis, result.snapshot.context.head).state, STATE_KEY));
        },
      },
    },
    stateFileBytes: Buffer.byteLength(text),
  };
}

const longSim = TrackSim.longTrack(LONG_TESTS);
// Every step's state written as the app writes it, each compacted against the one before.
let stored = written(longSim.snapshot, undefined);
const early = position(longSim, stored.state);
const units = LONG_TESTS / LONG_TRACK_TESTS_PER_UNIT;
/** Bytes written to the state branch by each step of the last unit finished (its state file, and a record when a unit ends). */
const lateSteps: number[] = [];
/** GitHub writes of each of those steps (a Contents API PUT, or a tree, a commit and a ref). */
const lateWrites: number[] = [];
for (let i = 1; i < units; i++) {
  const from = longSim.results.length;
  longSim.throughUnit();
  for (const result of longSim.results.slice(from)) {
    const step = written(result.snapshot, stored);
    stored = step;
    if (i === units - 1) {
      lateSteps.push(step.bytes);
      lateWrites.push(step.writes);
    }
  }
}
const late = position(longSim, stored.state);

const longRuns = benchRuns(60);
const longRows = {} as Record<CaseName, [Summary, Summary]>;
/** The same runs' CPU time (the warm-up left out). */
const longCpu = {} as Record<CaseName, [Summary, Summary]>;
for (const name of Object.keys(CASES) as CaseName[]) {
  const options = (c: Case) => ({
    runs: longRuns,
    warmup: 10,
    unit: "us" as const,
    ...(c.before ? { before: c.before } : {}),
  });
  const [earlyRun, lateRun] = [withCpu(early.cases[name].run), withCpu(late.cases[name].run)];
  longRows[name] = [
    await measure(`${CASES[name]}, unit 1 of ${units}`, earlyRun.fn, options(early.cases[name])),
    await measure(`${CASES[name]}, unit ${units} of ${units}`, lateRun.fn, options(late.cases[name])),
  ];
  longCpu[name] = [summarise("early", earlyRun.cpu.slice(10)), summarise("late", lateRun.cpu.slice(10))];
}
const build = await measure(
  `drive a ${LONG_TESTS}-test track through its ${units} units`,
  () => {
    const sim = TrackSim.longTrack(LONG_TESTS);
    for (let i = 0; i < units; i++) sim.throughUnit();
  },
  { runs: benchRuns(5), warmup: 1, unit: "us" },
);
const ratio = (key: CaseName) => longRows[key][1].median / longRows[key][0].median;
printTable(
  `decide on a long track (${LONG_TESTS} tests, ${units} units): unit 1 against unit ${units} (µs)`,
  Object.values(longRows).flat(),
  { unit: "us", baseline: longRows.delivery[0].name },
);
console.log(`\nlate over early (median, unit ${units} ÷ unit 1; goal: within 2×):`);
for (const name of Object.keys(CASES) as CaseName[]) console.log(`  ${CASES[name]}: ${ratio(name).toFixed(2)}×`);
console.log(
  `state file at unit 1: ${(early.stateFileBytes / 1024).toFixed(1)} KiB; at unit ${units}: ${(late.stateFileBytes / 1024).toFixed(1)} KiB (goal: at most 64 KiB)`,
);
console.log(
  `bytes written per step of unit ${units - 1}: ${lateSteps.map((b) => (b / 1024).toFixed(1)).join(", ")} KiB (the last with the unit's record; goal: at most 64 KiB)`,
);
console.log(`GitHub writes per step of unit ${units - 1}: ${lateWrites.join(", ")} (goal: one each)`);
console.log(`${build.name}: ${(build.median / 1000).toFixed(0)} ms median of ${build.samples.length}`);
const decideCpu = summarise("push of 100 commits, CPU", hundredCpu.cpu.slice(30));
const cpuRatio = (key: CaseName) => longCpu[key][1].median / longCpu[key][0].median;
console.log(
  `CPU time (all threads, µs): push of 100 commits median ${decideCpu.median}, ${decideCpu.tail.label} ${decideCpu.tail.value}; the delivery at unit 1 ${longCpu.delivery[0].median}, at unit ${units} ${longCpu.delivery[1].median} (${cpuRatio("delivery").toFixed(2)}×)`,
);

const main = rows[1]!;
if (wantsJson())
  printJson({
    decide_us_median: Math.round(main.median),
    ...tailEntry("decide_us", main, 0),
    decide_us_early_500: Math.round(longRows.decide[0].median),
    decide_us_late_500: Math.round(longRows.decide[1].median),
    late_over_early: Number(ratio("decide").toFixed(2)),
    restore_us_early_500: Math.round(longRows.restore[0].median),
    restore_us_late_500: Math.round(longRows.restore[1].median),
    restore_late_over_early: Number(ratio("restore").toFixed(2)),
    state_open_us_early_500: Math.round(longRows.open[0].median),
    state_open_us_late_500: Math.round(longRows.open[1].median),
    state_seal_us_early_500: Math.round(longRows.seal[0].median),
    state_seal_us_late_500: Math.round(longRows.seal[1].median),
    delivery_us_early_500: Math.round(longRows.delivery[0].median),
    delivery_us_late_500: Math.round(longRows.delivery[1].median),
    delivery_late_over_early: Number(ratio("delivery").toFixed(2)),
    state_file_bytes_early_500: early.stateFileBytes,
    state_file_bytes_late_500: late.stateFileBytes,
    state_kib_early_500: Number((early.stateFileBytes / 1024).toFixed(1)),
    state_kib_late_500: Number((late.stateFileBytes / 1024).toFixed(1)),
    state_bytes_written_per_step_late_500: Math.max(...lateSteps),
    state_writes_per_step_late_500: Math.max(...lateWrites),
    track_500_build_ms: Math.round(build.median / 1000),
    decide_cpu_us_median: Math.round(decideCpu.median),
    ...tailEntry("decide_cpu_us", decideCpu, 0),
    delivery_cpu_us_early_500: Math.round(longCpu.delivery[0].median),
    delivery_cpu_us_late_500: Math.round(longCpu.delivery[1].median),
    delivery_cpu_late_over_early: Number(cpuRatio("delivery").toFixed(2)),
  });
