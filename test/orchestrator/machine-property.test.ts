import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { ConsortConfig, ROLE_NAMES } from "../../src/config/consort-config.js";
import { restoreSnapshot } from "../../src/orchestrator/index.js";
import type { GateName, Stage, TrackEvent, TransitionResult } from "../../src/orchestrator/types.js";
import { edited } from "./fixtures/stockflow.js";
import { smallDesign, TrackSim, twoTestList } from "./helpers/track.js";

/**
 * Random event sequences through the public `transition`, biased towards plausible moves so the
 * lane actually gets somewhere. After every event: no gate is skipped, a rejected event never
 * advances the lane, and the snapshot still restores.
 */

const LANE: Stage[] = [
  "stories",
  "spec",
  "architecture",
  "db-design",
  "ux",
  "design-gate",
  "test-list",
  "test-list-gate",
  "red",
  "red-verify",
  "green",
  "green-verify",
  "repair",
  "review",
  "refactor",
  "refactor-verify",
  "blocked",
  "deploying",
  "deploy-gate",
  "promote-gate",
  "merging",
  "promoting",
  "done",
];
const BUILD_OR_LATER = LANE.slice(LANE.indexOf("red"));
const GATES: GateName[] = ["design", "test-list", "deploy", "promote"];
const at = "2026-11-30T12:00:00Z";

const FILES: Array<(sim: TrackSim, variant: number) => [string, string | null]> = [
  () => [ARTIFACT_PATHS.spec, smallDesign.spec],
  (_s, v) => [ARTIFACT_PATHS.spec, v % 2 ? edited(smallDesign.spec, (j) => delete j.nfrs) : "{ broken"],
  () => [ARTIFACT_PATHS.architecture, smallDesign.architecture],
  () => [ARTIFACT_PATHS.dbDesign, smallDesign.dbDesign],
  () => [ARTIFACT_PATHS.testList, twoTestList],
  (sim, v) => {
    const unit = sim.context.units[sim.context.unitIndex];
    const previous = sim.context.testFiles["test/stock.test.ts"] ?? "";
    if (v % 3 === 0)
      return [
        "test/stock.test.ts",
        `${previous}it(${JSON.stringify(unit?.tests[0]?.title ?? "x")}, () => expect(1).toBe(2));\n`,
      ];
    if (v % 3 === 1) return ["test/stock.test.ts", previous.replace("it(", "it.skip(")];
    return ["test/stock.test.ts", null];
  },
  (_s, v) => ["src/services/stock.ts", `export const v = ${v};\n`],
  (sim, v) => {
    const unit = sim.context.units[sim.context.unitIndex]?.id ?? "T1";
    return [
      `.consort/reviews/${unit}.json`,
      JSON.stringify({ unit, verdict: v % 2 ? "accept" : "refactor", notes: ["n"] }),
    ];
  },
  () => [".github/workflows/consort-cycle.yml", "on: push"],
];

type Move =
  | { kind: "push"; role: number; files: number[]; variant: number }
  | { kind: "turn"; variant: number }
  | { kind: "approve"; gate: number; right: boolean }
  | { kind: "withdraw"; gate: number }
  | { kind: "report"; outcome: number; right: boolean }
  | { kind: "renegotiate"; design: boolean }
  | { kind: "retry" }
  | { kind: "reset" }
  | { kind: "merged" }
  | { kind: "closed" };

const move: fc.Arbitrary<Move> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("push" as const),
      role: fc.integer({ min: -1, max: 7 }),
      files: fc.array(fc.nat(FILES.length - 1), { minLength: 1, maxLength: 2 }),
      variant: fc.nat(5),
    }),
  },
  { weight: 50, arbitrary: fc.record({ kind: fc.constant("turn" as const), variant: fc.nat(5) }) },
  {
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constant("approve" as const),
      gate: fc.nat(7),
      right: fc.nat(3).map((n) => n > 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("withdraw" as const), gate: fc.nat(3) }) },
  {
    weight: 25,
    arbitrary: fc.record({ kind: fc.constant("report" as const), outcome: fc.nat(5), right: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("renegotiate" as const), design: fc.boolean() }) },
  { weight: 3, arbitrary: fc.constant({ kind: "retry" as const }) },
  { weight: 8, arbitrary: fc.constant({ kind: "reset" as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: "merged" as const }, { kind: "closed" as const }) },
);

/** What a well-behaved participant would do now (so random runs get deep into the lane). */
function turn(sim: TrackSim, variant: number): TransitionResult | null {
  if (sim.context.rejectedHead) return sim.reset();
  const files: Partial<Record<Stage, number>> = {
    stories: 0,
    spec: 0,
    architecture: 2,
    "db-design": 3,
    "test-list": 4,
    red: 5,
    green: 6,
    repair: 6,
    refactor: 6,
    review: 7,
  };
  const roles: Partial<Record<Stage, (typeof ROLE_NAMES)[number]>> = {
    stories: "product-owner",
    spec: "spec-author",
    architecture: "architect",
    "db-design": "dba",
    "test-list": "test-strategist",
    red: "navigator",
    review: "navigator",
    green: "driver",
    repair: "driver",
    refactor: "driver",
  };
  const gates: Partial<Record<Stage, GateName>> = {
    "design-gate": "design",
    "test-list-gate": "test-list",
    "deploy-gate": "deploy",
    "promote-gate": "promote",
  };
  const index = files[sim.stage];
  const role = roles[sim.stage];
  if (index !== undefined && role) {
    const [path, text] = FILES[index]!(sim, variant === 1 ? 0 : variant === 5 ? 3 : variant);
    return sim.push({ role, files: { [path]: text } });
  }
  const gate = gates[sim.stage];
  if (gate) return sim.approve(gate);
  if (sim.context.pendingDispatch)
    return sim.report(variant === 5 ? "invalid" : "valid", variant === 5 ? ["failed"] : []);
  if (
    sim.stage === "blocked" ||
    sim.stage.endsWith("-verify") ||
    sim.stage === "deploying" ||
    sim.stage === "promoting"
  )
    return sim.send({ type: "retry", at, by: "lead" });
  if (sim.stage === "merging") return sim.send({ type: "merged", at, commit: sim.context.head });
  return null;
}

function play(sim: TrackSim, m: Move): TransitionResult | null {
  switch (m.kind) {
    case "push":
      return sim.push({
        role: m.role < 0 ? null : ROLE_NAMES[m.role]!,
        files: Object.fromEntries(m.files.map((f) => FILES[f]!(sim, m.variant))),
      });
    case "turn":
      return turn(sim, m.variant);
    case "approve": {
      // Mostly the gate the track waits at; sometimes any gate.
      const waiting = (
        {
          "design-gate": "design",
          "test-list-gate": "test-list",
          "deploy-gate": "deploy",
          "promote-gate": "promote",
        } as Partial<Record<Stage, GateName>>
      )[sim.stage];
      const gate = m.gate >= GATES.length && waiting ? waiting : GATES[m.gate % GATES.length]!;
      if (m.right) return sim.approve(gate);
      return sim.send({
        type: "gate.approved",
        at,
        gate,
        manifestHash: "e".repeat(64),
        approver: "lead",
        reviewId: 1,
        commit: sim.context.head,
      });
    }
    case "withdraw":
      return sim.send({ type: "gate.withdrawn", at, gate: GATES[m.gate]!, reason: "review dismissed" });
    case "report": {
      const outcome = (["valid", "valid", "valid", "invalid", "invalid", "error"] as const)[m.outcome]!;
      if (m.right && sim.context.pendingDispatch) return sim.report(outcome, outcome === "valid" ? [] : ["failed"]);
      return sim.send({
        type: "cycle.reported",
        at,
        dispatchId: "forged#1",
        runId: 1,
        step: "green",
        commit: sim.context.head,
        outcome: "valid",
        reasons: [],
        evidence: { summary: "forged" },
      });
    }
    case "renegotiate":
      return sim.send({
        type: "renegotiate",
        at,
        by: "lead",
        scope: m.design ? "design" : "test-list",
        from: "architecture",
        reason: "r",
      } as TrackEvent);
    case "retry":
      return sim.send({ type: "retry", at, by: "lead" });
    case "reset":
      return sim.reset();
    case "merged":
      return sim.send({ type: "merged", at, commit: sim.context.head });
    case "closed":
      return sim.send({ type: "closed", at });
  }
}

const approvalsCount = (sim: TrackSim) => GATES.reduce((n, g) => n + sim.context.gates[g].approvals.length, 0);
const evidenceCount = (sim: TrackSim) =>
  Object.values(sim.context.evidence).reduce(
    (n, e) => n + (e.red ? 1 : 0) + (e.green ? 1 : 0) + (e.complete ? 1 : 0),
    0,
  );

function checkInvariants(
  sim: TrackSim,
  before: { stage: Stage; approvals: number; evidence: number; unitIndex: number },
  result: TransitionResult | null,
) {
  const { stage, context } = sim.snapshot;
  const gates = context.gates;
  // Never skip a gate.
  if (BUILD_OR_LATER.includes(stage) || stage === "test-list" || stage === "test-list-gate")
    expect(gates.design.status, `design gate at ${stage}`).toBe("approved");
  if (BUILD_OR_LATER.includes(stage)) expect(gates["test-list"].status, `test-list gate at ${stage}`).toBe("approved");
  if (["promote-gate", "merging", "promoting", "done"].includes(stage)) expect(gates.deploy.status).toBe("approved");
  if (["merging", "promoting", "done"].includes(stage)) expect(gates.promote.status).toBe("approved");
  for (const gate of GATES)
    if (gates[gate].status === "approved") expect(gates[gate].approvedHash).toBe(gates[gate].pendingHash);
  // Units before the one in turn have a valid RED, a valid GREEN and are complete.
  if (BUILD_OR_LATER.includes(stage)) {
    context.units.slice(0, context.unitIndex).forEach((unit) =>
      expect(context.evidence[unit.id], unit.id).toMatchObject({
        red: expect.anything(),
        green: expect.anything(),
        complete: true,
      }),
    );
  }
  if (stage === "done") expect(context.unitIndex).toBe(context.units.length);
  // A rejected event never advances: not the stage, not the approvals, not the evidence.
  if (result?.rejection) {
    const from = LANE.indexOf(before.stage);
    const to = LANE.indexOf(stage);
    expect(to === -1 ? from : to, `${before.stage} → ${stage} on a rejection`).toBeLessThanOrEqual(
      from === -1 ? Infinity : from,
    );
    expect(approvalsCount(sim)).toBe(before.approvals);
    expect(evidenceCount(sim)).toBeLessThanOrEqual(before.evidence);
    expect(context.unitIndex).toBeLessThanOrEqual(before.unitIndex);
  }
  // Whatever happened, the snapshot still restores.
  expect(restoreSnapshot(JSON.parse(JSON.stringify(sim.snapshot)))).toEqual(sim.snapshot);
}

/**
 * Random runs on a track with `config`, the invariants checked after every event. Returns the
 * stages the runs reached: the invariants are only proven where the runs went.
 */
function explore(
  config: ConsortConfig,
  runs: { numRuns: number; seed: number; maxLength: number; size?: fc.SizeForArbitrary },
): { deepest: Stage; reached: Stage[] } {
  let deepest = 0;
  const reached = new Set<Stage>();
  fc.assert(
    fc.property(fc.array(move, { minLength: 20, maxLength: runs.maxLength, size: runs.size }), (moves) => {
      const sim = new TrackSim(config);
      for (const m of moves) {
        if (sim.stage === "done" || sim.stage === "abandoned") break;
        const before = {
          stage: sim.stage,
          approvals: approvalsCount(sim),
          evidence: evidenceCount(sim),
          unitIndex: sim.context.unitIndex,
        };
        checkInvariants(sim, before, play(sim, m));
      }
      deepest = Math.max(deepest, ...sim.results.map((r) => LANE.indexOf(r.snapshot.stage)));
      for (const r of sim.results) reached.add(r.snapshot.stage);
    }),
    { numRuns: runs.numRuns, seed: runs.seed },
  );
  return { deepest: LANE[deepest]!, reached: [...reached] };
}

/** The stages a worthwhile exploration passes through, beside the straight path to `done`. */
const DETOURS: Stage[] = ["blocked", "repair", "refactor", "deploy-gate", "abandoned"];

describe("random event sequences (fast-check)", () => {
  it("with one build unit per acceptance criterion, hold the same invariants", () => {
    // size "max": fast-check's default size keeps arrays near minLength, too short to leave the build lane.
    const { deepest, reached } = explore(ConsortConfig.parse({ repairBound: 2, granularity: "ac" }), {
      numRuns: 20,
      seed: 7,
      maxLength: 150,
      size: "max",
    });
    expect(deepest).toBe("done");
    expect(reached).toEqual(expect.arrayContaining(DETOURS));
  });

  it("never skip a gate and never advance on a rejected event", () => {
    const { deepest, reached } = explore(ConsortConfig.parse({ repairBound: 2 }), {
      numRuns: 60,
      seed: 20261130,
      maxLength: 200,
    });
    // The runs are only worth something if they get into the build lane.
    expect(deepest).toBe("done");
    expect(reached).toEqual(expect.arrayContaining(DETOURS));
  });
});
