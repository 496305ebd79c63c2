import { describe, expect, it } from "vitest";
import { STAGES } from "../../src/orchestrator/types.js";
import { reach } from "./helpers/reach.js";

describe("every stage is reachable through the public API with accepted steps only", () => {
  it.each(STAGES.map((s) => [s]))("%s", (stage) => {
    expect(reach(stage).stage).toBe(stage);
  });
});
