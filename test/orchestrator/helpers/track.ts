import { expect } from "vitest";
import { ARTIFACT_PATHS } from "../../../src/artifacts/paths.js";
import { defaultConfig, type ConsortConfig, type RoleName } from "../../../src/config/consort-config.js";
import { createTrack, transition } from "../../../src/orchestrator/index.js";
import type {
  CycleOutcome,
  Effect,
  GateName,
  PushedCommit,
  TrackEvent,
  TrackSnapshot,
  TransitionResult,
} from "../../../src/orchestrator/types.js";
import { edited, stockflowText } from "../fixtures/stockflow.js";

/** A deterministic 40-hex sha from a counter. */
export const sha = (n: number) => `c${n.toString(16).padStart(6, "0")}${"0".repeat(33)}`;

/** Clock for events: one minute per step from a fixed start. */
const clock = (n: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, 0) + n * 60_000).toISOString();

/** A two-test StockFlow list (T1 and T2, both S1), small enough for full walks. */
export const twoTestList = edited(stockflowText.testList, (j) => {
  j.tests = j.tests.slice(0, 2);
});

/** StockFlow artifacts trimmed to what a two-test list covers: one story, no invariants. */
export const smallDesign = {
  spec: edited(stockflowText.spec, (j) => {
    j.stories = j.stories.slice(0, 1);
    j.stories[0].acceptanceCriteria = j.stories[0].acceptanceCriteria.slice(0, 2);
  }),
  architecture: edited(stockflowText.architecture, (j) => {
    j.persistenceInvariants = [];
    j.layers = j.layers.slice(0, 1);
    j.layers[0].mayImport = [];
    j.modules = j.modules.filter((m: { layer: string }) => m.layer === "routes");
    j.modules[0].stories = ["S1"];
  }),
  dbDesign: edited(stockflowText.dbDesign, (j) => (j.migrations[0].realizes = [])),
};

/** Tests per acceptance criterion on a long track: a build unit is one criterion's tests (granularity `ac`). */
export const LONG_TRACK_TESTS_PER_UNIT = 10;

/** Twenty-five test files on a long track, whatever the length of its list: only the number of tests changes. */
const LONG_TRACK_FILES = 25;

/** A test list of `n` tests with titles as long as real ones, ten per criterion, spread over the same files. */
function longTestList(n: number): string {
  return edited(twoTestList, (j) => {
    j.tests = Array.from({ length: n }, (_, i) => ({
      id: `T${i + 1}`,
      ac: `S1-AC${Math.floor(i / LONG_TRACK_TESTS_PER_UNIT) + 1}`,
      kind: "behavior",
      file: `test/stock-${i % LONG_TRACK_FILES}.test.ts`,
      title: `stock ${i + 1}: a location keeps its count through a transfer and a refusal names the field`,
    }));
  });
}

/** The small design with one criterion per ten tests, so every test proves a criterion the spec has. */
function longDesign(n: number): typeof smallDesign {
  return {
    ...smallDesign,
    spec: edited(smallDesign.spec, (j) => {
      j.stories[0].acceptanceCriteria = Array.from({ length: n / LONG_TRACK_TESTS_PER_UNIT }, (_, i) => ({
        id: `S1-AC${i + 1}`,
        given: `${i + 1} skus are filed at A-01`,
        when: "I move one to B-07",
        then: "both locations keep their counts",
      }));
    }),
  };
}

const AUTHORS: Record<RoleName, string> = {
  "product-owner": "po-bot[bot]",
  "spec-author": "spec-bot[bot]",
  architect: "arch-bot[bot]",
  dba: "dba-bot[bot]",
  "test-strategist": "tests-bot[bot]",
  "ux-designer": "ux-bot[bot]",
  navigator: "nav-bot[bot]",
  driver: "driver-bot[bot]",
};

export interface CommitSpec {
  role?: RoleName | null;
  files: Record<string, string | null>;
  author?: string | null;
  message?: string;
}

/** Drives a track through the public API the way the app would, recording every result. */
export class TrackSim {
  snapshot: TrackSnapshot;
  readonly results: TransitionResult[] = [];
  /** Every event sent, in order (`results[i]` is what `events[i]` gave). */
  readonly events: TrackEvent[] = [];
  private n = 1;
  constructor(
    readonly config: ConsortConfig = defaultConfig(),
    readonly created: TransitionResult = createTrack(
      {
        trackId: "acme/stockflow#12",
        branch: "feature/f1-stock",
        baseBranch: "main",
        head: sha(1),
        databaseBranch: "feature-f1-stock",
        parentDatabaseBranch: "main",
        at: clock(0),
      },
      config,
    ),
  ) {
    this.snapshot = created.snapshot;
  }

  get stage() {
    return this.snapshot.stage;
  }
  get context() {
    return this.snapshot.context;
  }
  get last(): TransitionResult {
    return this.results.at(-1)!;
  }

  send(event: TrackEvent): TransitionResult {
    const result = transition(this.snapshot, event, this.config);
    this.events.push(event);
    this.results.push(result);
    this.snapshot = result.snapshot;
    return result;
  }

  commit(spec: CommitSpec): PushedCommit {
    const role = spec.role === undefined ? null : spec.role;
    const message = spec.message ?? `Step by ${role ?? "nobody"}\n\n${role ? `Consort-Role: ${role}\n` : ""}`;
    // As GitHub says: a file the track has not written before is added (the sim's base has none).
    const known = (path: string) =>
      this.context.testFiles[path] !== undefined || this.context.artifacts[path] !== undefined;
    const changes = Object.entries(spec.files).map(([path, text]) => ({
      path,
      status: text === null ? ("removed" as const) : known(path) ? ("modified" as const) : ("added" as const),
    }));
    return {
      sha: sha(++this.n),
      authorLogin: spec.author === undefined ? (role ? AUTHORS[role] : "someone") : spec.author,
      message,
      changes,
      files: spec.files,
      // As the handler reads it: the root's package.json before the commit (the sim's base has none).
      before: { "package.json": null },
    };
  }

  push(...specs: CommitSpec[]): TransitionResult {
    return this.pushCommits(...specs.map((s) => this.commit(s)));
  }

  /** Push commits made by `commit`, perhaps altered first (as GitHub would list a rename, say), onto the branch. */
  pushCommits(...commits: PushedCommit[]): TransitionResult {
    const before = this.context.rejectedHead?.sha ?? this.context.head;
    return this.send({ type: "push", at: clock(this.n), before, after: commits.at(-1)!.sha, forced: false, commits });
  }

  /** Force-push the branch back to the last accepted commit. */
  reset(): TransitionResult {
    return this.send({
      type: "push",
      at: clock(++this.n),
      before: this.context.rejectedHead?.sha ?? this.context.head,
      after: this.context.head,
      forced: true,
      commits: [],
    });
  }

  approve(gate: GateName, approver = "lead-human"): TransitionResult {
    const record = this.context.gates[gate];
    return this.send({
      type: "gate.approved",
      at: clock(++this.n),
      gate,
      manifestHash: record.pendingHash ?? "0".repeat(64),
      approver,
      reviewId: this.n,
      commit: this.context.head,
    });
  }

  report(outcome: CycleOutcome, reasons: string[] = []): TransitionResult {
    const pending = this.context.pendingDispatch;
    if (!pending) throw new Error(`no pending dispatch at ${this.stage}`);
    const at = clock(++this.n);
    if (pending.step === "release") {
      return this.send({
        type: "deploy.reported",
        at,
        dispatchId: pending.dispatchId,
        runId: this.n,
        commit: pending.commit,
        outcome,
        reasons,
        evidence: {
          summary: "preview up; smoke passed",
          databaseBranch: this.context.databaseBranch,
          checks: [{ name: "GET /health", ok: outcome === "valid" }],
        },
      });
    }
    if (pending.step === "promote")
      return this.send({ type: "promotion.reported", at, dispatchId: pending.dispatchId, outcome, reasons });
    return this.send({
      type: "cycle.reported",
      at,
      dispatchId: pending.dispatchId,
      runId: this.n,
      step: pending.step,
      commit: pending.commit,
      outcome,
      reasons,
      evidence: { summary: `${pending.step} ${outcome}` },
    });
  }

  /** Every design step, both gates: the track ends at `red` for T1. */
  throughDesign(list = twoTestList, design = smallDesign): this {
    this.expectAccepted(
      this.push({ role: "product-owner", files: { [ARTIFACT_PATHS.spec]: edited(design.spec, (j) => delete j.nfrs) } }),
    );
    this.expectAccepted(this.push({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: design.spec } }));
    this.expectAccepted(
      this.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: design.architecture } }),
    );
    this.expectAccepted(this.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: design.dbDesign } }));
    expect(this.stage).toBe("design-gate");
    this.expectAccepted(this.approve("design"));
    this.expectAccepted(this.push({ role: "test-strategist", files: { [ARTIFACT_PATHS.testList]: list } }));
    expect(this.stage).toBe("test-list-gate");
    this.expectAccepted(this.approve("test-list"));
    return this;
  }

  /**
   * A track of `n` tests (a multiple of ten) in units of ten, one per acceptance criterion, over
   * twenty-five test files, through its design: at `red` for the first unit.
   */
  static longTrack(n: number): TrackSim {
    return new TrackSim({ ...defaultConfig(), granularity: "ac" }).throughDesign(longTestList(n), longDesign(n));
  }

  /** The navigator's RED commit for the unit in turn: each of its tests appended to its file, failing. */
  redCommit(body = "expect(1).toBe(2)"): PushedCommit {
    const unit = this.context.units[this.context.unitIndex]!;
    const files: Record<string, string> = {};
    for (const test of unit.tests)
      files[test.file] =
        `${this.context.testFiles[test.file] ?? ""}it(${JSON.stringify(test.title)}, () => ${body});\n`;
    return this.commit({ role: "navigator", files });
  }

  /** RED (appending the unit's tests to their files), verified; GREEN, verified; review accept. */
  throughUnit(): this {
    const unit = this.context.units[this.context.unitIndex]!;
    this.expectAccepted(this.pushCommits(this.redCommit()));
    this.expectAccepted(this.report("valid"));
    this.expectAccepted(
      this.push({ role: "driver", files: { "src/services/stock.ts": `export const step = ${this.n};\n` } }),
    );
    this.expectAccepted(this.report("valid"));
    this.expectAccepted(
      this.push({
        role: "navigator",
        files: {
          [`.consort/reviews/${unit.id}.json`]: JSON.stringify({ unit: unit.id, verdict: "accept", notes: [] }),
        },
      }),
    );
    return this;
  }

  expectAccepted(result: TransitionResult): TransitionResult {
    // Asserted only when there is something to show: a long track accepts hundreds of steps, and
    // an expect() on an accepted one (always []) cost a fifth of driving it.
    if (result.rejection) expect(result.rejection.reasons).toEqual([]);
    return result;
  }

  effects(type: Effect["type"]): Effect[] {
    return this.last.effects.filter((e) => e.type === type);
  }
}
