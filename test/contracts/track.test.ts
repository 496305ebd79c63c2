import { describe, expect, it } from "vitest";
import { restoreSnapshot, SnapshotError, transition } from "../../src/orchestrator/index.js";
import { NextActionSchema, TrackEventSchema, TrackSnapshotSchema } from "../../src/contracts/track.js";
import type { TrackEvent, TrackSnapshot } from "../../src/orchestrator/types.js";
import { nextAction } from "../../src/orchestrator/next-action.js";
import { reach } from "../orchestrator/helpers/reach.js";
import type { TrackSim } from "../orchestrator/helpers/track.js";

/**
 * What src/contracts/track.ts lets into the machine: events at the edge (a refused event names
 * each field, and changes nothing) and snapshots at restore (a malformed one fails closed).
 */

const at = "2026-11-30T12:00:00Z";
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
/** The reasons `transition` refuses `event` with at `sim`, the snapshot unchanged. */
const refused = (sim: TrackSim, event: unknown): string[] => {
  const result = transition(sim.snapshot, event as TrackEvent, sim.config);
  expect(result.snapshot).toBe(sim.snapshot);
  expect(result.effects).toEqual([]);
  return result.rejection?.reasons ?? [];
};
const parses = (event: unknown) => TrackEventSchema.safeParse(event).success;

const push = (over: Record<string, unknown> = {}) => ({
  type: "push",
  at,
  before: "a".repeat(40),
  after: "b".repeat(40),
  forced: false,
  commits: [],
  ...over,
});
const commit = (over: Record<string, unknown> = {}) => ({
  sha: "c".repeat(40),
  authorLogin: "nav-bot[bot]",
  message: "m",
  changes: [],
  files: {},
  ...over,
});

describe("event fields", () => {
  it("take a commit sha of 7 to 64 lowercase hex characters, and nothing around it", () => {
    for (const sha of ["abcdef1", "0123456789abcdef0123456789abcdef01234567", "f".repeat(64)])
      expect(parses(push({ before: sha }))).toBe(true);
    for (const sha of ["abcdef", "f".repeat(65), "ABCDEF1", "abcdefg", " abcdef1", "abcdef1 ", "abc\ndef1", ""])
      expect(parses(push({ before: sha }))).toBe(false);
  });

  it("name a bad sha as not a git commit sha, field by field", () => {
    const sim = reach("red");
    expect(refused(sim, push({ before: "abcdef", after: "xyz", commits: [commit({ sha: "c".repeat(65) })] }))).toEqual([
      "event before: a git commit sha",
      "event after: a git commit sha",
      "event commits[0].sha: a git commit sha",
    ]);
  });

  it("take an ISO date-time with a zone offset or Z, and no bare date", () => {
    for (const time of [at, "2026-11-30T12:00:00+02:00", "2026-11-30T12:00:00.250-05:30"])
      expect(parses(push({ at: time }))).toBe(true);
    for (const time of ["2026-11-30", "yesterday", "2026-11-30T12:00:00"])
      expect(parses(push({ at: time }))).toBe(false);
  });

  it("take each change status GitHub reports, and a path that is not empty", () => {
    for (const status of ["added", "modified", "removed", "renamed", "copied", "changed"])
      expect(parses(push({ commits: [commit({ changes: [{ path: "a.ts", status }] })] }))).toBe(true);
    expect(
      parses(push({ commits: [commit({ changes: [{ path: "b.ts", status: "renamed", previousPath: "a.ts" }] })] })),
    ).toBe(true);
    const sim = reach("red");
    expect(
      refused(
        sim,
        push({
          commits: [
            commit({
              authorLogin: "",
              changes: [
                { path: "", status: "moved" },
                { path: "b.ts", status: "renamed", previousPath: "" },
              ],
            }),
          ],
        }),
      ),
    ).toEqual([
      "event commits[0].authorLogin: Too small: expected string to have >=1 characters",
      "event commits[0].changes[0].path: Too small: expected string to have >=1 characters",
      'event commits[0].changes[0].status: Invalid option: expected one of "added"|"modified"|"removed"|"renamed"|"copied"|"changed"',
      "event commits[0].changes[1].previousPath: Too small: expected string to have >=1 characters",
    ]);
    expect(parses(push({ commits: [commit({ authorLogin: null, merge: true })] }))).toBe(true);
    expect(parses(push({ commits: [commit({ merge: false })] }))).toBe(false);
  });

  it("take a rebase only as pairs of shas, and nothing more", () => {
    const pair = { from: "a".repeat(40), to: "b".repeat(40) };
    expect(parses(push({ rebased: { onto: "d".repeat(40), commits: [pair] } }))).toBe(true);
    expect(parses(push({ rebased: { onto: "d".repeat(40), commits: [{ ...pair, extra: 1 }] } }))).toBe(false);
    expect(parses(push({ rebased: { onto: "d".repeat(40), commits: [], by: "me" } }))).toBe(false);
    expect(parses(push({ rebased: { onto: "d".repeat(40), commits: [{ ...pair, to: "zz" }] } }))).toBe(false);
  });

  it("take an approval only at a whole lowercase sha-256 manifest, from a named approver, of an integer review", () => {
    const sim = reach("design-gate");
    const approval = {
      type: "gate.approved",
      at,
      gate: "design",
      manifestHash: "a".repeat(64),
      approver: "lead",
      reviewId: 3,
      commit: "e".repeat(40),
    };
    expect(parses(approval)).toBe(true);
    for (const manifestHash of ["a".repeat(63), "a".repeat(65), "A".repeat(64), ` ${"a".repeat(63)}`])
      expect(parses({ ...approval, manifestHash })).toBe(false);
    expect(
      refused(sim, { ...approval, manifestHash: "A".repeat(64), approver: "", reviewId: 1.5, gate: "merge" }),
    ).toEqual([
      'event gate: Invalid option: expected one of "design"|"test-list"|"deploy"|"promote"',
      "event manifestHash: Invalid string: must match pattern /^[0-9a-f]{64}$/",
      "event approver: Too small: expected string to have >=1 characters",
      "event reviewId: Invalid input: expected int, received number",
    ]);
  });

  it("take each cycle outcome, and no other", () => {
    const report = {
      type: "cycle.reported",
      at,
      dispatchId: "t#1",
      runId: 1,
      commit: "e".repeat(40),
      reasons: [],
      step: "red",
      evidence: { summary: "ok" },
    };
    for (const outcome of ["valid", "invalid", "error"]) {
      expect(parses({ ...report, outcome })).toBe(true);
      expect(parses({ type: "promotion.reported", at, dispatchId: "t#2", outcome, reasons: [] })).toBe(true);
    }
    expect(parses({ ...report, outcome: "passed" })).toBe(false);
    expect(parses({ ...report, outcome: "valid", dispatchId: "" })).toBe(false);
    expect(parses({ type: "promotion.reported", at, dispatchId: "", outcome: "valid", reasons: [] })).toBe(false);
  });

  it("take a renegotiation from each design step, by someone, with a reason", () => {
    const base = { type: "renegotiate", at, by: "lead", scope: "design", reason: "r" };
    for (const from of ["stories", "spec", "architecture", "db-design", "ux"])
      expect(parses({ ...base, from })).toBe(true);
    expect(parses({ ...base, scope: "test-list" })).toBe(true);
    expect(parses({ ...base, from: "test-list" })).toBe(false);
    expect(parses({ ...base, scope: "build" })).toBe(false);
    expect(parses({ ...base, by: "" })).toBe(false);
    expect(parses({ ...base, reason: "" })).toBe(false);
    for (const event of [
      { type: "abandon", at, by: "", reason: "r" },
      { type: "abandon", at, by: "lead", reason: "" },
      { type: "gate.withdrawn", at, gate: "design", reason: "" },
      { type: "retry", at, by: "" },
    ])
      expect(parses(event)).toBe(false);
  });
});

describe("a snapshot at restore", () => {
  /** A track at T2's GREEN: T1's frozen text is held as a prefix of T2's. */
  const atSecondGreen = () => {
    const sim = reach("refactor-verify");
    sim.expectAccepted(sim.report("valid"));
    sim.expectAccepted(sim.pushCommits(sim.redCommit()));
    sim.expectAccepted(sim.report("valid"));
    expect(sim.stage).toBe("green");
    return sim;
  };
  const prefixOf = (snapshot: TrackSnapshot) => {
    const [hash, stored] = Object.entries(snapshot.context.frozenTexts).find(([, t]) => typeof t !== "string")!;
    return { hash, stored: stored as { of: string; length: number } };
  };

  it("restores a prefix up to the whole length of the text it is a prefix of", () => {
    const sim = atSecondGreen();
    const snapshot = clone(sim.snapshot);
    const { hash, stored } = prefixOf(snapshot);
    expect(restoreSnapshot(snapshot)).toEqual(sim.snapshot);
    const whole = (snapshot.context.frozenTexts[stored.of] as string).length;
    snapshot.context.frozenTexts[hash] = { of: stored.of, length: whole };
    expect(TrackSnapshotSchema.safeParse(snapshot).success).toBe(true);
  });

  it("fails closed on a prefix longer than its text, of a missing text, or of another prefix", () => {
    const sim = atSecondGreen();
    const { hash, stored } = prefixOf(sim.snapshot);
    const whole = (sim.context.frozenTexts[stored.of] as string).length;
    const message = (of: string, length: number) =>
      `the track snapshot is malformed: context.frozenTexts.${hash}: the frozen text ${hash} is missing: it is the first ${length} characters of ${of}, which holds no text that long`;
    const broken = (of: string, length: number) => {
      const snapshot = clone(sim.snapshot);
      snapshot.context.frozenTexts[hash] = { of, length };
      return snapshot;
    };
    expect(() => restoreSnapshot(broken(stored.of, whole + 1))).toThrow(SnapshotError);
    expect(() => restoreSnapshot(broken(stored.of, whole + 1))).toThrow(message(stored.of, whole + 1));
    expect(() => restoreSnapshot(broken("0".repeat(64), 1))).toThrow(message("0".repeat(64), 1));
    expect(() => restoreSnapshot(broken(hash, 0))).toThrow(message(hash, 0));
  });

  it("fails closed on a frozen test whose text is missing, naming the file and the test", () => {
    const sim = reach("green");
    const snapshot = clone(sim.snapshot);
    const hash = snapshot.context.frozenTests.T1!.hash;
    delete snapshot.context.frozenTexts[hash];
    expect(() => restoreSnapshot(snapshot)).toThrow(
      `the track snapshot is malformed: context.frozenTests.T1.hash: the frozen text of test/stock.test.ts (frozen by T1) is missing: no frozenTexts entry for hash ${hash}`,
    );
  });

  it("refuses a field it does not know, a gate state or stage that does not exist, and a bound below one", () => {
    const sim = reach("green");
    const malformed = (change: (s: TrackSnapshot & Record<string, unknown>) => void) => {
      const snapshot = clone(sim.snapshot) as TrackSnapshot & Record<string, unknown>;
      change(snapshot);
      return TrackSnapshotSchema.safeParse(snapshot).success;
    };
    expect(malformed(() => {})).toBe(true);
    expect(malformed((s) => (s.extra = 1))).toBe(false);
    expect(malformed((s) => ((s.context as unknown as Record<string, unknown>).extra = 1))).toBe(false);
    expect(malformed((s) => ((s.context.gates.design as unknown as Record<string, unknown>).status = "skipped"))).toBe(
      false,
    );
    expect(
      malformed((s) => ((s.context.gates as unknown as Record<string, unknown>).merge = s.context.gates.design)),
    ).toBe(false);
    expect(malformed((s) => delete (s.context.gates as Partial<typeof s.context.gates>).promote)).toBe(false);
    expect(malformed((s) => (s.context.settings.repairBound = 0))).toBe(false);
    expect(malformed((s) => (s.context.sequence = -1))).toBe(false);
    expect(malformed((s) => (s.context.attempts = -1))).toBe(false);
    expect(malformed((s) => (s.context.trackId = ""))).toBe(false);
    expect(malformed((s) => (s.context.head = ""))).toBe(false);
    expect(
      malformed(
        (s) => (s.context.pendingDispatch = { dispatchId: "x", step: "merge", commit: "c", unit: "T1" } as never),
      ),
    ).toBe(false);
    expect(malformed((s) => (s.context.blocked = { reason: "r", resume: "nowhere" } as never))).toBe(false);
    for (const step of ["red", "green", "refactor", "release", "promote"])
      expect(
        malformed((s) => (s.context.pendingDispatch = { dispatchId: "x", step, commit: "c", unit: "T1" } as never)),
      ).toBe(true);
    for (const status of ["closed", "pending", "approved", "withdrawn"])
      expect(malformed((s) => ((s.context.gates.deploy as unknown as Record<string, unknown>).status = status))).toBe(
        true,
      );
  });
});

describe("the next action", () => {
  it("is what the schema an agent reads declares, at every stage", () => {
    for (const stage of ["stories", "design-gate", "red", "green-verify", "review", "blocked", "done"] as const) {
      const sim = reach(stage);
      expect(NextActionSchema.strict().safeParse(nextAction(sim.snapshot, sim.config)).success).toBe(true);
    }
    const action = nextAction(reach("red").snapshot, reach("red").config);
    for (const actor of ["agent", "person", "orchestrator", "nobody"])
      expect(NextActionSchema.safeParse({ ...action, actor }).success).toBe(true);
    expect(NextActionSchema.safeParse({ ...action, actor: "bot" }).success).toBe(false);
    for (const rule of ["append-only", "unchanged"])
      expect(NextActionSchema.safeParse({ ...action, frozenPaths: [{ path: "a", rule }] }).success).toBe(true);
    expect(NextActionSchema.safeParse({ ...action, frozenPaths: [{ path: "a", rule: "free" }] }).success).toBe(false);
  });
});

describe("what an event carries through", () => {
  const report = (evidence: unknown) => ({
    type: "cycle.reported",
    at,
    dispatchId: "t#1",
    runId: 1,
    commit: "e".repeat(40),
    outcome: "valid",
    reasons: [],
    step: "red",
    evidence,
  });

  it("keeps each test result a cycle reports, and refuses a result it does not know", () => {
    const results = ["passed", "assertion-failure", "error", "skipped", "missing"];
    const tests = results.map((result, i) => ({ id: `T${i + 1}`, title: `t${i + 1}`, result }));
    const parsed = TrackEventSchema.parse(report({ summary: "s", tests }));
    expect(parsed).toMatchObject({ evidence: { summary: "s", tests } });
    expect(parses(report({ summary: "s", tests: [{ id: "T1", title: "t", result: "ok" }] }))).toBe(false);
    expect(parses(report({ summary: "s", tests: [{ id: "T1", result: "passed" }] }))).toBe(false);
  });

  it("keeps each verification a release reports, and refuses one without its verdict", () => {
    const release = (checks: unknown) => ({
      ...report(null),
      type: "deploy.reported",
      step: undefined,
      evidence: { summary: "s", databaseBranch: "f", checks },
    });
    const checks = [{ name: "GET /health", ok: false, detail: "502" }];
    expect(TrackEventSchema.parse(release(checks))).toMatchObject({ evidence: { checks } });
    expect(parses(release([{ name: "GET /health" }]))).toBe(false);
  });

  it("keeps the trees of a push and the login that pushed", () => {
    const trees = { before: "1".repeat(40), after: "2".repeat(40) };
    expect(TrackEventSchema.parse(push({ trees, pusher: "lead-human" }))).toMatchObject({
      trees,
      pusher: "lead-human",
    });
    expect(parses(push({ trees: { before: "1".repeat(40) } }))).toBe(false);
    expect(parses(push({ pusher: "" }))).toBe(false);
  });

  it("takes a withdrawal, a retry, a close and an abandonment", () => {
    for (const event of [
      { type: "gate.withdrawn", at, gate: "design", reason: "dismissed", reviewId: 3 },
      { type: "retry", at, by: "lead", reason: "fixed the runner" },
      { type: "closed", at, by: "lead" },
      { type: "closed", at },
      { type: "abandon", at, by: "lead", reason: "dropped" },
      { type: "merged", at, commit: "e".repeat(40) },
    ])
      expect([event.type, parses(event)]).toEqual([event.type, true]);
  });
});

describe("snapshots that restore", () => {
  it.each(["blocked", "deploy-gate", "abandoned"] as const)(
    "at %s (blocked, deploy evidence, ended), exactly as written",
    (stage) => {
      const sim = reach(stage);
      expect(restoreSnapshot(JSON.stringify(sim.snapshot))).toEqual(sim.snapshot);
    },
  );

  it("holding a rejected commit, exactly as written", () => {
    const sim = reach("green");
    sim.push({ role: "driver", files: { [".consort/spec.json"]: "{}" } });
    expect(sim.context.rejectedHead).not.toBeNull();
    expect(restoreSnapshot(JSON.stringify(sim.snapshot))).toEqual(sim.snapshot);
  });
});

describe("the next action's JSON Schema, as the MCP tools publish it", () => {
  it("says what each field means to the agent reading it", async () => {
    const { z } = await import("zod");
    const schema = z.toJSONSchema(NextActionSchema) as { properties: Record<string, { description?: string }> };
    const described = Object.fromEntries(
      Object.entries(schema.properties)
        .filter(([, p]) => p.description !== undefined)
        .map(([name, p]) => [name, p.description]),
    );
    expect(described).toEqual({
      actor:
        "Who acts now: an agent playing `role`, a person (a gate), the orchestrator (a cycle runs), or nobody (ended).",
      task: "The task in plain words.",
      allowedPaths: "Globs the role may touch in this step; a commit touching anything else is rejected.",
      checks: "What will be checked when the step is pushed.",
      head: "The track's last accepted commit: work starts from it.",
      trailer: "The commit trailer the role must add, e.g. `Consort-Role: navigator`.",
    });
    const action = nextAction(reach("design-gate").snapshot, reach("design-gate").config);
    expect(NextActionSchema.parse(action).gate).toEqual(action.gate);
    expect(NextActionSchema.safeParse({ ...action, gate: { name: "design" } }).success).toBe(false);
  });
});
