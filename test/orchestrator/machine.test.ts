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
    ["design-gate", ["stories", "spec", "architecture", "db-design", "ux"], false],
    ["test-list", ["stories", "spec", "architecture", "db-design", "ux"], false],
    ["test-list-gate", ["stories", "spec", "architecture", "db-design", "ux"], true],
    ["green", ["stories", "spec", "architecture", "db-design", "ux"], true],
    ["deploy-gate", ["stories", "spec", "architecture", "db-design", "ux"], true],
    ["promote-gate", ["stories", "spec", "architecture", "db-design", "ux"], true],
  ] as Array<[Stage, DesignStep[], boolean]>)(
    "at %s reopens each earlier design step, and the test list only from its gate on",
    (stage, earlier, testList) => {
      const snapshot = reach(stage).snapshot;
      for (const step of ["stories", "spec", "architecture", "db-design", "ux"] as const)
        expect([step, renegotiate(snapshot, "design", step)]).toEqual([step, earlier.includes(step) ? step : null]);
      expect(renegotiate(snapshot, "test-list")).toBe(testList ? "test-list" : null);
    },
  );

  it("is not offered once the pull request is merged, nor at the first step", () => {
    for (const stage of ["stories", "merging", "promoting"] as const) {
      const snapshot = reach(stage).snapshot;
      expect(renegotiate(snapshot, "test-list")).toBeNull();
      expect(renegotiate(snapshot, "design", "stories")).toBeNull();
    }
  });
});
