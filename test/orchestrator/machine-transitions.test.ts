import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { checkStates } from "../../src/gates/checks.js";
import type { DispatchCycleEffect, Stage, TransitionResult } from "../../src/orchestrator/types.js";
import { edited } from "./fixtures/stockflow.js";
import { reach, userFacingSpec } from "./helpers/reach.js";
import { smallDesign, type TrackSim } from "./helpers/track.js";

/**
 * The (stage, event) table: for each stage, the events that matter there, the stage that follows and
 * the effects that must come out. Each row starts from a track driven to its stage through the API.
 */

type Row = [
  from: Stage,
  event: string,
  act: (sim: TrackSim) => TransitionResult,
  to: Stage,
  check?: (sim: TrackSim, result: TransitionResult) => void,
];

const at = "2026-11-30T12:00:00Z";
const nav = (sim: TrackSim) => {
  const unit = sim.context.units[sim.context.unitIndex]!;
  return sim.push({
    role: "navigator",
    files: Object.fromEntries(
      unit.tests.map((t) => [
        t.file,
        `${sim.context.testFiles[t.file] ?? ""}it(${JSON.stringify(t.title)}, () => expect(0).toBe(1));\n`,
      ]),
    ),
  });
};
const drive = (sim: TrackSim) =>
  sim.push({ role: "driver", files: { "src/services/stock.ts": "export const x = 1;\n" } });
const reviewAs = (verdict: "accept" | "refactor") => (sim: TrackSim) => {
  const unit = sim.context.units[sim.context.unitIndex]!.id;
  return sim.push({
    role: "navigator",
    files: { [`.consort/reviews/${unit}.json`]: JSON.stringify({ unit, verdict, notes: ["checked layering"] }) },
  });
};
const cycle = (result: TransitionResult) =>
  result.effects.find((e): e is DispatchCycleEffect => e.type === "dispatchCycle");
const check = (result: TransitionResult, name: string) => checkStates(result.snapshot).find((c) => c.name === name);
const refused = (sim: TrackSim, result: TransitionResult) =>
  expect(result.rejection?.reasons.length).toBeGreaterThan(0);

const rows: Row[] = [
  // design lane
  [
    "stories",
    "the Product Owner's valid stories",
    (s) =>
      s.push({
        role: "product-owner",
        files: { [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) },
      }),
    "spec",
  ],
  [
    "stories",
    "stories with an AC under the wrong story",
    (s) =>
      s.push({
        role: "product-owner",
        files: {
          [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => (j.stories[0].acceptanceCriteria[1].id = "S2-AC1")),
        },
      }),
    "stories",
    (_s, r) =>
      expect(r.effects).toContainEqual({
        type: "comment",
        body: expect.stringContaining("$.stories[0].acceptanceCriteria[1].id"),
      }),
  ],
  [
    "stories",
    "the Spec Author jumping the queue",
    (s) => s.push({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: smallDesign.spec } }),
    "stories",
    (s, r) => {
      refused(s, r);
      expect(check(r, "consort/discipline")?.status).toBe("failure");
    },
  ],
  [
    "spec",
    "a spec without NFRs",
    (s) =>
      s.push({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) } }),
    "spec",
  ],
  [
    "spec",
    "the spec with NFRs",
    (s) => s.push({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: smallDesign.spec } }),
    "architecture",
  ],
  [
    "architecture",
    "the architecture",
    (s) => s.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: smallDesign.architecture } }),
    "db-design",
  ],
  [
    "db-design",
    "the db design (no user-facing story)",
    (s) => s.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign } }),
    "design-gate",
    (s, r) => {
      expect(s.context.gates.design.status).toBe("pending");
      expect(Object.keys(s.context.gates.design.files).sort()).toEqual([
        ARTIFACT_PATHS.architecture,
        ARTIFACT_PATHS.dbDesign,
        ARTIFACT_PATHS.spec,
      ]);
      expect(check(r, "consort/design")).toMatchObject({
        status: "pending",
        details: [expect.stringContaining(s.context.gates.design.pendingHash!.slice(0, 12))],
      });
    },
  ],
  [
    "ux",
    "the screens for the user-facing story",
    (s) =>
      s.push({
        role: "ux-designer",
        files: {
          [ARTIFACT_PATHS.ux]:
            edited(userFacingSpec, () => {}) &&
            JSON.stringify({
              screens: [
                {
                  id: "file-stock",
                  purpose: "file stock",
                  stories: ["S1"],
                  states: [{ name: "empty", shows: "a form" }],
                },
              ],
            }),
        },
      }),
    "design-gate",
    (s) => expect(Object.keys(s.context.gates.design.files)).toContain(ARTIFACT_PATHS.ux),
  ],
  [
    "design-gate",
    "an approval at the pending manifest",
    (s) => s.approve("design"),
    "test-list",
    (s, r) => expect(check(r, "consort/design")?.status).toBe("success"),
  ],
  [
    "design-gate",
    "an approval at a stale manifest",
    (s) =>
      s.send({
        type: "gate.approved",
        at,
        gate: "design",
        manifestHash: "a".repeat(64),
        approver: "lead",
        reviewId: 9,
        commit: s.context.head,
      }),
    "design-gate",
    (_s, r) => expect(r.rejection?.reasons[0]).toMatch(/approves manifest aaaaaaaaaaaa, but the design gate waits for/),
  ],
  [
    "design-gate",
    "an approval of the wrong gate",
    (s) =>
      s.send({
        type: "gate.approved",
        at,
        gate: "deploy",
        manifestHash: "a".repeat(64),
        approver: "lead",
        reviewId: 9,
        commit: s.context.head,
      }),
    "design-gate",
    refused,
  ],
  [
    "design-gate",
    "the architect pushing while the gate is open",
    (s) =>
      s.push({
        role: "architect",
        files: { [ARTIFACT_PATHS.architecture]: smallDesign.architecture.replace("HTTP", "Web") },
      }),
    "design-gate",
    refused,
  ],
  [
    "test-list",
    "a test list that leaves an AC untested",
    (s) =>
      s.push({
        role: "test-strategist",
        files: {
          [ARTIFACT_PATHS.testList]: JSON.stringify({
            tests: [{ id: "T1", ac: "S1-AC1", file: "test/stock.test.ts", title: "files", kind: "behavior" }],
          }),
        },
      }),
    "test-list",
    (s) => expect(s.context.lastProblem).toEqual([expect.stringContaining("acceptance criterion S1-AC2 has no test")]),
  ],
  [
    "test-list-gate",
    "an approval at the pending manifest",
    (s) => s.approve("test-list"),
    "red",
    (s) => expect(s.context.units.map((u) => u.id)).toEqual(["T1", "T2"]),
  ],
  // build lane
  [
    "red",
    "the Navigator's failing test",
    nav,
    "red-verify",
    (s, r) =>
      expect(cycle(r)).toEqual({
        type: "dispatchCycle",
        dispatchId: "acme/stockflow#12#1",
        step: "red",
        commit: s.context.head,
        unit: "T1",
        tests: [s.context.units[0]!.tests[0]],
        greenTests: [],
        frozen: expect.objectContaining({ [ARTIFACT_PATHS.testList]: expect.any(String) }),
        databaseBranch: "feature-f1-stock",
      }),
  ],
  ["red", "the Driver writing code before the test", drive, "red", refused],
  [
    "red-verify",
    "a valid RED",
    (s) => s.report("valid"),
    "green",
    (s) => expect(s.context.frozenTests.T1).toMatchObject({ file: "test/stock.test.ts", test: "T1" }),
  ],
  [
    "red-verify",
    "an invalid RED (fails by a TypeError)",
    (s) => s.report("invalid", ["T1 failed with TypeError, not an assertion"]),
    "red",
    (s, r) => {
      expect(s.context.attempts).toBe(1);
      expect(r.effects).toContainEqual({ type: "comment", body: expect.stringContaining("TypeError") });
    },
  ],
  [
    "red-verify",
    "a cycle that could not decide",
    (s) => s.report("error", ["runner lost"]),
    "red-verify",
    (s) => expect(s.context.pendingDispatch).toBeNull(),
  ],
  [
    "red-verify",
    "a report for another dispatch",
    (s) =>
      s.send({
        type: "cycle.reported",
        at,
        dispatchId: "other#1",
        runId: 1,
        step: "red",
        commit: s.context.head,
        outcome: "valid",
        reasons: [],
        evidence: { summary: "x" },
      }),
    "red-verify",
    (_s, r) => expect(r.rejection?.reasons[0]).toMatch(/^ignored report other#1: the pending cycle is/),
  ],
  [
    "red-verify",
    "a report for another commit",
    (s) =>
      s.send({
        type: "cycle.reported",
        at,
        dispatchId: s.context.pendingDispatch!.dispatchId,
        runId: 1,
        step: "red",
        commit: "f".repeat(40),
        outcome: "valid",
        reasons: [],
        evidence: { summary: "x" },
      }),
    "red-verify",
    refused,
  ],
  [
    "red-verify",
    "a retry",
    (s) => s.send({ type: "retry", at, by: "lead" }),
    "red-verify",
    (_s, r) => expect(cycle(r)?.dispatchId).toBe("acme/stockflow#12#2"),
  ],
  [
    "green",
    "the Driver's code",
    drive,
    "green-verify",
    (_s, r) => expect(cycle(r)).toMatchObject({ step: "green", tests: [expect.objectContaining({ id: "T1" })] }),
  ],
  [
    "green",
    "the Driver editing the frozen test",
    (s) => s.push({ role: "driver", files: { "test/stock.test.ts": "it('x', () => {});\n" } }),
    "green",
    refused,
  ],
  ["green", "the Navigator adding more tests", nav, "green", refused],
  ["green-verify", "a valid GREEN", (s) => s.report("valid"), "review"],
  [
    "green-verify",
    "a failing GREEN within the repair bound",
    (s) => s.report("invalid", ["T1: expected 1, got 0"]),
    "repair",
    (s) => expect(s.context.attempts).toBe(1),
  ],
  ["repair", "the Driver's repair", drive, "green-verify"],
  [
    "review",
    "an accepting review of T1",
    reviewAs("accept"),
    "red",
    (s) => {
      expect(s.context.unitIndex).toBe(1);
      expect(s.context.evidence.T1?.complete).toBe(true);
    },
  ],
  ["review", "a refactor verdict", reviewAs("refactor"), "refactor"],
  [
    "review",
    "a review naming another unit",
    (s) =>
      s.push({
        role: "navigator",
        files: { ".consort/reviews/T1.json": JSON.stringify({ unit: "T2", verdict: "accept" }) },
      }),
    "review",
    (s) => expect(s.context.lastProblem[0]).toContain('set "unit": "T1"'),
  ],
  ["refactor", "the Driver's refactor", drive, "refactor-verify", (_s, r) => expect(cycle(r)?.step).toBe("refactor")],
  ["refactor-verify", "a refactor that stays green", (s) => s.report("valid"), "red"],
  ["refactor-verify", "a refactor that breaks a test", (s) => s.report("invalid", ["T1 broke"]), "refactor"],
  [
    "blocked",
    "a retry granting another round",
    (s) => s.send({ type: "retry", at, by: "lead" }),
    "repair",
    (s) => {
      expect(s.context.attempts).toBe(0);
      expect(s.context.blocked).toBeNull();
    },
  ],
  [
    "blocked",
    "renegotiating the test list",
    (s) => s.send({ type: "renegotiate", at, by: "lead", scope: "test-list", reason: "T1 asks for too much" }),
    "test-list",
    (s) => expect(s.context.gates["test-list"].status).toBe("closed"),
  ],
  ["blocked", "the Driver pushing anyway", drive, "blocked", refused],
  // release
  [
    "deploying",
    "a verified preview",
    (s) => s.report("valid"),
    "deploy-gate",
    (s) => {
      expect(s.context.deployEvidence?.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(s.context.gates.deploy.status).toBe("pending");
    },
  ],
  [
    "deploying",
    "a preview that did not verify",
    (s) => s.report("invalid", ["GET /health: 502"]),
    "blocked",
    (s) => expect(s.context.blocked?.resume).toBe("deploying"),
  ],
  ["deploy-gate", "the release approval", (s) => s.approve("deploy"), "promote-gate"],
  ["deploy-gate", "a push after the release was verified", drive, "deploy-gate", refused],
  ["promote-gate", "the promote approval", (s) => s.approve("promote"), "merging"],
  [
    "merging",
    "the merge",
    (s) => s.send({ type: "merged", at, commit: s.context.head }),
    "promoting",
    (s, r) =>
      expect(r.effects).toContainEqual({
        type: "promoteDatabase",
        dispatchId: s.context.pendingDispatch!.dispatchId,
        branch: "feature-f1-stock",
        parent: "main",
        commit: s.context.head,
      }),
  ],
  [
    "merging",
    "the promote approval withdrawn",
    (s) => s.send({ type: "gate.withdrawn", at, gate: "promote", reason: "review dismissed" }),
    "promote-gate",
  ],
  [
    "promoting",
    "a promotion that failed",
    (s) => s.report("invalid", ["migration timed out"]),
    "promoting",
    (_s, r) => expect(r.effects).toContainEqual({ type: "comment", body: expect.stringContaining("snapshot is kept") }),
  ],
  [
    "promoting",
    "the parent migrated",
    (s) => s.report("valid"),
    "done",
    (_s, r) => expect(r.effects).toContainEqual({ type: "deleteDatabase", branch: "feature-f1-stock" }),
  ],
  // from anywhere
  [
    "test-list",
    "a merge before any gate",
    (s) => s.send({ type: "merged", at, commit: s.context.head }),
    "abandoned",
    (s) => expect(s.context.ended?.reason).toMatch(/merged before the promote gate/),
  ],
  [
    "green-verify",
    "the pull request closed",
    (s) => s.send({ type: "closed", at }),
    "abandoned",
    (_s, r) => expect(r.effects).toContainEqual({ type: "deleteDatabase", branch: "feature-f1-stock" }),
  ],
  [
    "done",
    "anything after done",
    (s) => s.send({ type: "abandon", at, by: "lead", reason: "late" }),
    "done",
    (_s, r) => expect(r.rejection?.reasons[0]).toMatch(/the track has ended/),
  ],
  ["abandoned", "a push after abandoning", drive, "abandoned", refused],
];

describe("transitions: (stage, event) → stage and effects", () => {
  it.each(rows.map((row) => [`${row[0]} + ${row[1]} → ${row[3]}`, row] as const))(
    "%s",
    (_name, [from, , act, to, extra]) => {
      const sim = reach(from);
      const result = act(sim);
      expect(sim.stage).toBe(to);
      extra?.(sim, result);
      // Every transition restates the checks, and nothing is ever neutral or skipped.
      if (!result.rejection || result.effects.length > 0) {
        expect(result.effects.filter((e) => e.type === "updateChecks")).toEqual([
          { type: "updateChecks", commit: sim.context.rejectedHead?.sha ?? sim.context.head },
        ]);
        const checks = checkStates(result.snapshot);
        expect(checks.map((c) => c.name)).toEqual([
          "consort/design",
          "consort/test-list",
          "consort/build",
          "consort/deploy",
          "consort/promote",
          "consort/discipline",
        ]);
        for (const c of checks) expect(["pending", "success", "failure"]).toContain(c.status);
      }
    },
  );

  it.each(["stories", "design-gate", "red", "green-verify", "blocked", "deploy-gate", "merging"] as Stage[])(
    "abandon from %s ends the track and deletes its database branch",
    (from) => {
      const sim = reach(from);
      const result = sim.send({ type: "abandon", at, by: "lead", reason: "feature dropped" });
      expect(sim.stage).toBe("abandoned");
      expect(result.effects).toContainEqual({ type: "deleteDatabase", branch: "feature-f1-stock" });
      expect(check(result, "consort/build")?.status).toBe("failure");
    },
  );
});

describe('a branch brought up to date with the default branch ("Update branch")', () => {
  const MERGE = "d".repeat(40);
  const updateBranch = (sim: TrackSim) =>
    sim.send({
      type: "push",
      at,
      before: sim.context.head,
      after: MERGE,
      forced: false,
      commits: [
        {
          sha: MERGE,
          authorLogin: "lead-human",
          message: "Merge branch 'main'\n",
          changes: [],
          files: {},
          merge: true,
        },
      ],
    });

  it("during the build the head moves to the merge, the stage stays, and nothing is dispatched", () => {
    const sim = reach("red");
    const result = updateBranch(sim);
    expect([result.rejection, sim.stage, sim.context.head]).toEqual([undefined, "red", MERGE]);
    expect(result.effects.map((e) => e.type)).toEqual(["comment", "updateChecks"]);
  });

  it.each(["deploy-gate", "promote-gate"] as const)(
    "at %s the release is verified again, on the track's database forked afresh from its parent",
    (stage) => {
      const sim = reach(stage);
      const { databaseBranch, parentDatabaseBranch } = sim.context;
      const result = updateBranch(sim);
      expect([sim.stage, sim.context.head, sim.context.deployEvidence]).toEqual(["deploying", MERGE, null]);
      expect([sim.context.gates.deploy.status, sim.context.gates.promote.status]).toEqual(["closed", "closed"]);
      expect(sim.context.gates.deploy.withdrawnReason).toBe(
        `the branch was brought up to date with main at ddddddd, so the release is verified again against ${parentDatabaseBranch} as it stands now`,
      );
      const effects = result.effects.filter((e) => e.type !== "comment" && e.type !== "updateChecks");
      expect(effects).toEqual([
        { type: "deleteDatabase", branch: databaseBranch },
        { type: "forkDatabase", branch: databaseBranch, parent: parentDatabaseBranch },
        expect.objectContaining({ type: "dispatchCycle", step: "release", commit: MERGE }),
      ]);
    },
  );
});
