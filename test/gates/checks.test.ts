import { describe, expect, it } from "vitest";
import { CHECK_STATUSES, checkStates, gateCheck, TRACK_CHECKS } from "../../src/gates/checks.js";
import { STAGES, type ApprovalRecord, type GateRecord, type TrackSnapshot } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";

/**
 * The one answer to "is this check green" (src/gates/checks.ts): each gate record and each stage
 * of a StockFlow track, and what every Consort check then shows.
 */

const PENDING = "5d1e6a7c".padEnd(64, "0");
const OTHER = "f".repeat(64);

const record = (overrides: Partial<GateRecord>): GateRecord => ({
  status: "closed",
  pendingHash: null,
  approvedHash: null,
  files: {},
  authors: [],
  approvals: [],
  withdrawnReason: null,
  ...overrides,
});
const approval = (approver: string, manifestHash = PENDING): ApprovalRecord => ({
  approver,
  reviewId: 11,
  commit: "a".repeat(40),
  manifestHash,
  at: "2026-11-30T05:20:00Z",
});
const approvedAt = (hash: string) =>
  record({ status: "approved", pendingHash: PENDING, approvedHash: hash, approvals: [approval("lee", hash)] });
const statusOf = (snapshot: TrackSnapshot) =>
  Object.fromEntries(checkStates(snapshot).map((check) => [check.name, check.status]));

describe("a gate's check", () => {
  it("passes when approved at the manifest it is pending on, naming who approved", () => {
    expect(gateCheck("design", approvedAt(PENDING))).toEqual({
      status: "success",
      title: "Approved by @lee at 5d1e6a7",
      details: ["Approved at the current frozen hash."],
    });
  });

  it("an approval at a hash that is no longer current fails the gate with the reason", () => {
    expect(gateCheck("design", approvedAt(OTHER))).toEqual({
      status: "failure",
      title: "Approval is for other files",
      details: [
        "The approval at fffffff does not match the current frozen hash 5d1e6a7: approve again at the current commit.",
      ],
    });
  });

  it("a gate waiting for approval is in progress, never a passing conclusion, and names the manifest to approve", () => {
    expect(gateCheck("design", record({ status: "pending", pendingHash: PENDING }))).toEqual({
      status: "pending",
      title: "Waiting for approval at 5d1e6a7",
      details: [`Waiting for an approving review by an approver at manifest ${PENDING.slice(0, 12)}.`],
    });
  });

  it("a withdrawn approval fails the gate", () => {
    const withdrawn = record({
      status: "withdrawn",
      pendingHash: PENDING,
      approvedHash: PENDING,
      approvals: [approval("lee")],
      withdrawnReason: ".consort/spec.json changed after approval",
    });
    expect(gateCheck("design", withdrawn)).toEqual({
      status: "failure",
      title: "Approval withdrawn",
      details: [".consort/spec.json changed after approval", `Approve again at manifest ${PENDING}.`],
    });
  });

  it("an approved gate that holds no approval at its hash fails closed", () => {
    const bare = record({ status: "approved", pendingHash: PENDING, approvedHash: PENDING, approvals: [] });
    expect(gateCheck("deploy", bare)).toEqual({
      status: "failure",
      title: "No approval recorded",
      details: ["The deploy gate is marked approved but holds no approval at 5d1e6a7: approve again."],
    });
  });

  it("names each approver at the current hash once, whatever the case of their login", () => {
    const twice = record({
      status: "approved",
      pendingHash: PENDING,
      approvedHash: PENDING,
      approvals: [approval("lee"), approval("sam", OTHER), approval("Lee"), approval("kim")],
    });
    expect(gateCheck("design", twice).title).toBe("Approved by @lee, @kim at 5d1e6a7");
  });

  it("no gate record yields neutral or skipped, and only an approval at the current hash yields success", () => {
    const records: GateRecord[] = [
      record({}),
      record({ withdrawnReason: "the design gate was reopened (renegotiated)" }),
      record({ status: "pending", pendingHash: PENDING }),
      record({ status: "pending" }),
      approvedAt(PENDING),
      approvedAt(OTHER),
      record({ status: "approved", pendingHash: PENDING, approvedHash: PENDING }),
      record({ status: "withdrawn", pendingHash: PENDING, withdrawnReason: "r" }),
    ];
    for (const gate of ["design", "test-list", "deploy", "promote"] as const) {
      for (const candidate of records) {
        const check = gateCheck(gate, candidate);
        expect(CHECK_STATUSES).toContain(check.status);
        if (check.status === "success") expect(candidate).toBe(records[4]);
      }
    }
  });
});

describe("every check of a track", () => {
  it("at every stage of the lane the six snapshot checks are each pending, success or failure, in contract order", () => {
    for (const stage of STAGES) {
      const checks = checkStates(reach(stage).snapshot);
      expect(checks.map((c) => c.name)).toEqual([...TRACK_CHECKS]);
      for (const check of checks) expect(CHECK_STATUSES).toContain(check.status);
    }
  });

  it("the deploy and promote gates are not success before their approval", () => {
    expect(statusOf(reach("deploy-gate").snapshot)).toMatchObject({
      "consort/build": "success",
      "consort/deploy": "pending",
      "consort/promote": "pending",
    });
    const atPromote = reach("promote-gate");
    expect(statusOf(atPromote.snapshot)).toMatchObject({ "consort/deploy": "success", "consort/promote": "pending" });
    expect(checkStates(atPromote.snapshot).find((c) => c.name === "consort/promote")?.title).toBe(
      `Waiting for approval at ${atPromote.context.gates.promote.pendingHash!.slice(0, 7)}`,
    );
  });

  it("while the release cycle runs consort/deploy is in progress; a preview that did not verify fails it, not the build", () => {
    const sim = reach("deploying");
    expect(checkStates(sim.snapshot).find((c) => c.name === "consort/deploy")).toEqual({
      name: "consort/deploy",
      status: "pending",
      title: "Deploying a preview and verifying it",
      details: ["The release cycle deploys the track to a preview on its database branch and verifies it."],
    });
    sim.expectAccepted(sim.report("invalid", ["GET /health: 502"]));
    expect(sim.stage).toBe("blocked");
    expect(checkStates(sim.snapshot).find((c) => c.name === "consort/deploy")).toEqual({
      name: "consort/deploy",
      status: "failure",
      title: "The preview deploy did not verify",
      details: ["GET /health: 502"],
    });
    expect(statusOf(sim.snapshot)["consort/build"]).toBe("success");
  });

  it("a build blocked at its repair bound fails consort/build with the reason", () => {
    const sim = reach("blocked");
    expect(checkStates(sim.snapshot).find((c) => c.name === "consort/build")).toEqual({
      name: "consort/build",
      status: "failure",
      title: "Blocked at T1: a person must decide",
      details: ["T1 still fails"],
    });
  });

  it("an abandoned track fails every check with why it ended", () => {
    expect(checkStates(reach("abandoned").snapshot)).toEqual(
      TRACK_CHECKS.map((name) => ({
        name,
        status: "failure",
        title: "Track abandoned",
        details: ["The track was abandoned: feature dropped."],
      })),
    );
  });

  it("a done track passes every check", () => {
    expect(Object.values(statusOf(reach("done").snapshot))).toEqual(TRACK_CHECKS.map(() => "success"));
  });

  it("an approval passes the gate at the current hash only", () => {
    const sim = reach("design-gate");
    sim.expectAccepted(sim.approve("design", "lee"));
    const hash = sim.context.gates.design.approvedHash!;
    expect(checkStates(sim.snapshot)[0]).toEqual({
      name: "consort/design",
      status: "success",
      title: `Approved by @lee at ${hash.slice(0, 7)}`,
      details: ["Approved at the current frozen hash."],
    });
    const moved = structuredClone(sim.snapshot);
    moved.context.gates.design.pendingHash = OTHER;
    expect(checkStates(moved)[0]).toMatchObject({ status: "failure", title: "Approval is for other files" });
  });
});
