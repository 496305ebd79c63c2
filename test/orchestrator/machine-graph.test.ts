import { getAdjacencyMap, getShortestPaths, getSimplePaths } from "@xstate/graph";
import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { initialContext } from "../../src/orchestrator/context.js";
import { trackMachine } from "../../src/orchestrator/machine.js";
import type { MachineEvent } from "../../src/orchestrator/machine-setup.js";
import type { GateName, TrackContext } from "../../src/orchestrator/types.js";
import { smallDesign, twoTestList } from "./helpers/track.js";

/**
 * Graph properties of the machine itself (its internal, classified events), walked by @xstate/graph
 * over an abstraction of the context that keeps everything routing depends on.
 */

type State = ReturnType<typeof trackMachine.resolveState>;
const at = "2026-11-30T12:00:00Z";
const input: TrackContext = initialContext(
  {
    trackId: "g",
    branch: "f",
    baseBranch: "main",
    head: "a".repeat(40),
    databaseBranch: "f",
    parentDatabaseBranch: "main",
    at,
  },
  ConsortConfig.parse({ repairBound: 2 }),
);
const artifacts = {
  [ARTIFACT_PATHS.spec]: smallDesign.spec,
  [ARTIFACT_PATHS.architecture]: smallDesign.architecture,
  [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign,
  [ARTIFACT_PATHS.testList]: twoTestList,
};
const testFiles = { "test/stock.test.ts": "it('T1', () => expect(1).toBe(2));\nit('T2', () => expect(1).toBe(2));\n" };
const GATES: GateName[] = ["design", "test-list", "deploy", "promote"];

const pushed = (complete: boolean, verdict: "accept" | "refactor" | null, needsUx = false): MachineEvent => ({
  type: "STEP_PUSHED",
  at,
  head: "a".repeat(40),
  authors: ["bot"],
  artifacts,
  testFiles,
  complete,
  problems: complete ? [] : ["incomplete"],
  needsUx,
  verdict,
});

/** The events that can arrive in a state (cycle reports and approvals depend on what is pending). */
function eventsFor(state: State, full: boolean): MachineEvent[] {
  const ctx = state.context;
  // Without `full`, only what moves the lane forward or loops a bounded number of times.
  const events: MachineEvent[] = [pushed(true, "accept")];
  if (full || state.value === "review") events.push(pushed(true, "refactor"));
  const step = ctx.pendingDispatch?.step;
  const outcomes = full ? (["valid", "invalid", "error"] as const) : (["valid", "invalid"] as const);
  if (step)
    for (const outcome of outcomes)
      events.push({
        type: "CYCLE_REPORTED",
        at,
        step,
        outcome,
        runId: 1,
        reasons: [],
        evidence: step === "release" ? { summary: "ok", databaseBranch: "f", checks: [] } : null,
      });
  for (const gate of GATES) {
    const hash = ctx.gates[gate].pendingHash;
    if (hash)
      events.push({
        type: "GATE_APPROVED",
        at,
        gate,
        approval: { approver: "lead", reviewId: 1, commit: "a".repeat(40), manifestHash: hash, at },
      });
  }
  if (full || state.value === "merging") events.push({ type: "MERGED", at, commit: "a".repeat(40) });
  if (full) {
    events.push(pushed(false, null), pushed(true, "accept", true));
    for (const gate of GATES)
      events.push({
        type: "GATE_APPROVED",
        at,
        gate,
        approval: { approver: "lead", reviewId: 2, commit: "b".repeat(40), manifestHash: "f".repeat(64), at },
      });
    for (const gate of GATES) events.push({ type: "GATE_WITHDRAWN", at, gate, reason: "review dismissed" });
    events.push({ type: "CYCLE_REPORTED", at, step: "red", outcome: "valid", runId: 1, reasons: [], evidence: null });
    events.push({ type: "PUSH_REJECTED", at, sha: "c".repeat(40), reasons: ["no trailer"], withdraw: null });
    events.push({ type: "PUSH_REJECTED", at, sha: "c".repeat(40), reasons: ["frozen"], withdraw: "design" });
    events.push({ type: "PUSH_REJECTED", at, sha: "c".repeat(40), reasons: ["frozen"], withdraw: "test-list" });
    events.push({ type: "BRANCH_RESET", at });
    events.push({ type: "RENEGOTIATE", at, by: "lead", scope: "test-list", from: "spec", reason: "r" });
    events.push({ type: "RENEGOTIATE", at, by: "lead", scope: "design", from: "architecture", reason: "r" });
    events.push(
      { type: "RETRY", at, by: "lead" },
      { type: "CLOSED", at, by: null },
      { type: "ABANDON", at, by: "lead", reason: "r" },
    );
  }
  return events;
}

/** Everything routing depends on, without the ever-growing history (dispatch counter, cycle log). */
function serialize(state: State): string {
  const c = state.context;
  return JSON.stringify([
    state.value,
    c.unitIndex,
    c.attempts,
    c.units.length,
    GATES.map((g) => [
      c.gates[g].status,
      c.gates[g].pendingHash !== null,
      c.gates[g].approvedHash === c.gates[g].pendingHash,
    ]),
    Object.entries(c.evidence).map(([id, e]) => [
      id,
      !!e.red,
      !!e.green,
      e.review?.verdict ?? null,
      !!e.refactor,
      e.complete,
    ]),
    c.pendingDispatch?.step ?? null,
    c.rejectedHead !== null,
    c.blocked?.resume ?? null,
    c.deployEvidence !== null,
    c.mergedCommit !== null,
    Object.keys(c.artifacts).length,
  ]);
}

const serializeEvent = (e: MachineEvent) =>
  JSON.stringify([
    e.type,
    "gate" in e ? e.gate : null,
    "outcome" in e ? e.outcome : null,
    "step" in e ? e.step : null,
    e.type === "STEP_PUSHED" ? [e.complete, e.verdict, e.needsUx] : null,
    e.type === "GATE_APPROVED" ? e.approval.reviewId : null,
    e.type === "PUSH_REJECTED" ? e.withdraw : null,
    e.type === "RENEGOTIATE" ? e.scope : null,
  ]);

/**
 * What a path did: which gates it approved (at the pending hash, moving the lane) and which units got
 * a valid RED and GREEN. In @xstate/graph a path starts with the initial state (an init step) and
 * each later step holds an event and the state it led to.
 */
function proofs(path: { state: State; steps: Array<{ state: State; event: MachineEvent }> }) {
  const gates = new Set<GateName>();
  const red = new Set<string>();
  const green = new Set<string>();
  path.steps.forEach(({ state: after, event }, i) => {
    if (i === 0) return;
    const before = path.steps[i - 1]!.state;
    const unit = before.context.units[before.context.unitIndex]?.id;
    if (
      event.type === "GATE_APPROVED" &&
      before.value !== after.value &&
      event.approval.manifestHash === before.context.gates[event.gate].pendingHash
    )
      gates.add(event.gate);
    if (event.type === "CYCLE_REPORTED" && event.outcome === "valid" && unit) {
      if (before.value === "red-verify" && event.step === "red" && after.value === "green") red.add(unit);
      if (before.value === "green-verify" && event.step === "green" && after.value === "review") green.add(unit);
    }
  });
  return { gates, red, green };
}

describe("graph paths of the track machine", () => {
  it("every simple path to done passes both design approvals, a valid RED and GREEN for every test, and the deploy and promote approvals", () => {
    const paths = getSimplePaths(trackMachine, {
      input,
      events: (s) => eventsFor(s, false),
      serializeState: serialize,
      serializeEvent,
      toState: (s) => s.value === "done",
    });
    expect(paths.length).toBeGreaterThan(1);
    for (const path of paths) {
      const { gates, red, green } = proofs(path);
      expect([...gates].sort()).toEqual(["deploy", "design", "promote", "test-list"]);
      expect([...red].sort()).toEqual(["T1", "T2"]);
      expect([...green].sort()).toEqual(["T1", "T2"]);
    }
  });

  // Rejected pushes only set a flag that the public transition() checks; they double the state
  // space, so they are left to the property test (test/orchestrator/machine-property.test.ts).
  it("with withdrawals, stale approvals, renegotiation, retries and errors too, done is reachable only with every gate approved at its hash and every unit's RED and GREEN recorded", () => {
    const map = getAdjacencyMap(trackMachine, {
      input,
      events: (s) => eventsFor(s, true).filter((e) => e.type !== "PUSH_REJECTED" && e.type !== "BRANCH_RESET"),
      serializeState: serialize,
      serializeEvent,
    });
    const states = Object.values(map).map((v) => v.state as State);
    expect(states.length).toBeGreaterThan(50);
    const done = states.filter((s) => s.value === "done");
    expect(done.length).toBeGreaterThan(0);
    for (const s of done) {
      for (const gate of GATES) {
        expect(s.context.gates[gate].status).toBe("approved");
        expect(s.context.gates[gate].approvedHash).toBe(s.context.gates[gate].pendingHash);
      }
      expect(s.context.units.map((u) => u.id)).toEqual(["T1", "T2"]);
      for (const unit of s.context.units)
        expect(s.context.evidence[unit.id]).toMatchObject({
          red: expect.anything(),
          green: expect.anything(),
          complete: true,
        });
    }
    // No state past the test-list gate has the design gate anything but approved, nor the build lane without an approved list.
    const afterTestList = [
      "red",
      "red-verify",
      "green",
      "green-verify",
      "repair",
      "review",
      "refactor",
      "refactor-verify",
      "deploying",
      "deploy-gate",
      "promote-gate",
      "merging",
      "promoting",
      "done",
    ];
    for (const s of states.filter((s) => afterTestList.includes(String(s.value)))) {
      expect(s.context.gates.design.status).toBe("approved");
      expect(s.context.gates["test-list"].status).toBe("approved");
    }
  });

  it("the shortest way to done walks the whole lane in order", () => {
    const [path] = getShortestPaths(trackMachine, {
      input,
      events: (s) => eventsFor(s, false),
      serializeState: serialize,
      serializeEvent,
      toState: (s) => s.value === "done",
    });
    const stages = path!.steps.map((s) => String(s.state.value));
    expect(stages).toEqual([
      "stories",
      "spec",
      "architecture",
      "db-design",
      "design-gate",
      "test-list",
      "test-list-gate",
      "red",
      "red-verify",
      "green",
      "green-verify",
      "review",
      "red",
      "red-verify",
      "green",
      "green-verify",
      "review",
      "deploying",
      "deploy-gate",
      "promote-gate",
      "merging",
      "promoting",
      "done",
    ]);
  });
});
