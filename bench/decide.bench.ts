import { readFileSync } from "node:fs";
import { ARTIFACT_PATHS } from "../src/artifacts/paths.js";
import { defaultConfig, type RoleName } from "../src/config/consort-config.js";
import { createTrack, transition } from "../src/orchestrator/index.js";
import type { PushEvent, PushedCommit, TrackEvent, TrackSnapshot } from "../src/orchestrator/types.js";
import { benchRuns, measure, printJson, printTable, tailEntry, wantsJson } from "./lib.js";

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

const runs = benchRuns(300);
const rows = [
  await measure("push of 1 commit", () => transition(snapshot, one, config), { runs, warmup: 30, unit: "us" }),
  await measure("push of 100 commits", () => transition(snapshot, hundred, config), { runs, warmup: 30, unit: "us" }),
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
const main = rows[1]!;
if (wantsJson()) printJson({ decide_us_median: Math.round(main.median), ...tailEntry("decide_us", main, 0) });
