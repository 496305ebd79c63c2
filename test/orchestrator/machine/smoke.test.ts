import { describe, expect, it } from "vitest";
import { TrackSim } from "../helpers/track.js";

describe("smoke", () => {
  it("walks StockFlow to done", () => {
    const sim = new TrackSim().throughDesign();
    expect(sim.stage).toBe("red");
    sim.throughUnit();
    expect(sim.stage).toBe("red");
    sim.throughUnit();
    expect(sim.stage).toBe("deploying");
    sim.expectAccepted(sim.report("valid"));
    expect(sim.stage).toBe("deploy-gate");
    sim.expectAccepted(sim.approve("deploy"));
    sim.expectAccepted(sim.approve("promote"));
    expect(sim.stage).toBe("merging");
    sim.expectAccepted(sim.send({ type: "merged", at: "2026-11-30T10:00:00Z", commit: sim.context.head }));
    sim.expectAccepted(sim.report("valid"));
    expect(sim.stage).toBe("done");
  });
});
