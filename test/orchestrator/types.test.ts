import { describe, expect, it } from "vitest";
import {
  DESIGN_STEPS,
  GATE_NAMES,
  gateAtStage,
  gateStage,
  isBuildStage,
  isCycleStage,
  SNAPSHOT_SCHEMA_VERSION,
  STAGES,
} from "../../src/orchestrator/types.js";

/**
 * src/orchestrator/types.ts declares the lane: its stages in order and which of them are build
 * stages, cycle stages and gate stages. The machine, the checks, the roles and the board all read
 * these; each predicate is asserted over every stage, so a stage that moves in or out of a set shows.
 */

describe("the lane's declarations", () => {
  it("the stages, in lane order", () => {
    expect(STAGES).toEqual([
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
      "maintenance",
      "deploying",
      "deploy-gate",
      "promote-gate",
      "merging",
      "promoting",
      "done",
      "abandoned",
    ]);
    expect(DESIGN_STEPS).toEqual(["stories", "spec", "architecture", "db-design", "ux"]);
    expect(SNAPSHOT_SCHEMA_VERSION).toBe(2);
  });

  it("the build stages: one unit's RED, GREEN, repair, review and refactor", () => {
    expect(STAGES.filter(isBuildStage)).toEqual([
      "red",
      "red-verify",
      "green",
      "green-verify",
      "repair",
      "review",
      "refactor",
      "refactor-verify",
    ]);
    expect(isBuildStage("unit")).toBe(false);
  });

  it("the cycle stages: where the track waits for a dispatched run", () => {
    expect(STAGES.filter(isCycleStage)).toEqual([
      "red-verify",
      "green-verify",
      "refactor-verify",
      "deploying",
      "promoting",
    ]);
  });

  it("each gate has its stage, and only a gate stage has a gate", () => {
    expect(GATE_NAMES.map(gateStage)).toEqual(["design-gate", "test-list-gate", "deploy-gate", "promote-gate"]);
    expect(
      Object.fromEntries(STAGES.flatMap((stage) => (gateAtStage(stage) ? [[stage, gateAtStage(stage)]] : []))),
    ).toEqual({
      "design-gate": "design",
      "test-list-gate": "test-list",
      "deploy-gate": "deploy",
      "promote-gate": "promote",
    });
    expect(gateAtStage("-gate")).toBeUndefined();
  });
});
