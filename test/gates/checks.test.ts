import { describe, expect, it } from "vitest";
import { CHECK_STATUSES, checkStates, gateCheck, isPlaceholder, TRACK_CHECKS } from "../../src/gates/checks.js";
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

describe("consort/build and consort/deploy at every stage of the lane", () => {
  const waitingDeploy = ["pending", "Not reached yet", ["The track has not reached the deploy gate yet."]];
  const notStarted = ["pending", "Not started", ["The build starts once the test list is approved."]];
  const allGreen = ["success", "Every test is green and reviewed", ["All 2 unit(s) verified RED → GREEN: T1, T2."]];
  const building = (stage: string) => ["pending", `T1 (1 of 2): ${stage}`, ["0 of 2 units done."]];
  const approvedDeploy = (sim: ReturnType<typeof reach>) => [
    "success",
    `Approved by @lead-human at ${sim.context.gates.deploy.pendingHash!.slice(0, 7)}`,
    ["Approved at the current frozen hash."],
  ];
  const expected: Record<string, (sim: ReturnType<typeof reach>) => unknown[][]> = {
    stories: () => [notStarted, waitingDeploy],
    "design-gate": () => [notStarted, waitingDeploy],
    "test-list-gate": () => [notStarted, waitingDeploy],
    red: () => [building("red"), waitingDeploy],
    "green-verify": () => [building("green-verify"), waitingDeploy],
    repair: () => [["failure", "T1 (1 of 2): repair", ["T1 failed: expected 1 rows, got 0"]], waitingDeploy],
    review: () => [building("review"), waitingDeploy],
    blocked: () => [["failure", "Blocked at T1: a person must decide", ["T1 still fails"]], waitingDeploy],
    deploying: () => [
      allGreen,
      [
        "pending",
        "Deploying a preview and verifying it",
        ["The release cycle deploys the track to a preview on its database branch and verifies it."],
      ],
    ],
    "deploy-gate": (sim) => [
      allGreen,
      [
        "pending",
        `Waiting for approval at ${sim.context.gates.deploy.pendingHash!.slice(0, 7)}`,
        [
          `Waiting for an approving review by an approver at manifest ${sim.context.gates.deploy.pendingHash!.slice(0, 12)}.`,
        ],
      ],
    ],
    "promote-gate": (sim) => [allGreen, approvedDeploy(sim)],
    done: (sim) => [allGreen, approvedDeploy(sim)],
  };
  const shown = (snapshot: TrackSnapshot) =>
    checkStates(snapshot)
      .filter((c) => c.name === "consort/build" || c.name === "consort/deploy")
      .map((c) => [c.status, c.title, c.details]);

  it.each(Object.keys(expected))("at %s, each says exactly where the build and the release stand", (stage) => {
    const sim = reach(stage as (typeof STAGES)[number]);
    expect(shown(sim.snapshot)).toEqual(expected[stage]!(sim));
  });

  it("every unit done is not success once the test list is no longer approved: the evidence is withdrawn", () => {
    const sim = reach("deploy-gate");
    const withdrawn = structuredClone(sim.snapshot);
    withdrawn.context.gates["test-list"] = {
      ...withdrawn.context.gates["test-list"],
      status: "withdrawn",
      withdrawnReason: ".consort/test-list.json changed after approval",
    };
    expect(shown(withdrawn)[0]).toEqual([
      "failure",
      "Build evidence withdrawn until the test list is approved again",
      [".consort/test-list.json changed after approval"],
    ]);
    const reopened = structuredClone(sim.snapshot);
    reopened.context.gates["test-list"] = { ...reopened.context.gates["test-list"], status: "pending" };
    expect(shown(reopened)[0]).toEqual([
      "failure",
      "Build evidence withdrawn until the test list is approved again",
      ["The test list changed."],
    ]);
  });

  it("an approved test list with no units proves nothing: the build is not started, never success", () => {
    const empty = structuredClone(reach("deploy-gate").snapshot);
    empty.context.units = [];
    empty.context.unitIndex = 0;
    expect(shown(empty)[0]).toEqual(notStarted);
  });

  it("a release cycle that failed while deploying fails consort/deploy with its reasons", () => {
    const failed = structuredClone(reach("deploying").snapshot);
    failed.context.lastProblem = ["GET /health: 502"];
    expect(shown(failed)[1]).toEqual(["failure", "The preview deploy failed", ["GET /health: 502"]]);
  });

  it("an abandoned track with no recorded reason says so", () => {
    const ended = structuredClone(reach("abandoned").snapshot);
    ended.context.ended = null;
    expect(checkStates(ended)[0]?.details).toEqual(["The track was abandoned: no reason given."]);
  });
});

describe("a gate's check, at the edges of its record", () => {
  it("a closed gate that was reopened says why", () => {
    expect(gateCheck("design", record({ withdrawnReason: "the design gate was reopened (renegotiated)" }))).toEqual({
      status: "pending",
      title: "Not reached yet",
      details: ["The track has not reached the design gate yet.", "the design gate was reopened (renegotiated)"],
    });
  });

  it("an open gate that names no manifest fails: no approval could count", () => {
    expect(gateCheck("test-list", record({ status: "pending" }))).toEqual({
      status: "failure",
      title: "Nothing to approve",
      details: ["The test-list gate is open but names no manifest to approve, so no approval can count."],
    });
  });

  it("an approved gate with no approved hash fails, naming none", () => {
    expect(
      gateCheck("design", record({ status: "approved", pendingHash: PENDING, approvals: [approval("lee")] })),
    ).toEqual({
      status: "failure",
      title: "Approval is for other files",
      details: [
        "The approval at none does not match the current frozen hash 5d1e6a7: approve again at the current commit.",
      ],
    });
  });

  it("an approved gate that names no current hash fails, naming none as the current one", () => {
    expect(
      gateCheck("design", record({ status: "approved", approvedHash: PENDING, approvals: [approval("lee")] })),
    ).toEqual({
      status: "failure",
      title: "Approval is for other files",
      details: [
        "The approval at 5d1e6a7 does not match the current frozen hash none: approve again at the current commit.",
      ],
    });
  });

  it("a withdrawn gate with no reason and no manifest still fails, saying to approve again", () => {
    expect(gateCheck("promote", record({ status: "withdrawn" }))).toEqual({
      status: "failure",
      title: "Approval withdrawn",
      details: ["The approval was withdrawn; approve again."],
    });
  });
});

describe("consort/discipline", () => {
  it("passes, saying what held, while every commit was the step in turn", () => {
    expect(checkStates(reach("red").snapshot).find((c) => c.name === "consort/discipline")).toEqual({
      name: "consort/discipline",
      status: "success",
      title: "Every commit was the step in turn, by its role, on its own paths",
      details: [],
    });
  });

  it("fails on a refused commit, naming it and the commit to reset the branch to, with every reason", () => {
    const sim = reach("red");
    const head = sim.context.head;
    sim.push({ role: "driver", files: { "src/services/stock.ts": "export const early = true;\n" } });
    const refused = sim.context.rejectedHead!;
    expect(checkStates(sim.snapshot).find((c) => c.name === "consort/discipline")).toEqual({
      name: "consort/discipline",
      status: "failure",
      title: `Commit ${refused.sha.slice(0, 7)} refused: reset the branch to ${head.slice(0, 7)}`,
      details: refused.reasons,
    });
    expect(refused.reasons.length).toBeGreaterThan(0);
  });
});

it("a test list withdrawn before any unit was made still fails consort/build: nothing stands behind it", () => {
  const early = structuredClone(reach("test-list-gate").snapshot);
  early.context.gates["test-list"] = { ...early.context.gates["test-list"], status: "withdrawn", withdrawnReason: "r" };
  expect(checkStates(early).find((c) => c.name === "consort/build")).toMatchObject({
    status: "failure",
    title: "Build evidence withdrawn until the test list is approved again",
    details: ["r"],
  });
});

describe("placeholder checks (left unwritten on a new head)", () => {
  it("only a pending check that has not been reached or started holds a place", () => {
    expect(isPlaceholder({ status: "pending", title: "Not reached yet" })).toBe(true);
    expect(isPlaceholder({ status: "pending", title: "Not started" })).toBe(true);
    expect(isPlaceholder({ status: "failure", title: "Not started" })).toBe(false);
    expect(isPlaceholder({ status: "failure", title: "Not reached yet" })).toBe(false);
    expect(isPlaceholder({ status: "pending", title: "Waiting for approval at 5d1e6a7" })).toBe(false);
  });
});
