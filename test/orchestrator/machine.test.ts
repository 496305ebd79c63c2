import { describe, expect, it } from "vitest";
import { transition as machineTransition } from "xstate";
import { trackMachine } from "../../src/orchestrator/machine.js";
import type { MachineEvent } from "../../src/orchestrator/machine-setup.js";
import type { DesignStep, Effect, Stage, TrackSnapshot } from "../../src/orchestrator/types.js";
import { reach } from "./helpers/reach.js";
import type { TrackSim } from "./helpers/track.js";

/**
 * The states of src/orchestrator/machine.ts: what each cycle report says on the PR (word for word:
 * a person decides from it), how a track ends, and which renegotiations each stage offers.
 */

const at = "2026-11-30T12:00:00Z";
const comments = (sim: TrackSim) => sim.effects("comment").map((e) => (e as Extract<Effect, { type: "comment" }>).body);
const short = (sim: TrackSim) => sim.context.head.slice(0, 7);
const DECIDE = "\n\nA person decides: retry, renegotiate the test list, or abandon.";

describe("a build cycle's report", () => {
  it("says a RED was not valid, with every reason, and sends the navigator back", () => {
    const sim = reach("red-verify");
    sim.expectAccepted(sim.report("invalid", ["T1 passed", "no assertion failed"]));
    expect(sim.stage).toBe("red");
    expect(comments(sim)).toEqual([
      `**RED is not valid** (red for T1, commit ${short(sim)}):\n- T1 passed\n- no assertion failed`,
    ]);
  });

  it("blocks a RED on its last allowed attempt, saying who decides", () => {
    const sim = reach("red-verify");
    sim.expectAccepted(sim.report("invalid", ["T1 passed"]));
    const text = `${sim.context.testFiles["test/stock.test.ts"]}// again\n`;
    sim.expectAccepted(sim.push({ role: "navigator", files: { "test/stock.test.ts": text } }));
    sim.expectAccepted(sim.report("invalid", ["T1 passed again"]));
    expect([sim.stage, sim.context.blocked]).toEqual(["blocked", { reason: "T1 passed again", resume: "red" }]);
    expect(comments(sim)).toEqual([
      `**RED failed its last allowed attempt: blocked** (red for T1, commit ${short(sim)}):\n- T1 passed again${DECIDE}`,
    ]);
  });

  it("counts a failed GREEN's repair rounds against the bound, then blocks", () => {
    const sim = reach("green-verify");
    sim.expectAccepted(sim.report("invalid", ["T1 fails"]));
    expect(sim.stage).toBe("repair");
    expect(comments(sim)).toEqual([
      `**GREEN is not valid: repair round 1 of 1** (green for T1, commit ${short(sim)}):\n- T1 fails`,
    ]);
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "// 2\n" } }));
    sim.expectAccepted(sim.report("invalid", ["T1 still fails"]));
    expect(sim.stage).toBe("blocked");
    expect(comments(sim)).toEqual([
      `**GREEN failed its last allowed attempt: blocked** (green for T1, commit ${short(sim)}):\n- T1 still fails${DECIDE}`,
    ]);
  });

  it("says a refactor broke the tests, then blocks it on its last attempt", () => {
    const sim = reach("refactor-verify");
    sim.expectAccepted(sim.report("invalid", ["T1 fails"]));
    expect(sim.stage).toBe("refactor");
    expect(comments(sim)).toEqual([
      `**The refactor broke the tests** (refactor for T1, commit ${short(sim)}):\n- T1 fails`,
    ]);
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "// 2\n" } }));
    sim.expectAccepted(sim.report("invalid", ["T1 fails again"]));
    expect([sim.stage, sim.context.blocked?.resume]).toEqual(["blocked", "refactor"]);
    expect(comments(sim)).toEqual([
      `**The refactor failed its last allowed attempt: blocked** (refactor for T1, commit ${short(sim)}):\n- T1 fails again${DECIDE}`,
    ]);
  });

  it.each([
    ["red-verify", "red", "RED"],
    ["green-verify", "green", "GREEN"],
    ["refactor-verify", "refactor", "refactor"],
  ] as const)("at %s says a cycle that could not decide leaves the track waiting", (stage, step, name) => {
    const sim = reach(stage);
    sim.expectAccepted(sim.report("error", ["the runner crashed"]));
    expect([sim.stage, sim.context.pendingDispatch, sim.context.blocked]).toEqual([stage, null, null]);
    expect(comments(sim)).toEqual([
      `**The ${name} cycle could not decide (retry when fixed)** (${step} for T1, commit ${short(sim)}):\n- the runner crashed`,
    ]);
  });

  it("names no unit when there is none in turn", () => {
    const sim = reach("green-verify");
    const state = trackMachine.resolveState({ value: "green-verify", context: { ...sim.context, units: [] } });
    const event: MachineEvent = {
      type: "CYCLE_REPORTED",
      at,
      step: "green",
      outcome: "error",
      runId: 1,
      reasons: ["r"],
      evidence: null,
    };
    const [, actions] = machineTransition(trackMachine, state, event);
    expect(actions.filter((a) => a.type === "emit").map((a) => a.params)).toEqual([
      {
        type: "comment",
        body: `**The GREEN cycle could not decide (retry when fixed)** (green, commit ${short(sim)}):\n- r`,
      },
    ]);
  });
});

describe("every cycle report", () => {
  /** T2, the last unit, at refactor-verify (T1 accepted, T2's review asked for a refactor). */
  const lastUnitRefactor = () => {
    const sim = reach("red").throughUnit();
    sim.expectAccepted(sim.pushCommits(sim.redCommit()));
    sim.expectAccepted(sim.report("valid"));
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "// T2\n" } }));
    sim.expectAccepted(sim.report("valid"));
    const review = JSON.stringify({ unit: "T2", verdict: "refactor", notes: ["name it"] });
    sim.expectAccepted(sim.push({ role: "navigator", files: { ".consort/reviews/T2.json": review } }));
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "// T2 refactored\n" } }));
    expect([sim.stage, sim.context.unitIndex]).toEqual(["refactor-verify", 1]);
    return sim;
  };
  /** At `stage` with one attempt used, so the next invalid report blocks. */
  const lastAttempt = (stage: "red-verify" | "green-verify" | "refactor-verify") => () => {
    const sim = reach(stage);
    sim.expectAccepted(sim.report("invalid", ["first"]));
    const files: Record<string, string> =
      stage === "red-verify"
        ? { "test/stock.test.ts": `${sim.context.testFiles["test/stock.test.ts"]}// again\n` }
        : { "src/services/stock.ts": "// again\n" };
    sim.expectAccepted(sim.push({ role: stage === "red-verify" ? "navigator" : "driver", files }));
    expect([sim.stage, sim.context.attempts]).toEqual([stage, 1]);
    return sim;
  };
  const atStage = (stage: Stage) => () => reach(stage);

  it.each([
    ["red-verify", "valid", atStage("red-verify"), "green", null],
    ["red-verify", "invalid", atStage("red-verify"), "red", null],
    ["red-verify", "invalid on the last attempt", lastAttempt("red-verify"), "blocked", null],
    ["red-verify", "error", atStage("red-verify"), "red-verify", null],
    ["green-verify", "valid", atStage("green-verify"), "review", null],
    ["green-verify", "invalid", atStage("green-verify"), "repair", null],
    ["green-verify", "invalid on the last attempt", lastAttempt("green-verify"), "blocked", null],
    ["green-verify", "error", atStage("green-verify"), "green-verify", null],
    ["refactor-verify", "valid", atStage("refactor-verify"), "red", null],
    ["refactor-verify", "valid on the last unit", lastUnitRefactor, "deploying", "release"],
    ["refactor-verify", "invalid", atStage("refactor-verify"), "refactor", null],
    ["refactor-verify", "invalid on the last attempt", lastAttempt("refactor-verify"), "blocked", null],
    ["refactor-verify", "error", atStage("refactor-verify"), "refactor-verify", null],
    ["deploying", "valid", atStage("deploying"), "deploy-gate", null],
    ["deploying", "invalid", atStage("deploying"), "blocked", null],
    ["deploying", "error", atStage("deploying"), "deploying", null],
    ["promoting", "valid", atStage("promoting"), "done", null],
    ["promoting", "invalid", atStage("promoting"), "promoting", null],
  ] as const)(
    "at %s, %s, completes its cycle's record and clears the pending dispatch",
    (_stage, what, start, to, nextPending) => {
      const sim = start();
      const pending = sim.context.pendingDispatch!;
      const before = sim.context.cycles.find((c) => c.dispatchId === pending.dispatchId)!;
      const outcome = what.split(" ")[0] as "valid" | "invalid" | "error";
      const reasons = outcome === "valid" ? [] : [`${pending.step} said ${outcome}`];
      sim.expectAccepted(sim.report(outcome, reasons));
      const event = sim.events.at(-1)!;
      expect(sim.stage).toBe(to);
      expect(sim.context.cycles.find((c) => c.dispatchId === pending.dispatchId)).toEqual({
        ...before,
        runId: "runId" in event ? event.runId : null,
        outcome,
        reasons,
        reportedAt: event.at,
        evidence: "evidence" in event ? event.evidence : null,
      });
      expect(sim.context.lastProblem).toEqual(reasons);
      expect(sim.context.pendingDispatch?.step ?? null).toBe(nextPending);
    },
  );

  it("of a refactor that stayed green on the last unit completes the unit and starts the release", () => {
    const sim = lastUnitRefactor();
    const pending = sim.context.pendingDispatch!;
    sim.expectAccepted(sim.report("valid"));
    const { at } = sim.events.at(-1)!;
    expect([sim.stage, sim.context.unitIndex, sim.context.attempts]).toEqual(["deploying", 2, 0]);
    expect(sim.context.evidence.T2).toMatchObject({
      refactor: { dispatchId: pending.dispatchId, commit: pending.commit, at },
      complete: true,
    });
    expect(sim.effects("dispatchCycle")).toEqual([
      expect.objectContaining({ type: "dispatchCycle", step: "release", unit: "release" }),
    ]);
  });
});

describe("a review's push", () => {
  const REVIEWER = "reviewer-bot[bot]";
  /** T2, the last unit, at review. */
  const lastReview = () => {
    const sim = reach("red").throughUnit();
    sim.expectAccepted(sim.pushCommits(sim.redCommit()));
    sim.expectAccepted(sim.report("valid"));
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "// T2\n" } }));
    sim.expectAccepted(sim.report("valid"));
    expect([sim.stage, sim.context.unitIndex]).toEqual(["review", 1]);
    return sim;
  };

  it.each([
    ["asking T1 for a refactor", () => reach("review"), "T1", "refactor", "refactor"],
    ["accepting T1", () => reach("review"), "T1", "accept", "red"],
    ["accepting T2, the last unit", lastReview, "T2", "accept", "deploying"],
    ["naming another unit", () => reach("review"), "T2", "accept", "review"],
  ] as const)("%s moves the head, keeps the review and counts its author", (_name, start, unit, verdict, to) => {
    const sim = start();
    const inTurn = sim.context.units[sim.context.unitIndex]!.id;
    const path = `.consort/reviews/${inTurn}.json`;
    const text = JSON.stringify({ unit, verdict, notes: ["checked"] });
    const commit = sim.commit({ role: "navigator", author: REVIEWER, files: { [path]: text } });
    sim.expectAccepted(sim.pushCommits(commit));
    const { at } = sim.events.at(-1)!;
    expect(sim.stage).toBe(to);
    expect([sim.context.head, sim.context.artifacts[path]]).toEqual([commit.sha, text]);
    expect([sim.context.gates.deploy.authors.at(-1), sim.context.gates.promote.authors.at(-1)]).toEqual([
      REVIEWER,
      REVIEWER,
    ]);
    expect(sim.context.evidence[inTurn]?.review).toEqual(unit === inTurn ? { verdict, commit: commit.sha, at } : null);
  });
});

describe("the release and the promotion", () => {
  it("blocks a release that did not verify, and waits on one that could not decide", () => {
    const sim = reach("deploying");
    sim.expectAccepted(sim.report("error", ["no runner"]));
    expect(sim.stage).toBe("deploying");
    expect(comments(sim)).toEqual([
      `**The release cycle could not decide (retry when fixed)** (release, commit ${short(sim)}):\n- no runner`,
    ]);
    sim.expectAccepted(sim.send({ type: "retry", at, by: "lead" }));
    sim.expectAccepted(sim.report("invalid", ["GET /health: 502"]));
    expect([sim.stage, sim.context.blocked]).toEqual(["blocked", { reason: "GET /health: 502", resume: "deploying" }]);
    expect(comments(sim)).toEqual([
      `**The preview deploy did not verify: blocked** (release, commit ${short(sim)}):\n- GET /health: 502\n\nA person decides: retry, renegotiate, or abandon.`,
    ]);
  });

  it("keeps the parent's snapshot when the promotion did not complete, and promotes on a retry", () => {
    const sim = reach("promoting");
    const merged = sim.context.mergedCommit!;
    expect(sim.last.effects.find((e) => e.type === "promoteDatabase")).toEqual({
      type: "promoteDatabase",
      dispatchId: sim.context.pendingDispatch!.dispatchId,
      branch: "feature-f1-stock",
      parent: "main",
      commit: merged,
    });
    sim.expectAccepted(sim.report("invalid", ["lock timeout", "retry later"]));
    expect([sim.stage, sim.context.pendingDispatch]).toEqual(["promoting", null]);
    expect(comments(sim)).toEqual([
      "**Promotion did not complete**; the parent's snapshot is kept. Retry when fixed:\n- lock timeout\n- retry later",
    ]);
    sim.expectAccepted(sim.send({ type: "retry", at, by: "lead" }));
    sim.expectAccepted(sim.report("valid"));
    expect(sim.stage).toBe("done");
  });

  it("ends done, deleting the track's database and saying what was migrated", () => {
    const sim = reach("promoting");
    sim.expectAccepted(sim.report("valid"));
    expect(sim.last.effects.filter((e) => e.type !== "updateChecks")).toEqual([
      { type: "deleteDatabase", branch: "feature-f1-stock" },
      {
        type: "comment",
        body: `**Done.** main is migrated to ${sim.context.mergedCommit!.slice(0, 7)}. The track's database branch is deleted.`,
      },
    ]);
  });

  it("ends done with what the promotion said it did, when it said more", () => {
    const sim = reach("promoting");
    sim.expectAccepted(sim.report("valid", ["Nothing to migrate:", "the merge is the promotion."]));
    expect(comments(sim)).toEqual([
      "**Done.** Nothing to migrate: the merge is the promotion. The track's database branch is deleted.",
    ]);
  });

  it("takes only the promotion's report while promoting, and says the merged commit was migrated", () => {
    const sim = reach("promoting");
    const state = trackMachine.resolveState({
      value: "promoting",
      context: { ...sim.context, mergedCommit: "7".repeat(40) },
    });
    const report = (step: "release" | "promote", outcome: "valid" | "invalid"): MachineEvent => ({
      type: "CYCLE_REPORTED",
      at,
      step,
      outcome,
      runId: 1,
      reasons: [],
      evidence: null,
    });
    for (const outcome of ["valid", "invalid"] as const)
      expect(machineTransition(trackMachine, state, report("release", outcome))[0]).toBe(state);
    const [done, actions] = machineTransition(trackMachine, state, report("promote", "valid"));
    expect(done.value).toBe("done");
    expect(actions.filter((a) => a.type === "emit").map((a) => a.params)).toContainEqual({
      type: "comment",
      body: "**Done.** main is migrated to 7777777. The track's database branch is deleted.",
    });
  });

  it("ignores closing, merging again or withdrawing once merged", () => {
    const sim = reach("promoting");
    const snapshot = sim.snapshot;
    const state = trackMachine.resolveState({ value: snapshot.stage, context: snapshot.context });
    for (const event of [
      { type: "CLOSED", at, by: "x" },
      { type: "MERGED", at, commit: "e".repeat(40) },
      { type: "GATE_WITHDRAWN", at, gate: "promote", reason: "dismissed" },
    ] as MachineEvent[]) {
      const [next, actions] = machineTransition(trackMachine, state, event);
      expect([next.value, actions.length]).toEqual(["promoting", 0]);
    }
  });
});

describe("a track ends", () => {
  const ending = (sim: TrackSim) => [sim.stage, comments(sim), sim.context.ended, sim.context.pendingDispatch];

  it("abandoned by a person, with the reason given", () => {
    const sim = reach("green-verify");
    sim.expectAccepted(sim.send({ type: "abandon", at, by: "lead", reason: "feature dropped" }));
    expect(ending(sim)).toEqual([
      "abandoned",
      ["**Track abandoned**: feature dropped. Its database branch is deleted."],
      { reason: "feature dropped", by: "lead", at },
      null,
    ]);
    expect(sim.effects("deleteDatabase")).toEqual([{ type: "deleteDatabase", branch: "feature-f1-stock" }]);
  });

  it("abandoned when the pull request is closed unmerged", () => {
    const sim = reach("green");
    sim.expectAccepted(sim.send({ type: "closed", at, by: "someone" }));
    expect(ending(sim)).toEqual([
      "abandoned",
      ["**Track abandoned**: the pull request was closed without merging. Its database branch is deleted."],
      { reason: "the pull request was closed without merging", by: "someone", at },
      null,
    ]);
  });

  it("abandoned when merged before the promote gate, promoting nothing", () => {
    const sim = reach("deploy-gate");
    sim.expectAccepted(sim.send({ type: "merged", at, commit: sim.context.head }));
    expect(ending(sim)).toEqual([
      "abandoned",
      [
        "**Track abandoned**: merged before the promote gate was approved: Consort promoted nothing. Its database branch is deleted.",
      ],
      { reason: "merged before the promote gate was approved: Consort promoted nothing", by: null, at },
      null,
    ]);
  });
});

describe("renegotiation", () => {
  const ALL_DESIGN: DesignStep[] = ["stories", "spec", "architecture", "db-design", "ux"];
  const renegotiate = (snapshot: TrackSnapshot, scope: "design" | "test-list", from?: DesignStep) => {
    const state = trackMachine.resolveState({ value: snapshot.stage, context: snapshot.context });
    const event: MachineEvent = { type: "RENEGOTIATE", at, by: "lead", scope, from: from ?? "spec", reason: "r" };
    const [next] = machineTransition(trackMachine, state, event);
    return next === state ? null : next.value;
  };

  it.each([
    ["spec", ["stories"], false],
    ["architecture", ["stories", "spec"], false],
    ["db-design", ["stories", "spec", "architecture"], false],
    ["ux", ["stories", "spec", "architecture", "db-design"], false],
    ["design-gate", ALL_DESIGN, false],
    ["test-list", ALL_DESIGN, false],
    ["test-list-gate", ALL_DESIGN, true],
    ["red", ALL_DESIGN, true],
    ["red-verify", ALL_DESIGN, true],
    ["green", ALL_DESIGN, true],
    ["green-verify", ALL_DESIGN, true],
    ["repair", ALL_DESIGN, true],
    ["review", ALL_DESIGN, true],
    ["refactor", ALL_DESIGN, true],
    ["refactor-verify", ALL_DESIGN, true],
    ["blocked", ALL_DESIGN, true],
    ["deploying", ALL_DESIGN, true],
    ["deploy-gate", ALL_DESIGN, true],
    ["promote-gate", ALL_DESIGN, true],
  ] as Array<[Stage, DesignStep[], boolean]>)(
    "at %s reopens each earlier design step, and the test list only from its gate on",
    (stage, earlier, testList) => {
      const snapshot = reach(stage).snapshot;
      for (const step of ALL_DESIGN)
        expect([step, renegotiate(snapshot, "design", step)]).toEqual([step, earlier.includes(step) ? step : null]);
      expect(renegotiate(snapshot, "test-list")).toBe(testList ? "test-list" : null);
    },
  );

  it("of the design reopens every gate from the design gate down, and unblocks", () => {
    const sim = reach("blocked");
    const reason = "S1 asks for too much";
    sim.expectAccepted(sim.send({ type: "renegotiate", at, by: "lead", scope: "design", from: "spec", reason }));
    const why = `renegotiated by lead: ${reason}`;
    expect([sim.stage, sim.context.blocked, sim.context.attempts, sim.context.pendingDispatch]).toEqual([
      "spec",
      null,
      0,
      null,
    ]);
    expect(Object.values(sim.context.gates).map((g) => [g.status, g.pendingHash, g.withdrawnReason])).toEqual([
      ["closed", null, why],
      ["closed", null, `the design gate was reopened (${why})`],
      ["closed", null, null],
      ["closed", null, null],
    ]);
  });

  it("is not offered once the pull request is merged, nor at the first step", () => {
    for (const stage of ["stories", "merging", "promoting"] as const) {
      const snapshot = reach(stage).snapshot;
      expect(renegotiate(snapshot, "test-list")).toBeNull();
      expect(renegotiate(snapshot, "design", "stories")).toBeNull();
    }
  });
});

describe("an ended track", () => {
  // xstate's pure transition still takes the root's events from a final state: what refuses them is
  // src/orchestrator/transition.ts, by stage ("the track has ended"). The status is xstate's own record.
  it.each(["done", "abandoned"] as const)("is in a final state at %s", (stage) => {
    const snapshot = reach(stage).snapshot;
    const state = trackMachine.resolveState({ value: snapshot.stage, context: snapshot.context });
    expect([state.value, state.status]).toEqual([stage, "done"]);
  });
});
