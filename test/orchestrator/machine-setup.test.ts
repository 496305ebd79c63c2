import { describe, expect, it } from "vitest";
import { transition as machineTransition } from "xstate";
import { trackMachine } from "../../src/orchestrator/machine.js";
import type { MachineEvent } from "../../src/orchestrator/machine-setup.js";
import type { Effect, GateName, TrackContext, TrackSnapshot } from "../../src/orchestrator/types.js";
import { reach } from "./helpers/reach.js";

/**
 * The guards and actions of src/orchestrator/machine-setup.ts, driven through the machine alone with
 * its internal events: src/orchestrator/transition.ts refuses most wrong events before they get
 * here, and the guards are what still holds when it does not. Each case starts from a track driven
 * to its stage through the public API.
 */

const at = "2026-11-30T12:00:00Z";

/** One internal event, from a snapshot: the stage after it, the context, the effects described. */
function send(snapshot: TrackSnapshot, event: MachineEvent, context: Partial<TrackContext> = {}) {
  const state = trackMachine.resolveState({ value: snapshot.stage, context: { ...snapshot.context, ...context } });
  const [next, actions] = machineTransition(trackMachine, state, event);
  return {
    taken: next !== state,
    stage: next.value,
    context: next.context,
    effects: actions.filter((a) => a.type === "emit").map((a) => a.params as Effect),
  };
}

const approval = (gate: GateName, manifestHash: string): MachineEvent => ({
  type: "GATE_APPROVED",
  at,
  gate,
  approval: { approver: "lead-human", reviewId: 9, commit: "e".repeat(40), manifestHash, at },
});

const pushed = (over: Partial<Extract<MachineEvent, { type: "STEP_PUSHED" }>> = {}): MachineEvent => ({
  type: "STEP_PUSHED",
  at,
  head: "f".repeat(40),
  authors: ["someone"],
  artifacts: {},
  testFiles: {},
  complete: true,
  problems: [],
  needsUx: false,
  verdict: null,
  ...over,
});

const reported = (
  step: Extract<MachineEvent, { type: "CYCLE_REPORTED" }>["step"],
  outcome: "valid" | "invalid" | "error",
  reasons: string[] = [],
): MachineEvent => ({
  type: "CYCLE_REPORTED",
  at,
  step,
  outcome,
  runId: 7,
  reasons,
  evidence: step === "release" ? { summary: "up", databaseBranch: "feature-f1-stock", checks: [] } : null,
});

describe("the approval guards", () => {
  it("take an approval of the gate in turn at its pending manifest, and record it", () => {
    const sim = reach("design-gate");
    const pending = sim.context.gates.design.pendingHash!;
    const after = send(sim.snapshot, approval("design", pending));
    expect(after.stage).toBe("test-list");
    expect(after.context.gates.design).toMatchObject({
      status: "approved",
      approvedHash: pending,
      withdrawnReason: null,
    });
    expect(after.context.gates.design.approvals.at(-1)).toEqual({
      approver: "lead-human",
      reviewId: 9,
      commit: "e".repeat(40),
      manifestHash: pending,
      at,
    });
  });

  it("refuse an approval at another manifest", () => {
    const sim = reach("design-gate");
    expect(send(sim.snapshot, approval("design", "0".repeat(64))).taken).toBe(false);
  });

  it("refuse an approval of another gate, even one carrying the pending manifest", () => {
    const sim = reach("design-gate");
    const pending = sim.context.gates.design.pendingHash!;
    for (const gate of ["test-list", "deploy", "promote"] as const)
      expect(send(sim.snapshot, approval(gate, pending)).taken).toBe(false);
    const deploy = reach("deploy-gate");
    expect(send(deploy.snapshot, approval("promote", deploy.context.gates.deploy.pendingHash!)).taken).toBe(false);
    const promote = reach("promote-gate");
    expect(send(promote.snapshot, approval("deploy", promote.context.gates.promote.pendingHash!)).taken).toBe(false);
  });

  it("refuse an approval when no manifest is pending", () => {
    const sim = reach("design-gate");
    const gates = sim.context.gates;
    const closed = { ...gates, design: { ...gates.design, pendingHash: null } };
    expect(send(sim.snapshot, approval("design", gates.design.pendingHash!), { gates: closed }).taken).toBe(false);
  });
});

describe("the push guards", () => {
  it("move a design step on only when its output is complete", () => {
    const sim = reach("spec");
    expect(send(sim.snapshot, pushed({ complete: false, problems: ["nfrs missing"] }))).toMatchObject({
      stage: "spec",
    });
    expect(send(sim.snapshot, pushed({ complete: false })).context.lastProblem).toEqual([]);
    expect(send(sim.snapshot, pushed()).stage).toBe("architecture");
  });

  it("visit the screens only for a complete database design with a user-facing story", () => {
    const sim = reach("db-design");
    expect(send(sim.snapshot, pushed({ needsUx: true })).stage).toBe("ux");
    expect(send(sim.snapshot, pushed({ needsUx: true, complete: false })).stage).toBe("db-design");
    expect(send(sim.snapshot, pushed()).stage).toBe("design-gate");
  });

  it("take a review's verdict only when the review is complete", () => {
    const sim = reach("review");
    expect(send(sim.snapshot, pushed({ verdict: "refactor", complete: false })).stage).toBe("review");
    expect(send(sim.snapshot, pushed({ verdict: "accept", complete: false })).stage).toBe("review");
    expect(send(sim.snapshot, pushed({ verdict: null })).stage).toBe("review");
    expect(send(sim.snapshot, pushed({ verdict: "refactor" })).stage).toBe("refactor");
    // T1 of two: accepting it starts T2, not the release.
    const accepted = send(sim.snapshot, pushed({ verdict: "accept" }));
    expect([accepted.stage, accepted.context.unitIndex]).toEqual(["red", 1]);
    expect(accepted.context.evidence.T1).toMatchObject({
      complete: true,
      review: { verdict: "accept", commit: "f".repeat(40), at },
    });
  });

  it("send the last unit's accepted review to the release", () => {
    const sim = reach("review");
    const units = sim.context.units.slice(0, 1);
    expect(send(sim.snapshot, pushed({ verdict: "accept" }), { units }).stage).toBe("deploying");
    expect(send(sim.snapshot, pushed({ verdict: "accept", complete: false }), { units }).stage).toBe("review");
  });
});

describe("the report guards", () => {
  it("take only a report of the pending step", () => {
    const sim = reach("red-verify");
    for (const step of ["green", "refactor", "release", "promote"] as const)
      expect(send(sim.snapshot, reported(step, "valid")).taken).toBe(false);
    expect(send(sim.snapshot, reported("red", "valid")).stage).toBe("green");
  });

  it("take no report when nothing is pending", () => {
    const sim = reach("red-verify");
    expect(send(sim.snapshot, reported("red", "valid"), { pendingDispatch: null }).taken).toBe(false);
    const promoting = reach("promoting");
    expect(send(promoting.snapshot, reported("promote", "invalid"), { pendingDispatch: null }).taken).toBe(false);
  });

  it("send a failed GREEN to repair while attempts remain, then block", () => {
    const sim = reach("green-verify");
    expect(sim.context.settings.repairBound).toBe(2);
    const first = send(sim.snapshot, reported("green", "invalid", ["T1 fails"]), { attempts: 0 });
    expect([first.stage, first.context.attempts, first.context.lastProblem]).toEqual(["repair", 1, ["T1 fails"]]);
    const last = send(sim.snapshot, reported("green", "invalid", ["T1 fails"]), { attempts: 1 });
    expect([last.stage, last.context.blocked, last.context.attempts]).toEqual([
      "blocked",
      { reason: "T1 fails", resume: "repair" },
      2,
    ]);
    const silent = send(sim.snapshot, reported("green", "invalid"), { attempts: 1 });
    expect(silent.context.blocked).toEqual({ reason: "verification failed", resume: "repair" });
  });

  it("finish the build after the last unit's verified refactor, and start the next unit before it", () => {
    const sim = reach("refactor-verify");
    expect(sim.context.unitIndex).toBe(0);
    const next = send(sim.snapshot, reported("refactor", "valid"));
    expect([next.stage, next.context.unitIndex]).toEqual(["red", 1]);
    const units = sim.context.units.slice(0, 1);
    expect(send(sim.snapshot, reported("refactor", "valid"), { units }).stage).toBe("deploying");
    expect(send(sim.snapshot, reported("refactor", "invalid"), { units, attempts: 0 }).stage).toBe("refactor");
  });
});

describe("the withdrawal guards", () => {
  it("send a rejected push back to the approved gate whose frozen files it changed", () => {
    const sim = reach("green");
    const rejected = (withdraw: "design" | "test-list" | null): MachineEvent => ({
      type: "PUSH_REJECTED",
      at,
      sha: "d".repeat(40),
      reasons: ["frozen"],
      withdraw,
    });
    const list = send(sim.snapshot, rejected("test-list"));
    expect(list.stage).toBe("test-list-gate");
    expect(list.context.gates.design.status).toBe("approved");
    expect(list.context.gates["test-list"]).toMatchObject({
      status: "withdrawn",
      withdrawnReason: "a frozen file changed in ddddddd",
    });
    expect(send(sim.snapshot, rejected("design")).stage).toBe("design-gate");
    const none = send(sim.snapshot, rejected(null));
    expect([none.stage, none.context.rejectedHead]).toEqual([
      "green",
      { sha: "d".repeat(40), reasons: ["frozen"], at },
    ]);
    // A gate that is not approved has nothing to withdraw: the rejection is only recorded.
    const gates = sim.context.gates;
    const pending = { ...gates, "test-list": { ...gates["test-list"], status: "withdrawn" as const } };
    expect(send(sim.snapshot, rejected("test-list"), { gates: pending }).stage).toBe("green");
  });

  it("send a withdrawn approval back to its gate, only when that gate is approved", () => {
    const sim = reach("promote-gate");
    const withdrawn = (gate: GateName): MachineEvent => ({ type: "GATE_WITHDRAWN", at, gate, reason: "dismissed" });
    const deploy = send(sim.snapshot, withdrawn("deploy"));
    expect(deploy.stage).toBe("deploy-gate");
    expect(deploy.context.gates.deploy).toMatchObject({
      status: "pending",
      withdrawnReason: "dismissed",
    });
    expect(deploy.context.gates.design.status).toBe("approved");
    expect(send(sim.snapshot, withdrawn("test-list")).stage).toBe("test-list-gate");
    expect(send(sim.snapshot, withdrawn("promote")).taken).toBe(false);
  });
});

describe("the retry and renegotiation guards", () => {
  it("resume a blocked track at the stage it was blocked in", () => {
    const sim = reach("blocked");
    expect(sim.context.blocked?.resume).toBe("repair");
    const resumed = send(sim.snapshot, { type: "RETRY", at, by: "lead" });
    expect([resumed.stage, resumed.context.blocked, resumed.context.attempts]).toEqual(["repair", null, 0]);
    const release = { reason: "502", resume: "deploying" as const };
    expect(send(sim.snapshot, { type: "RETRY", at, by: "lead" }, { blocked: release }).stage).toBe("deploying");
    expect(send(sim.snapshot, { type: "RETRY", at, by: "lead" }, { blocked: null }).taken).toBe(false);
  });

  it("reopen the design step a renegotiation names, and the test list whatever step it names", () => {
    const sim = reach("design-gate");
    const renegotiate = (scope: "design" | "test-list", from: "spec" | "architecture"): MachineEvent => ({
      type: "RENEGOTIATE",
      at,
      by: "lead",
      scope,
      from,
      reason: "r",
    });
    expect(send(sim.snapshot, renegotiate("design", "architecture")).stage).toBe("architecture");
    expect(send(sim.snapshot, renegotiate("design", "spec")).stage).toBe("spec");
    // The test list is not open to renegotiation before its gate.
    expect(send(sim.snapshot, renegotiate("test-list", "spec")).taken).toBe(false);
    const red = reach("red");
    const reopened = send(red.snapshot, renegotiate("test-list", "architecture"));
    expect(reopened.stage).toBe("test-list");
    expect(reopened.context.gates["test-list"].withdrawnReason).toBe("renegotiated by lead: r");
  });
});

describe("the actions", () => {
  it("apply a push's texts, a null removing the file, and take its problems", () => {
    const sim = reach("red");
    const after = send(
      sim.snapshot,
      pushed({
        testFiles: { "test/stock.test.ts": null, "test/new.test.ts": "it('n', () => {});\n" },
        artifacts: { ".consort/notes.json": "{}" },
        problems: ["a warning"],
      }),
    );
    expect(after.context.testFiles).toEqual({ "test/new.test.ts": "it('n', () => {});\n" });
    expect(after.context.artifacts[".consort/notes.json"]).toBe("{}");
    expect(after.context.artifacts).toMatchObject(sim.context.artifacts);
    expect([after.context.head, after.context.lastProblem]).toEqual(["f".repeat(40), ["a warning"]]);
  });

  it("record a rejected commit with the accepted tree when known, and clear it on a reset", () => {
    const sim = reach("green");
    const base: Extract<MachineEvent, { type: "PUSH_REJECTED" }> = {
      type: "PUSH_REJECTED",
      at,
      sha: "d".repeat(40),
      reasons: ["r"],
      withdraw: null,
    };
    expect(send(sim.snapshot, { ...base, acceptedTree: "a".repeat(40) }).context.rejectedHead).toEqual({
      sha: "d".repeat(40),
      reasons: ["r"],
      at,
      acceptedTree: "a".repeat(40),
    });
    const rejected = send(sim.snapshot, base).context;
    expect(rejected.rejectedHead).toEqual({ sha: "d".repeat(40), reasons: ["r"], at });
    const snapshot = { ...sim.snapshot, context: rejected };
    expect(send(snapshot, { type: "BRANCH_RESET", at }).context).toMatchObject({
      rejectedHead: null,
      head: sim.context.head,
    });
    expect(send(snapshot, { type: "BRANCH_RESET", at, head: "9".repeat(40) }).context).toMatchObject({
      rejectedHead: null,
      head: "9".repeat(40),
    });
  });

  it("move the head on an update, recording merges and following a rebase's replays", () => {
    const sim = reach("green");
    const redCommit = sim.context.frozenTests.T1!.commit;
    const plain = send(sim.snapshot, {
      type: "BRANCH_UPDATED",
      at,
      head: "1".repeat(40),
      migrationConflicts: ["0002"],
    });
    expect(plain.stage).toBe("green");
    expect(plain.context).toMatchObject({ head: "1".repeat(40), migrationConflicts: ["0002"] });
    expect(plain.context.updateMerges).toBeUndefined();
    expect(plain.context.frozenTests).toBe(sim.context.frozenTests);
    const merged = send(
      sim.snapshot,
      { type: "BRANCH_UPDATED", at, head: "1".repeat(40), migrationConflicts: [], merges: ["2".repeat(40)] },
      { updateMerges: ["3".repeat(40)] },
    );
    expect(merged.context.updateMerges).toEqual(["3".repeat(40), "2".repeat(40)]);
    expect(
      send(sim.snapshot, {
        type: "BRANCH_UPDATED",
        at,
        head: "1".repeat(40),
        migrationConflicts: [],
        merges: ["2".repeat(40)],
      }).context.updateMerges,
    ).toEqual(["2".repeat(40)]);
    const rebased = send(sim.snapshot, {
      type: "BRANCH_UPDATED",
      at,
      head: "1".repeat(40),
      migrationConflicts: [],
      replayed: [
        { from: redCommit, to: "4".repeat(40) },
        { from: "5".repeat(40), to: "6".repeat(40) },
      ],
    });
    expect(rebased.context.frozenTests.T1).toEqual({ ...sim.context.frozenTests.T1, commit: "4".repeat(40) });
    const elsewhere = send(sim.snapshot, {
      type: "BRANCH_UPDATED",
      at,
      head: "1".repeat(40),
      migrationConflicts: [],
      replayed: [{ from: "5".repeat(40), to: "6".repeat(40) }],
    });
    expect(elsewhere.context.frozenTests.T1).toEqual(sim.context.frozenTests.T1);
  });

  it("on an update at the release withdraw only the release, not the design or the test list", () => {
    const sim = reach("deploy-gate");
    const after = send(sim.snapshot, { type: "BRANCH_UPDATED", at, head: "1".repeat(40), migrationConflicts: [] });
    expect(after.stage).toBe("deploying");
    expect([after.context.gates.design.status, after.context.gates["test-list"].status]).toEqual([
      "approved",
      "approved",
    ]);
    expect(after.context.deployEvidence).toBeNull();
    expect(after.context.gates.deploy.status).toBe("closed");
  });

  it("hash the deploy evidence canonically (keys sorted, undefined left out), and open the deploy gate on that hash", async () => {
    const { hashFrozenText, manifestHashFromHashes } = await import("../../src/gates/hash.js");
    const sim = reach("deploying");
    const report = (evidence: unknown): MachineEvent => ({
      type: "CYCLE_REPORTED",
      at,
      step: "release",
      outcome: "valid",
      runId: 7,
      reasons: [],
      evidence: evidence as never,
    });
    const evidence = {
      summary: "up",
      databaseBranch: "feature-f1-stock",
      notes: undefined,
      checks: [
        { ok: true, name: "GET /health", detail: "200" },
        { name: "GET /", ok: true },
      ],
    };
    const after = send(sim.snapshot, report(evidence));
    expect(after.stage).toBe("deploy-gate");
    const canonical =
      '{"checks":[{"detail":"200","name":"GET /health","ok":true},{"name":"GET /","ok":true}],"databaseBranch":"feature-f1-stock","summary":"up"}';
    expect(after.context.deployEvidence).toEqual({
      dispatchId: sim.context.pendingDispatch!.dispatchId,
      commit: sim.context.pendingDispatch!.commit,
      hash: hashFrozenText(canonical),
      evidence,
    });
    expect(after.context.gates.deploy.pendingHash).toBe(
      manifestHashFromHashes({ "deploy-evidence": hashFrozenText(canonical) }),
    );
    const reordered = {
      checks: [
        { name: "GET /health", detail: "200", ok: true },
        { ok: true, name: "GET /" },
      ],
      databaseBranch: "feature-f1-stock",
      summary: "up",
    };
    expect(send(sim.snapshot, report(reordered)).context.deployEvidence!.hash).toBe(hashFrozenText(canonical));
    expect(() => send(sim.snapshot, report(null))).toThrow(
      `the release cycle ${sim.context.pendingDispatch!.dispatchId} reported no deploy evidence`,
    );
    expect(() => send(sim.snapshot, report({ summary: "a build cycle's evidence" }))).toThrow(
      /reported no deploy evidence/,
    );
  });

  it("record a report on its own cycle only, and clear the problems once valid", () => {
    // The second GREEN of T1 (after a repair): three cycles, the pending one last.
    const sim = reach("repair");
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "// repaired\n" } }));
    expect(sim.stage).toBe("green-verify");
    const cycles = sim.context.cycles;
    expect(cycles.map((c) => c.step)).toEqual(["red", "green", "green"]);
    const after = send(sim.snapshot, reported("green", "valid", ["a note"]), { lastProblem: ["old"] });
    expect(after.context.lastProblem).toEqual([]);
    expect(after.context.pendingDispatch).toBeNull();
    expect(after.context.cycles.slice(0, -1)).toEqual(cycles.slice(0, -1));
    expect(after.context.cycles.at(-1)).toEqual({
      ...cycles.at(-1),
      runId: 7,
      outcome: "valid",
      reasons: ["a note"],
      reportedAt: at,
      evidence: null,
    });
    const pending = cycles.at(-1)!;
    expect(after.context.evidence.T1!.green).toEqual({ dispatchId: pending.dispatchId, commit: pending.commit, at });
  });

  it("stamp each step's evidence with its own cycle", () => {
    const sim = reach("refactor-verify");
    const pending = sim.context.cycles.at(-1)!;
    expect(sim.context.cycles.length).toBeGreaterThan(2);
    const after = send(sim.snapshot, reported("refactor", "valid"));
    expect(after.context.evidence.T1).toMatchObject({
      refactor: { dispatchId: pending.dispatchId, commit: pending.commit, at },
      review: { verdict: "refactor" },
      complete: true,
    });
    const red = reach("red-verify");
    const redPending = red.context.cycles.at(-1)!;
    const frozen = send(red.snapshot, reported("red", "valid"));
    expect(frozen.context.evidence.T1!.red).toEqual({
      dispatchId: redPending.dispatchId,
      commit: redPending.commit,
      at,
    });
  });

  it("freeze only the test files the track holds, without touching the snapshot it started from", () => {
    const sim = reach("red-verify");
    const before = JSON.stringify(sim.snapshot);
    const after = send(sim.snapshot, reported("red", "valid"), {
      testFiles: { ...sim.context.testFiles, "test/helpers/db.ts": "export const db = 1;\n" },
    });
    expect(Object.keys(after.context.frozenTests)).toEqual(["T1", "T1 test/helpers/db.ts"]);
    expect(JSON.stringify(sim.snapshot)).toBe(before);
    const missing = send(sim.snapshot, reported("red", "valid"), { testFiles: {} });
    expect([missing.stage, missing.context.frozenTests, missing.context.frozenTexts]).toEqual(["green", {}, {}]);
  });

  it("block with every reason, and unblock with the problems cleared", () => {
    const sim = reach("green-verify");
    const blocked = send(sim.snapshot, reported("green", "invalid", ["T1 fails", "T0 broke"]), { attempts: 1 });
    expect(blocked.context.blocked).toEqual({ reason: "T1 fails; T0 broke", resume: "repair" });
    const retried = send(
      { ...sim.snapshot, stage: "blocked", context: blocked.context },
      { type: "RETRY", at, by: "lead" },
    );
    expect([retried.stage, retried.context.lastProblem, retried.context.updatedAt]).toEqual(["repair", [], at]);
  });

  it("record the merged commit, and promote that commit", () => {
    const sim = reach("merging");
    const after = send(sim.snapshot, { type: "MERGED", at, commit: "7".repeat(40) });
    expect([after.stage, after.context.mergedCommit]).toEqual(["promoting", "7".repeat(40)]);
    expect(after.effects).toContainEqual(expect.objectContaining({ type: "promoteDatabase", commit: "7".repeat(40) }));
  });

  it("keep the review on the last unit when its push carries no verdict", () => {
    const sim = reach("review");
    const units = sim.context.units.slice(0, 1);
    expect(send(sim.snapshot, pushed({ verdict: null }), { units }).stage).toBe("review");
  });

  it("resume at the release when the re-approved list has no unit left to build", () => {
    const sim = reach("deploy-gate");
    const gates = sim.context.gates;
    const hash = gates["test-list"].approvedHash!;
    const reopened = {
      ...gates,
      "test-list": { ...gates["test-list"], status: "withdrawn" as const, pendingHash: hash },
    };
    const after = send({ ...sim.snapshot, stage: "test-list-gate" }, approval("test-list", hash), { gates: reopened });
    expect(after.stage).toBe("deploying");
  });
});
