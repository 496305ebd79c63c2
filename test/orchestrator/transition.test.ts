import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { ConsortConfig, defaultConfig } from "../../src/config/consort-config.js";
import { gitBlobId } from "../../src/gates/hash.js";
import {
  createTrack,
  DESIGN_STEPS,
  eventProblems,
  nextAction,
  pathsToRead,
  restoreSnapshot,
  runnerPackagesToRead,
  runnerPathsToRead,
  SnapshotError,
  STAGES,
  transition,
} from "../../src/orchestrator/index.js";
import type { TrackEvent, TrackSnapshot, TransitionResult } from "../../src/orchestrator/types.js";
import { reach } from "./helpers/reach.js";
import { edited } from "./fixtures/stockflow.js";
import { sha, smallDesign, type TrackSim } from "./helpers/track.js";

/**
 * src/orchestrator/transition.ts's translation of each public event: every refusal it decides
 * before the machine sees the event, by its exact reason, with the snapshot handed back unchanged
 * and nothing to do; and the notes and reasons it adds to what it lets through.
 */

const at = "2026-11-30T12:00:00Z";
const short = (s: string) => s.slice(0, 7);

/** Refused before the machine: the same snapshot object back, no effect, exactly these reasons. */
function expectRefused(before: TrackSnapshot, result: TransitionResult, reasons: string[]) {
  expect(result).toEqual({ snapshot: before, effects: [], rejection: { reasons } });
  expect(result.snapshot).toBe(before);
}

/** `sim.send` from where it stands, returning the snapshot it stood at too. */
function sendFrom(sim: TrackSim, event: TrackEvent): [TrackSnapshot, TransitionResult] {
  const before = sim.snapshot;
  return [before, sim.send(event)];
}

const approval = (sim: TrackSim, gate: "design" | "test-list" | "deploy" | "promote", manifestHash?: string) =>
  ({
    type: "gate.approved",
    at,
    gate,
    manifestHash: manifestHash ?? sim.context.gates[gate].pendingHash ?? "0".repeat(64),
    approver: "lead-human",
    reviewId: 77,
    commit: sim.context.head,
  }) as const;

const comments = (result: TransitionResult) => result.effects.flatMap((e) => (e.type === "comment" ? [e.body] : []));

describe("gate.approved", () => {
  it("is refused while the branch holds a rejected commit, naming it and the commit to reset to", () => {
    const sim = reach("design-gate");
    sim.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: "{}" } });
    const rejected = sim.context.rejectedHead!.sha;
    const [before, result] = sendFrom(sim, approval(sim, "design"));
    expectRefused(before, result, [
      `the branch holds rejected commit ${short(rejected)}: reset it to ${short(sim.context.head)} before approving`,
    ]);
    expect(sim.context.gates.design.status).toBe("pending");
  });

  it("is refused on a gate already approved, naming the hash it is approved at", () => {
    const sim = reach("test-list");
    const hash = sim.context.gates.design.approvedHash!;
    const [before, result] = sendFrom(sim, approval(sim, "design", hash));
    expectRefused(before, result, [`the design gate is already approved at ${hash.slice(0, 12)}`]);
  });

  it("is refused on a gate that never opened, naming the stage", () => {
    const sim = reach("spec");
    const [before, result] = sendFrom(sim, approval(sim, "design"));
    expectRefused(before, result, ["the design gate is not open: the track is at spec"]);
  });

  it("is refused on a closed gate that still names a pending hash (it does not approve it)", () => {
    const sim = reach("design-gate");
    const pendingHash = sim.context.gates.design.pendingHash!;
    sim.snapshot = {
      ...sim.snapshot,
      context: {
        ...sim.context,
        gates: { ...sim.context.gates, design: { ...sim.context.gates.design, status: "closed" } },
      },
    };
    const [before, result] = sendFrom(sim, approval(sim, "design", pendingHash));
    expectRefused(before, result, ["the design gate is not open: the track is at design-gate"]);
  });

  it("is refused at a stale manifest, naming both hashes", () => {
    const sim = reach("design-gate");
    const pending = sim.context.gates.design.pendingHash!;
    const [before, result] = sendFrom(sim, approval(sim, "design", "a".repeat(64)));
    expectRefused(before, result, [
      `the review approves manifest aaaaaaaaaaaa, but the design gate waits for ${pending.slice(0, 12)}: approve the current commit`,
    ]);
  });

  it("at the pending manifest records the approval as the review gave it", () => {
    const sim = reach("design-gate");
    const pending = sim.context.gates.design.pendingHash!;
    const head = sim.context.head;
    const result = sim.send(approval(sim, "design"));
    expect(result.rejection).toBeUndefined();
    expect(sim.context.gates.design).toMatchObject({ status: "approved", approvedHash: pending });
    expect(sim.context.gates.design.approvals).toEqual([
      { approver: "lead-human", reviewId: 77, commit: head, manifestHash: pending, at },
    ]);
  });
});

describe("gate.withdrawn", () => {
  it("is refused on a gate that is not approved", () => {
    const sim = reach("design-gate");
    const [before, result] = sendFrom(sim, { type: "gate.withdrawn", at, gate: "design", reason: "stale" });
    expectRefused(before, result, ["the design gate is not approved, so there is nothing to withdraw"]);
  });

  it("is refused once the pull request is merged", () => {
    const sim = reach("promoting");
    const [before, result] = sendFrom(sim, { type: "gate.withdrawn", at, gate: "promote", reason: "dismissed" });
    expectRefused(before, result, ["the pull request is merged: approvals no longer change anything"]);
  });

  it("withdraws an approved gate with a comment saying so and why", () => {
    const sim = reach("test-list");
    const result = sim.send({ type: "gate.withdrawn", at, gate: "design", reason: "the review was dismissed" });
    expect(result.rejection).toBeUndefined();
    expect(sim.stage).toBe("design-gate");
    expect(comments(result)).toEqual([
      "**The design gate is withdrawn**: the review was dismissed. It needs approving again.",
    ]);
  });
});

describe("cycle, deploy and promotion reports", () => {
  const cycleReport = (sim: TrackSim, change: Record<string, unknown> = {}) =>
    ({
      type: "cycle.reported",
      at,
      dispatchId: sim.context.pendingDispatch?.dispatchId ?? "acme/stockflow#12#9",
      runId: 5,
      step: "red",
      commit: sim.context.pendingDispatch?.commit ?? sim.context.head,
      outcome: "valid",
      reasons: [],
      evidence: { summary: "ran" },
      ...change,
    }) as TrackEvent;

  it("are refused when no cycle is pending", () => {
    const sim = reach("red");
    const [before, result] = sendFrom(sim, cycleReport(sim));
    expectRefused(before, result, ["ignored report acme/stockflow#12#9: no cycle is pending"]);
  });

  it("are refused when they name another dispatch", () => {
    const sim = reach("red-verify");
    const [before, result] = sendFrom(sim, cycleReport(sim, { dispatchId: "other#1" }));
    expectRefused(before, result, ["ignored report other#1: the pending cycle is acme/stockflow#12#1"]);
  });

  it.each([
    ["a GREEN", { step: "green" }, "green"],
    ["a release", { type: "deploy.reported" }, "release"],
    ["a promotion", { type: "promotion.reported" }, "promote"],
  ])("are refused when %s reports on the pending RED", (_name, change, step) => {
    const sim = reach("red-verify");
    const kind = "type" in change ? change.type : undefined;
    const report =
      kind === "deploy.reported"
        ? { ...cycleReport(sim), type: "deploy.reported", evidence: { summary: "up", databaseBranch: "b", checks: [] } }
        : kind === "promotion.reported"
          ? {
              type: "promotion.reported",
              at,
              dispatchId: "acme/stockflow#12#1",
              outcome: "valid",
              reasons: [],
            }
          : cycleReport(sim, change);
    delete (report as { step?: unknown }).step;
    if (kind === undefined) (report as { step?: unknown }).step = step;
    const [before, result] = sendFrom(sim, report as TrackEvent);
    expectRefused(before, result, [`ignored report acme/stockflow#12#1: it reports ${step}, the pending cycle is red`]);
  });

  it("are refused when the run was on another commit", () => {
    const sim = reach("red-verify");
    const pending = sim.context.pendingDispatch!.commit;
    const [before, result] = sendFrom(sim, cycleReport(sim, { commit: "f".repeat(40) }));
    expectRefused(before, result, [
      `ignored report acme/stockflow#12#1: it ran on fffffff, the cycle was dispatched for ${short(pending)}`,
    ]);
  });

  it("a valid RED whose test files the track never saw is invalid, naming each file once", () => {
    const sim = reach("red-verify");
    const unit = sim.context.units[0]!;
    const file = unit.tests[0]!.file;
    // Two tests of the unit in turn in one file the track holds no text of.
    const twin = { ...unit.tests[0]!, id: "T9" };
    const elsewhere = { ...unit.tests[0]!, id: "T10", file: "test/elsewhere.test.ts" };
    const { [file]: _dropped, ...testFiles } = sim.context.testFiles;
    sim.snapshot = {
      ...sim.snapshot,
      context: {
        ...sim.context,
        testFiles,
        units: [{ ...unit, tests: [...unit.tests, twin, elsewhere] }, ...sim.context.units.slice(1)],
      },
    };
    const result = sim.send(cycleReport(sim, { reasons: ["ran 2 tests"] }));
    expect(result.rejection).toBeUndefined();
    expect(sim.stage).toBe("red");
    expect(sim.context.frozenTests).toEqual({});
    expect(sim.context.cycles.at(-1)).toMatchObject({
      outcome: "invalid",
      reasons: [
        "ran 2 tests",
        `the text of ${file}, test/elsewhere.test.ts was never pushed on this track, so the test cannot be frozen: add the test in a RED commit`,
      ],
    });
  });

  it("only a valid RED is checked for test files the track never saw: an invalid RED and a valid GREEN keep their word", () => {
    const drop = (sim: TrackSim) => {
      const { [sim.context.units[0]!.tests[0]!.file]: _dropped, ...testFiles } = sim.context.testFiles;
      sim.snapshot = { ...sim.snapshot, context: { ...sim.context, testFiles } };
    };
    const red = reach("red-verify");
    drop(red);
    red.expectAccepted(red.send(cycleReport(red, { outcome: "invalid", reasons: ["T1 passed"] })));
    expect(red.context.cycles.at(-1)).toMatchObject({ outcome: "invalid", reasons: ["T1 passed"] });
    const green = reach("green");
    green.expectAccepted(green.push({ role: "driver", files: { "src/services/stock.ts": "export const v = 1;\n" } }));
    expect(green.stage).toBe("green-verify");
    drop(green);
    green.expectAccepted(green.send(cycleReport(green, { step: "green", reasons: ["ran 1 test"] })));
    expect(green.context.cycles.at(-1)).toMatchObject({ outcome: "valid", reasons: ["ran 1 test"] });
    expect(green.stage).toBe("review");
  });

  it("a valid release whose verification checks failed is invalid, naming each failed check", () => {
    const sim = reach("deploying");
    const pending = sim.context.pendingDispatch!;
    const result = sim.send({
      type: "deploy.reported",
      at,
      dispatchId: pending.dispatchId,
      runId: 8,
      commit: pending.commit,
      outcome: "valid",
      reasons: ["deployed"],
      evidence: {
        summary: "preview up",
        databaseBranch: sim.context.databaseBranch,
        checks: [
          { name: "GET /health", ok: true },
          { name: "GET /stock", ok: false, detail: "502" },
          { name: "POST /stock", ok: false },
        ],
      },
    });
    expect(result.rejection).toBeUndefined();
    expect(sim.stage).toBe("blocked");
    expect(sim.context.deployEvidence).toBeNull();
    expect(sim.context.cycles.at(-1)).toMatchObject({
      outcome: "invalid",
      reasons: ["deployed", "verification GET /stock failed: 502", "verification POST /stock failed"],
    });
  });

  it("a promotion report records no run and no evidence", () => {
    const sim = reach("promoting");
    const pending = sim.context.pendingDispatch!;
    const result = sim.send({
      type: "promotion.reported",
      at,
      dispatchId: pending.dispatchId,
      outcome: "valid",
      reasons: [],
    });
    expect(result.rejection).toBeUndefined();
    expect(sim.stage).toBe("done");
    expect(sim.context.cycles.at(-1)).toMatchObject({ step: "promote", runId: null, evidence: null });
  });
});

describe("renegotiate", () => {
  it.each([
    [{ scope: "design", from: "architecture" }, "**lead reopened the design from architecture**"],
    [{ scope: "design" }, "**lead reopened the design from spec**"],
    [{ scope: "test-list" }, "**lead reopened the test list**"],
  ] as const)("%o comments who reopened what and why", (change, opening) => {
    const sim = reach("red");
    const result = sim.send({ type: "renegotiate", at, by: "lead", reason: "the AC was wrong", ...change });
    expect(result.rejection).toBeUndefined();
    expect(comments(result)).toEqual([`${opening}: the AC was wrong. Gates that depended on it are withdrawn.`]);
  });

  it("from the design without a step reopens it at the spec", () => {
    const sim = reach("red");
    sim.send({ type: "renegotiate", at, by: "lead", scope: "design", reason: "wrong" });
    expect(sim.stage).toBe("spec");
  });
});

describe("an event the machine does not take at the stage", () => {
  it.each([
    ["retry", (_s: TrackSim) => ({ type: "retry", at, by: "lead" }), "retry does not apply while the track is at spec"],
    [
      "renegotiate",
      (_s: TrackSim) => ({ type: "renegotiate", at, by: "lead", scope: "design", reason: "x" }),
      "renegotiating the design from spec does not apply while the track is at spec",
    ],
    [
      "renegotiate from a step",
      (_s: TrackSim) => ({ type: "renegotiate", at, by: "lead", scope: "design", from: "ux", reason: "x" }),
      "renegotiating the design from ux does not apply while the track is at spec",
    ],
    [
      "renegotiate the test list",
      (_s: TrackSim) => ({ type: "renegotiate", at, by: "lead", scope: "test-list", reason: "x" }),
      "renegotiating the test-list does not apply while the track is at spec",
    ],
  ] as const)("%s is refused, naming the event and the stage", (_name, event, reason) => {
    const sim = reach("spec");
    const [before, result] = sendFrom(sim, event(sim) as TrackEvent);
    expectRefused(before, result, [reason]);
  });
});

describe("an approval the machine does not take at the stage", () => {
  it("is refused, naming the event, the gate and the stage", () => {
    const sim = reach("test-list-gate");
    sim.expectAccepted(sim.send({ type: "gate.withdrawn", at, gate: "design", reason: "dismissed" }));
    expect([sim.stage, sim.context.gates["test-list"].status]).toEqual(["design-gate", "pending"]);
    const [before, result] = sendFrom(sim, approval(sim, "test-list"));
    expectRefused(before, result, [
      "gate.approved for the test-list gate does not apply while the track is at design-gate",
    ]);
  });
});

describe("the edge and the end", () => {
  it("an event that does not parse is refused at the edge with each problem", () => {
    expect(eventProblems({ type: "retry", by: "lead" })).toEqual([expect.stringMatching(/^event at: /)]);
    expect(eventProblems({ type: "retry", at, by: "lead" })).toEqual([]);
  });

  it("an event of no type the machine knows is refused, naming it", () => {
    const sim = reach("spec");
    const [before, result] = sendFrom(sim, { type: "rebase", at, by: "lead" } as unknown as TrackEvent);
    expectRefused(before, result, ['event type: "rebase" is not an event the machine knows']);
  });

  it.each(["done", "abandoned"] as const)("any event after %s is refused, naming the end", (stage) => {
    const sim = reach(stage);
    const [before, result] = sendFrom(sim, { type: "retry", at, by: "lead" });
    expectRefused(before, result, [`the track has ended (${stage}); nothing more happens on it`]);
  });

  it("takes the repair bound from the configuration and keeps the track's granularity", () => {
    const sim = reach("green");
    const config = ConsortConfig.parse({ repairBound: 5, granularity: "ac" });
    const pushed = transition(
      sim.snapshot,
      {
        type: "push",
        at,
        before: sim.context.head,
        after: sha(900),
        forced: false,
        commits: [
          {
            sha: sha(900),
            authorLogin: "driver-bot[bot]",
            message: "GREEN\n\nConsort-Role: driver\n",
            changes: [{ path: "src/services/stock.ts", status: "modified" }],
            files: { "src/services/stock.ts": "export const x = 2;\n" },
            before: { "package.json": null },
          },
        ],
      },
      config,
    );
    expect(pushed.rejection).toBeUndefined();
    expect(pushed.snapshot.stage).toBe("green-verify");
    expect(sim.context.settings).toEqual({ repairBound: 2, granularity: "test" });
    expect(pushed.snapshot.context.settings).toEqual({ repairBound: 5, granularity: "test" });
  });
});

describe("a push", () => {
  const pushOf = (sim: TrackSim, change: Partial<Extract<TrackEvent, { type: "push" }>>): TrackEvent => ({
    type: "push",
    at,
    before: sim.context.head,
    after: sha(700),
    forced: false,
    commits: [],
    ...change,
  });
  const driverCommit = (
    n: number,
    files: Record<string, string> = { "src/services/stock.ts": `export const v = ${n};\n` },
  ) => ({
    sha: sha(n),
    authorLogin: "driver-bot[bot]",
    message: "GREEN\n\nConsort-Role: driver\n",
    changes: Object.keys(files).map((path) => ({ path, status: "modified" as const })),
    files,
    before: { "package.json": null },
  });
  const rejectionNote = (sim: TrackSim, after: string, why: string, reasons: string[]) =>
    [
      `**Push to ${short(after)} rejected** (${why}):`,
      ...reasons.map((r) => `- ${r}`),
      "",
      `To continue, reset the branch to ${short(sim.context.head)} (git push --force-with-lease origin ${sim.context.head}:feature/f1-stock) and push the step again.`,
    ].join("\n");

  it("that leaves the branch at its accepted head is refused: nothing to decide", () => {
    const sim = reach("green");
    const [before, result] = sendFrom(sim, pushOf(sim, { after: sim.context.head, forced: true }));
    expectRefused(before, result, [
      `the push leaves the branch at ${short(sim.context.head)}, the last accepted commit: nothing to decide`,
    ]);
  });

  it("back to the accepted head from a rejected commit clears the rejection, and says so", () => {
    const sim = reach("green");
    sim.push({ role: "navigator", files: { "test/stock.test.ts": "it('x', () => {});\n" } });
    expect(sim.context.rejectedHead).not.toBeNull();
    const result = sim.reset();
    expect(result.rejection).toBeUndefined();
    expect([sim.stage, sim.context.rejectedHead]).toEqual(["green", null]);
    expect(comments(result)).toEqual([
      `The branch is back at ${short(sim.context.head)}: the rejected commits are gone.`,
    ]);
  });

  it("rejected for a step out of turn says the track stays, lists the reasons and how to continue", () => {
    const sim = reach("green");
    const commit = { ...driverCommit(701), authorLogin: "nav-bot[bot]", message: "RED\n\nConsort-Role: navigator\n" };
    const result = sim.send(pushOf(sim, { after: sha(701), commits: [commit] }));
    const reasons = result.rejection!.reasons;
    expect(reasons.length).toBeGreaterThan(0);
    expect([sim.stage, sim.context.rejectedHead?.sha, sim.context.rejectedHead?.reasons]).toEqual([
      "green",
      sha(701),
      reasons,
    ]);
    expect(comments(result)).toEqual([rejectionNote(sim, sha(701), "the track stays at green", reasons)]);
    // The checks are restated on the rejected commit the branch now holds.
    expect(result.effects.at(-1)).toEqual({ type: "updateChecks", commit: sha(701) });
  });

  it("that changes a design file and the test list after the gates sends the track back to the design gate", () => {
    const sim = reach("green");
    const result = sim.push({
      role: "driver",
      files: { [ARTIFACT_PATHS.testList]: "{}", [ARTIFACT_PATHS.spec]: "{}" },
    });
    expect(sim.stage).toBe("design-gate");
    expect(sim.context.gates.design.status).toBe("withdrawn");
    expect(comments(result)[0]).toMatch(
      /^\*\*Push to \w{7} rejected\*\* \(the design gate is withdrawn and must be approved again\):\n/,
    );
  });

  it("that changes the test list alone after its gate sends the track back to the test-list gate", () => {
    const sim = reach("green");
    const result = sim.push({ role: "driver", files: { [ARTIFACT_PATHS.testList]: "{}" } });
    expect(sim.stage).toBe("test-list-gate");
    expect([sim.context.gates.design.status, sim.context.gates["test-list"].status]).toEqual(["approved", "withdrawn"]);
    expect(comments(result)[0]).toMatch(/\(the test-list gate is withdrawn and must be approved again\):\n/);
  });

  it("on top of a rejected commit that is still not the accepted tree is rejected, naming the commit it holds", () => {
    const sim = reach("green");
    sim.push({ role: "navigator", files: { "test/stock.test.ts": "it('x', () => {});\n" } });
    const held = sim.context.rejectedHead!.sha;
    const result = sim.send(pushOf(sim, { before: held, after: sha(702), commits: [driverCommit(702)] }));
    const reason = `the branch still holds rejected commit ${short(held)}`;
    expect(result.rejection).toEqual({ reasons: [reason] });
    expect([sim.stage, sim.context.rejectedHead?.sha]).toEqual(["green", sha(702)]);
    expect(comments(result)).toEqual([rejectionNote(sim, sha(702), "the track stays at green", [reason])]);
  });

  it("on top of a rejected commit whose tree is the accepted one goes on from it", () => {
    const sim = reach("green");
    const accepted = "a".repeat(40);
    const bad = "b".repeat(40);
    const wrong = { ...driverCommit(703, { "test/stock.test.ts": "it('x', () => {});\n" }) };
    sim.send(pushOf(sim, { after: sha(703), commits: [wrong], trees: { before: accepted, after: bad } }));
    expect(sim.context.rejectedHead).toMatchObject({ sha: sha(703), acceptedTree: accepted });
    const head = sim.context.head;
    const result = sim.send(
      pushOf(sim, {
        before: sha(703),
        after: sha(704),
        commits: [driverCommit(704)],
        trees: { before: bad, after: accepted },
      }),
    );
    expect(result.rejection).toBeUndefined();
    expect([sim.stage, sim.context.rejectedHead, sim.context.head]).toEqual(["green", null, sha(704)]);
    expect(comments(result)).toEqual([
      `The branch is back at the tree of ${short(head)}: ${short(sha(704))} reverts the rejected commits, and the track goes on from it.`,
    ]);
  });

  it("on top of a rejected commit to another tree is still rejected", () => {
    const sim = reach("green");
    const wrong = driverCommit(705, { "test/stock.test.ts": "it('x', () => {});\n" });
    sim.send(
      pushOf(sim, { after: sha(705), commits: [wrong], trees: { before: "a".repeat(40), after: "b".repeat(40) } }),
    );
    const result = sim.send(
      pushOf(sim, {
        before: sha(705),
        after: sha(706),
        commits: [driverCommit(706)],
        trees: { before: "b".repeat(40), after: "e".repeat(40) },
      }),
    );
    expect(result.rejection).toEqual({ reasons: [`the branch still holds rejected commit ${short(sha(705))}`] });
    // The tree to come back to is still the one accepted before the first rejected commit.
    expect(sim.context.rejectedHead).toMatchObject({ sha: sha(706), acceptedTree: "a".repeat(40) });
  });

  it("from a commit that is neither the accepted head nor the rejected one is rejected: history was rewritten", () => {
    const sim = reach("green");
    const result = sim.send(pushOf(sim, { before: sha(799), after: sha(707), commits: [driverCommit(707)] }));
    const reason = `the branch moved from ${short(sha(799))}, not from the last accepted commit ${short(sim.context.head)} (history was rewritten)`;
    expect(result.rejection).toEqual({ reasons: [reason] });
    expect(sim.context.rejectedHead?.sha).toBe(sha(707));
    expect(comments(result)).toEqual([rejectionNote(sim, sha(707), "the track stays at green", [reason])]);
  });

  it("from the accepted head while a rejected commit is held (a force-push) drops the rejection and takes the step", () => {
    const sim = reach("green");
    sim.push({ role: "navigator", files: { "test/stock.test.ts": "it('x', () => {});\n" } });
    const result = sim.send(
      pushOf(sim, { before: sim.context.head, after: sha(708), forced: true, commits: [driverCommit(708)] }),
    );
    expect(result.rejection).toBeUndefined();
    expect([sim.stage, sim.context.rejectedHead, sim.context.head]).toEqual(["green-verify", null, sha(708)]);
  });

  it.each([
    ["not forced", false],
    ["forced, with no problem found", true],
  ])("with no commits (%s) is refused", (_name, forced) => {
    const sim = reach("green");
    const [before, result] = sendFrom(sim, pushOf(sim, { forced, commits: [] }));
    expectRefused(before, result, ["the push carries no commits"]);
  });

  it("whose last commit is not its head is refused", () => {
    const sim = reach("green");
    const [before, result] = sendFrom(sim, pushOf(sim, { after: sha(709), commits: [driverCommit(710)] }));
    expectRefused(before, result, [`the push's last commit ${short(sha(710))} is not its head ${short(sha(709))}`]);
  });

  it("forced with no commits, that git found to be no rebase, is rejected with what git found", () => {
    const sim = reach("green");
    const problem = "the new head does not descend from main";
    const result = sim.send(pushOf(sim, { forced: true, commits: [], problems: [problem] }));
    expect(result.rejection).toEqual({ reasons: [problem] });
    expect(sim.context.rejectedHead?.sha).toBe(sha(700));
  });

  it("that git found a problem with is rejected with it first, though its commits are the step in turn", () => {
    const sim = reach("green");
    const result = sim.send(
      pushOf(sim, {
        after: sha(713),
        commits: [driverCommit(713)],
        problems: ["a commit of the push is too big to list"],
      }),
    );
    expect(result.rejection).toEqual({ reasons: ["a commit of the push is too big to list"] });
    expect([sim.stage, sim.context.rejectedHead?.sha]).toEqual(["green", sha(713)]);
  });

  it("that the app verified as a rebase moves the head and keeps the stage", () => {
    const sim = reach("green");
    const from = sim.context.head;
    const frozen = sim.context.frozenTests;
    // The RED that froze T1 is the head that was rebased: its replay is where the cycle reads T1's file now.
    expect(Object.values(frozen).map((entry) => entry.commit)).toEqual([from]);
    const result = sim.send(
      pushOf(sim, { forced: true, rebased: { onto: "d".repeat(40), commits: [{ from, to: sha(700) }] } }),
    );
    expect(result.rejection).toBeUndefined();
    expect([sim.stage, sim.context.head]).toEqual(["green", sha(700)]);
    expect(sim.context.frozenTests).toEqual({ T1: { ...frozen.T1, commit: sha(700) } });
    expect(sim.context.migrationConflicts).toEqual([]);
    expect(comments(result)).toEqual([
      "The branch is rebased onto main at ddddddd: its 1 commit(s) are the track's accepted ones replayed, and the track stays at green.",
    ]);
  });

  it("verified as a rebase but with a problem found is rejected", () => {
    const sim = reach("green");
    const from = sim.context.head;
    const result = sim.send(
      pushOf(sim, {
        forced: true,
        problems: ["a replayed commit changed"],
        rebased: { onto: "d".repeat(40), commits: [{ from, to: sha(700) }] },
      }),
    );
    expect(result.rejection).toEqual({ reasons: ["a replayed commit changed"] });
    expect([sim.stage, sim.context.head, sim.context.rejectedHead?.sha]).toEqual(["green", from, sha(700)]);
  });

  it("adds each commit's author and the pusher to the gate's authors once, in order", () => {
    const sim = reach("stories");
    const spec = { [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) };
    const commits = ["po-bot[bot]", "po-two", "po-bot[bot]"].map((author) =>
      sim.commit({ role: "product-owner", files: spec, author }),
    );
    const result = sim.send(pushOf(sim, { after: commits.at(-1)!.sha, commits, pusher: "lead-x" }));
    expect(result.rejection).toBeUndefined();
    expect(sim.stage).toBe("spec");
    expect(sim.context.gates.design.authors).toEqual(["po-bot[bot]", "lead-x", "po-two"]);
  });

  it("at a design step that is not complete yet comments each problem", () => {
    const sim = reach("stories");
    const result = sim.push({ role: "product-owner", files: { [ARTIFACT_PATHS.spec]: '{"stories": []}' } });
    expect(result.rejection).toBeUndefined();
    expect(sim.stage).toBe("stories");
    const problems = sim.context.lastProblem;
    expect(problems.length).toBeGreaterThan(0);
    expect(comments(result)).toEqual([
      [
        `**stories: not complete yet** at ${short(sim.context.head)}; the step stays open until these are fixed:`,
        ...problems.map((p) => `- ${p}`),
      ].join("\n"),
    ]);
  });

  it("that renames a test file keeps only the new path's text: the old one is not frozen at the RED", () => {
    const sim = reach("red");
    const red = sim.redCommit();
    const helper = "export const seed = 1;\n";
    red.files = { ...red.files, "test/helpers/old.ts": helper };
    red.changes = [...red.changes, { path: "test/helpers/old.ts", status: "added" }];
    const moved = sim.commit({ role: "navigator", files: { "test/helpers/db.ts": helper } });
    moved.changes = [{ path: "test/helpers/db.ts", status: "renamed", previousPath: "test/helpers/old.ts" }];
    // A handler that read the old path's text too: it is still gone after the rename.
    moved.files = { ...moved.files, "test/helpers/old.ts": helper };
    sim.expectAccepted(sim.pushCommits(red, moved));
    expect(sim.stage).toBe("red-verify");
    const file = sim.context.units[0]!.tests[0]!.file;
    expect(sim.context.testFiles).toEqual({ [file]: red.files[file], "test/helpers/db.ts": helper });
    sim.expectAccepted(sim.report("valid"));
    expect(Object.keys(sim.context.frozenTests).sort()).toEqual(["T1", "T1 test/helpers/db.ts"]);
  });

  it("that removes a test file drops its text, even when the handler read one", () => {
    const sim = reach("red");
    const red = sim.redCommit();
    red.files = { ...red.files, "test/helpers/old.ts": "export const seed = 1;\n" };
    red.changes = [...red.changes, { path: "test/helpers/old.ts", status: "added" }];
    const gone = sim.commit({ role: "navigator", files: { "test/helpers/old.ts": "export const seed = 1;\n" } });
    gone.changes = [{ path: "test/helpers/old.ts", status: "removed" }];
    sim.expectAccepted(sim.pushCommits(red, gone));
    const file = sim.context.units[0]!.tests[0]!.file;
    expect(sim.context.testFiles).toEqual({ [file]: red.files[file] });
  });

  it("with a problem git found and a commit out of turn is rejected with both, forced or not", () => {
    for (const forced of [false, true]) {
      const sim = reach("red");
      const outOfTurn = driverCommit(714);
      const alone = transition(sim.snapshot, pushOf(sim, { after: sha(714), commits: [outOfTurn] }), sim.config);
      const why = alone.rejection!.reasons;
      expect(why.length).toBeGreaterThan(0);
      const result = sim.send(
        pushOf(sim, { after: sha(714), forced, commits: [outOfTurn], problems: ["a commit is too big to list"] }),
      );
      expect(result.rejection).toEqual({ reasons: ["a commit is too big to list", ...why] });
      expect(sim.context.rejectedHead?.sha).toBe(sha(714));
    }
  });

  it("forced with no commits and no problem found is refused: it carries no commits", () => {
    const sim = reach("green");
    const [before, result] = sendFrom(sim, pushOf(sim, { forced: true, commits: [] }));
    expectRefused(before, result, ["the push carries no commits"]);
  });

  it("of merges of the default branch only moves the head, records the merges and says so", () => {
    const sim = reach("green");
    const merge = { ...driverCommit(715), authorLogin: null, merge: true as const };
    const result = sim.send(pushOf(sim, { after: sha(715), commits: [merge], migrationConflicts: ["0042_x.sql"] }));
    expect(result.rejection).toBeUndefined();
    expect([sim.stage, sim.context.head, sim.context.updateMerges]).toEqual(["green", sha(715), [sha(715)]]);
    expect(sim.context.migrationConflicts).toEqual(["0042_x.sql"]);
    expect(comments(result)).toEqual([
      `The branch is brought up to date with main at ${short(sha(715))}: the merged-in commits are not the track's, and the track stays at green.`,
    ]);
  });

  it("records no author for a commit GitHub names none for", () => {
    const sim = reach("stories");
    const spec = { [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) };
    const commit = sim.commit({ role: "product-owner", files: spec, author: null });
    sim.expectAccepted(sim.pushCommits(commit));
    expect(sim.context.gates.design.authors).toEqual([]);
  });

  it("of a review naming another unit is not complete, and says which unit to name", () => {
    const sim = reach("review");
    sim.push({
      role: "navigator",
      files: { ".consort/reviews/T1.json": JSON.stringify({ unit: "T2", verdict: "accept", notes: [] }) },
    });
    expect(sim.stage).toBe("review");
    expect(sim.context.lastProblem).toEqual([
      '.consort/reviews/T1.json $.unit: the review names T2, the unit in turn is T1 → set "unit": "T1"',
    ]);
  });
});

describe("restoreSnapshot fails closed with what is wrong and what to do", () => {
  const caught = (value: unknown) => {
    try {
      restoreSnapshot(value);
    } catch (error) {
      expect(error).toBeInstanceOf(SnapshotError);
      const { name, message, hint } = error as SnapshotError;
      return { name, message, hint };
    }
    throw new Error("restored");
  };
  const damaged = "the state file is damaged: restore it from the consort/state history";

  it.each([
    ["null", null],
    ["a number", 7],
    ["a JSON string of an array's item", "3"],
  ])("on %s: not a JSON object", (_name, value) => {
    expect(caught(value)).toEqual({
      name: "SnapshotError",
      message: "the track snapshot is not a JSON object",
      hint: undefined,
    });
  });

  it("on text that is not JSON, with the parser's word", () => {
    const { message, hint } = caught("{not json");
    expect(message).toMatch(/^the track snapshot is not valid JSON: \S/);
    expect(hint).toBeUndefined();
  });

  it("on an object without a version, saying what to pass", () => {
    expect(caught({ stage: "red" })).toEqual({
      name: "SnapshotError",
      message: "this is not a track snapshot: it has no schemaVersion",
      hint: "pass a snapshot or a tracks/<id>.json file from the consort/state branch, or leave the state out to derive it from the branch's commits",
    });
  });

  it.each([
    [3, "upgrade Consort: the state was written by a newer version"],
    [0, "the state file is damaged or not a Consort track: restore it from the consort/state history"],
    ["2", "the state file is damaged or not a Consort track: restore it from the consort/state history"],
    ["9", "the state file is damaged or not a Consort track: restore it from the consort/state history"],
  ])("on version %o", (version, hint) => {
    const sim = reach("red");
    expect(caught({ ...sim.snapshot, schemaVersion: version })).toEqual({
      name: "SnapshotError",
      message: `track snapshot schema version ${JSON.stringify(version)} is not supported: this Consort reads version 2 (and converts version 1)`,
      hint,
    });
  });

  it("on a malformed version-2 snapshot", () => {
    const sim = reach("red");
    const { message, hint } = caught({ ...sim.snapshot, stage: "skipping-ahead" });
    expect(message).toMatch(/^the track snapshot is malformed: stage/);
    expect(hint).toBe(damaged);
  });

  it("on a malformed version-1 snapshot", () => {
    const sim = reach("red");
    const { message, hint } = caught({ ...sim.snapshot, schemaVersion: 1, stage: "skipping-ahead" });
    expect(message).toMatch(/^the track snapshot \(version 1\) is malformed: /);
    expect(hint).toBe(damaged);
  });

  it("restores a version-2 snapshot given as text or as an object to the same snapshot", () => {
    const sim = reach("green");
    expect(restoreSnapshot(JSON.stringify(sim.snapshot))).toEqual(sim.snapshot);
    expect(restoreSnapshot(JSON.parse(JSON.stringify(sim.snapshot)))).toEqual(sim.snapshot);
  });
});

describe("what a handler must read for a push", () => {
  const config = ConsortConfig.parse({ commands: { test: "npm --prefix api test" } });

  it("pathsToRead: .consort/, test and code files and the runner's configuration, once each, none removed", () => {
    expect(
      pathsToRead(
        [
          { path: ".consort/spec.json", status: "modified" },
          { path: "test/stock.test.ts", status: "added" },
          { path: "src/services/stock.ts", status: "modified" },
          { path: "src/services/stock.ts", status: "modified" },
          { path: "api/vitest.config.ts", status: "added" },
          { path: "README.md", status: "modified" },
          { path: "docs/notes.md", status: "added" },
          { path: "src/old.ts", status: "removed" },
          { path: ".consort/old.json", status: "removed" },
        ],
        config,
      ),
    ).toEqual([".consort/spec.json", "test/stock.test.ts", "src/services/stock.ts", "api/vitest.config.ts"]);
  });

  it("runnerPathsToRead: each runner configuration path a change names, before or after a rename", () => {
    expect(
      runnerPathsToRead(
        [
          { path: "vitest.config.ts", status: "modified" },
          { path: "config/vitest.ts", status: "renamed", previousPath: "api/vitest.config.ts" },
          { path: "src/a.ts", status: "renamed", previousPath: "src/b.ts" },
          { path: "vitest.config.ts", status: "modified" },
          { path: "README.md", status: "removed" },
        ],
        config,
      ),
    ).toEqual(["vitest.config.ts", "api/vitest.config.ts"]);
  });

  it("runnerPackagesToRead: nothing before the test-list gate opens", () => {
    const sim = reach("test-list");
    expect(runnerPackagesToRead([{ path: "src/a.ts", status: "modified" }], config, sim.snapshot)).toEqual([]);
  });

  it("runnerPackagesToRead: once it is open, the root's and each command folder's package.json for a change beyond .consort/", () => {
    const sim = reach("test-list-gate");
    expect(runnerPackagesToRead([{ path: "src/a.ts", status: "modified" }], config, sim.snapshot)).toEqual([
      "package.json",
      "api/package.json",
    ]);
    expect(runnerPackagesToRead([{ path: ".consort/reviews/T1.json", status: "added" }], config, sim.snapshot)).toEqual(
      [],
    );
    expect(
      runnerPackagesToRead(
        [
          { path: ".consort/reviews/T1.json", status: "added" },
          { path: "src/a.ts", status: "modified" },
        ],
        config,
        sim.snapshot,
      ),
    ).toEqual(["package.json", "api/package.json"]);
    expect(
      runnerPackagesToRead([{ path: "src/a.ts", status: "modified" }], defaultConfig(), reach("red").snapshot),
    ).toEqual(["package.json"]);
  });
});

describe("what every transition restates", () => {
  const agents = ConsortConfig.parse({ agents: { enabled: true, command: "run-agent" } });
  const agentRoles = (result: TransitionResult) =>
    result.effects.flatMap((e) => (e.type === "dispatchAgent" ? [e.role] : []));

  it("a new track asks the Product Owner's agent, then the checks on its head", () => {
    const created = createTrack(
      {
        trackId: "acme/stockflow#3",
        branch: "feature/x",
        baseBranch: "main",
        head: sha(1),
        databaseBranch: "feature-x",
        parentDatabaseBranch: "main",
        at,
      },
      agents,
    );
    expect(agentRoles(created)).toEqual(["product-owner"]);
    expect(created.effects.at(-1)).toEqual({ type: "updateChecks", commit: sha(1) });
  });

  it("a step that moves the stage asks the next role's agent; one that stays does not", () => {
    const sim = reach("spec");
    const moved = transition(
      sim.snapshot,
      {
        type: "push",
        at,
        before: sim.context.head,
        after: sha(800),
        forced: false,
        commits: [
          { ...sim.commit({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: smallDesign.spec } }), sha: sha(800) },
        ],
      },
      agents,
    );
    expect(moved.snapshot.stage).toBe("architecture");
    expect(agentRoles(moved)).toEqual(["architect"]);
    const stayed = transition(
      sim.snapshot,
      {
        type: "push",
        at,
        before: sim.context.head,
        after: sha(801),
        forced: false,
        commits: [
          {
            ...sim.commit({
              role: "spec-author",
              files: { [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) },
            }),
            sha: sha(801),
          },
        ],
      },
      agents,
    );
    expect([stayed.snapshot.stage, stayed.rejection]).toEqual(["spec", undefined]);
    expect(agentRoles(stayed)).toEqual([]);
  });

  it("a renegotiation that moves the track asks the agent of the stage it lands at", () => {
    const result = transition(
      reach("red").snapshot,
      { type: "renegotiate", at, by: "lead", scope: "test-list", reason: "x" },
      agents,
    );
    expect(result.snapshot.stage).toBe("test-list");
    expect(agentRoles(result)).toEqual(["test-strategist"]);
  });

  it("only a retry of a cycle stage stays at its stage, and asks no agent: the orchestrator re-runs the cycle", () => {
    const stayed: string[] = [];
    const events: TrackEvent[] = [
      { type: "retry", at, by: "lead" },
      { type: "renegotiate", at, by: "lead", scope: "test-list", reason: "x" },
      ...DESIGN_STEPS.map((from): TrackEvent => ({
        type: "renegotiate",
        at,
        by: "lead",
        scope: "design",
        from,
        reason: "x",
      })),
    ];
    for (const stage of STAGES) {
      const snapshot = reach(stage).snapshot;
      for (const event of events) {
        const result = transition(snapshot, event, agents);
        if (result.rejection || result.snapshot.stage !== stage) continue;
        stayed.push(
          `${stage}: ${event.type === "renegotiate" ? `renegotiate ${event.scope} ${event.from ?? ""}` : event.type}`,
        );
        expect(nextAction(result.snapshot, agents).actor).toBe("orchestrator");
        expect(agentRoles(result)).toEqual([]);
        expect(result.effects.map((e) => e.type)).toEqual(
          stage === "promoting" ? ["promoteDatabase", "updateChecks"] : ["dispatchCycle", "updateChecks"],
        );
      }
    }
    expect(stayed).toEqual([
      "red-verify: retry",
      "green-verify: retry",
      "refactor-verify: retry",
      "deploying: retry",
      "promoting: retry",
    ]);
  });
});

describe("decisions that hold a gate or a refusal", () => {
  const pushOf = (sim: TrackSim, change: Partial<Extract<TrackEvent, { type: "push" }>>): TrackEvent => ({
    type: "push",
    at,
    before: sim.context.head,
    after: sha(720),
    forced: false,
    commits: [],
    ...change,
  });

  it("a frozen design file that is not what the gate froze at the push's head is refused and withdraws the design gate", () => {
    const sim = reach("red");
    const commit = sim.redCommit();
    const headBlobs: Record<string, string> = {};
    for (const gate of ["design", "test-list"] as const)
      for (const path of Object.keys(sim.context.gates[gate].files))
        headBlobs[path] = gitBlobId(sim.context.artifacts[path]!);
    headBlobs[ARTIFACT_PATHS.spec] = gitBlobId("{}");
    const result = sim.send(pushOf(sim, { after: commit.sha, commits: [commit], headBlobs }));
    expect(result.rejection).toEqual({
      reasons: [
        `${ARTIFACT_PATHS.spec}: frozen by the design gate, but at ${short(commit.sha)} it is not the text the gate froze (changed beneath this push); restore it`,
      ],
    });
    expect([sim.stage, sim.context.gates.design.status]).toEqual(["design-gate", "withdrawn"]);
  });

  it.each([
    [
      "a change to the test list, with the spec changed beneath it",
      { [ARTIFACT_PATHS.testList]: "{}" },
      ARTIFACT_PATHS.spec,
      "design-gate",
    ],
    ["a change to the code, with the test list changed beneath it", {}, ARTIFACT_PATHS.testList, "test-list-gate"],
    [
      "a change to the spec, with the test list changed beneath it",
      { [ARTIFACT_PATHS.spec]: "{}" },
      ARTIFACT_PATHS.testList,
      "design-gate",
    ],
  ] as const)("%s withdraws the higher of the two gates", (_name, files, beneath, stage) => {
    const sim = reach("green");
    const commit = sim.commit({
      role: "driver",
      files: { "src/services/stock.ts": "export const y = 1;\n", ...files },
    });
    const headBlobs: Record<string, string> = {};
    for (const gate of ["design", "test-list"] as const)
      for (const path of Object.keys(sim.context.gates[gate].files))
        headBlobs[path] = gitBlobId((files as Record<string, string>)[path] ?? sim.context.artifacts[path]!);
    headBlobs[beneath] = gitBlobId("changed beneath");
    sim.send(pushOf(sim, { after: commit.sha, commits: [commit], headBlobs }));
    expect(sim.stage).toBe(stage);
  });

  it("a commit that changes the spec before the test list withdraws the design gate, not only the test list's", () => {
    const sim = reach("green");
    const commit = sim.commit({
      role: "driver",
      files: { [ARTIFACT_PATHS.spec]: "{}", [ARTIFACT_PATHS.testList]: "{}" },
    });
    sim.pushCommits(commit);
    expect([sim.stage, sim.context.gates.design.status]).toEqual(["design-gate", "withdrawn"]);
  });

  it("a push that rewrote history records no accepted tree, so going back to its old tree is still refused", () => {
    const sim = reach("green");
    const stale = "a".repeat(40);
    sim.send(
      pushOf(sim, {
        before: sha(799),
        after: sha(721),
        commits: [],
        trees: { before: stale, after: "b".repeat(40) },
      }),
    );
    expect(sim.context.rejectedHead).toEqual({
      sha: sha(721),
      reasons: [expect.stringContaining("(history was rewritten)")],
      at,
    });
    const result = sim.send(
      pushOf(sim, { before: sha(721), after: sha(722), commits: [], trees: { before: "b".repeat(40), after: stale } }),
    );
    expect(result.rejection).toEqual({ reasons: [`the branch still holds rejected commit ${short(sha(721))}`] });
  });

  it.each([
    ["architecture", "architect", ARTIFACT_PATHS.architecture],
    ["db-design", "dba", ARTIFACT_PATHS.dbDesign],
    ["ux", "ux-designer", ARTIFACT_PATHS.ux],
  ] as const)("at %s an artifact that does not validate leaves the step open", (stage, role, path) => {
    const sim = reach(stage);
    const result = sim.push({ role, files: { [path]: "{}" } });
    expect([result.rejection, sim.stage]).toEqual([undefined, stage]);
    expect(sim.context.lastProblem.length).toBeGreaterThan(0);
    expect(comments(result)[0]).toMatch(new RegExp(`^\\*\\*${stage}: not complete yet\\*\\*`));
  });

  it("a review that does not parse leaves the review open, and a review naming another unit comments why", () => {
    const sim = reach("review");
    const broken = sim.push({ role: "navigator", files: { ".consort/reviews/T1.json": "{not json" } });
    expect([broken.rejection, sim.stage]).toEqual([undefined, "review"]);
    expect(comments(broken)[0]).toMatch(/^\*\*review: not complete yet\*\*/);
    const other = sim.push({
      role: "navigator",
      files: { ".consort/reviews/T1.json": JSON.stringify({ unit: "T2", verdict: "accept", notes: [] }) },
    });
    expect(comments(other)).toEqual([
      `**review: not complete yet** at ${short(sim.context.head)}; the step stays open until these are fixed:\n- .consort/reviews/T1.json $.unit: the review names T2, the unit in turn is T1 → set "unit": "T1"`,
    ]);
  });

  it("approvals, retries, merges, closing and abandoning comment nothing of their own", () => {
    const gate = reach("design-gate");
    expect(comments(gate.approve("design"))).toEqual([]);
    const retry = reach("red-verify");
    expect(comments(retry.send({ type: "retry", at, by: "lead" }))).toEqual([]);
    const merging = reach("merging");
    expect(comments(merging.send({ type: "merged", at, commit: merging.context.head }))).toEqual([]);
    expect(comments(reach("red").send({ type: "closed", at }))).toEqual([
      "**Track abandoned**: the pull request was closed without merging. Its database branch is deleted.",
    ]);
    expect(comments(reach("red").send({ type: "abandon", at, by: "lead", reason: "dropped" }))).toEqual([
      "**Track abandoned**: dropped. Its database branch is deleted.",
    ]);
  });

  it("with agents on, entering a gate dispatches no agent (a person approves)", () => {
    const agents = ConsortConfig.parse({ agents: { enabled: true, command: "run-agent" } });
    const sim = reach("db-design");
    const result = transition(
      sim.snapshot,
      {
        type: "push",
        at,
        before: sim.context.head,
        after: sha(723),
        forced: false,
        commits: [
          { ...sim.commit({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign } }), sha: sha(723) },
        ],
      },
      agents,
    );
    expect(result.snapshot.stage).toBe("design-gate");
    expect(result.effects.filter((e) => e.type === "dispatchAgent")).toEqual([]);
  });
});
