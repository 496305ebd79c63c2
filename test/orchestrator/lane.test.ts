import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { describeLane, laneOf, renderLane } from "../../src/orchestrator/index.js";
import type { TrackContext, TrackSnapshot } from "../../src/orchestrator/types.js";
import { edited, stockflowText } from "./fixtures/stockflow.js";
import { reach, userFacingSpec } from "./helpers/reach.js";
import { smallDesign, TrackSim } from "./helpers/track.js";

/** The snapshot with its context changed by `change` (a state the public API reaches rarely, or never). */
const withContext = (snapshot: TrackSnapshot, change: Partial<TrackContext>): TrackSnapshot => ({
  ...snapshot,
  context: { ...snapshot.context, ...change },
});

describe("describeLane", () => {
  const design = [
    "stories and acceptance criteria (product-owner)",
    "spec and NFRs (spec-author)",
    "architecture (architect)",
    "database design (dba)",
  ];
  const gates = [
    "design gate (a person approves)",
    "test list (test-strategist)",
    "test-list gate (a person approves)",
  ];
  const release = [
    "preview deploy, verified",
    "deploy gate (a person approves)",
    "promote gate (a person approves)",
    "merge the pull request",
    "migrate the parent database",
  ];
  const units = ["T1: red → green → review", "T2: red → green → review"];

  it("shows a new track at its first step, the build as one line before the list exists", () => {
    expect(renderLane(new TrackSim().snapshot)).toBe(
      [
        `  ▶ ${design[0]}`,
        ...[...design.slice(1), ...gates, "build: red → green → review per test", ...release].map((l) => `  · ${l}`),
      ].join("\n"),
    );
  });

  it("visits the screens when a story of the spec is user-facing, however the spec is spaced", () => {
    const sim = reach("ux");
    expect(describeLane(sim.snapshot)).toEqual({
      done: design,
      now: "screens and states (ux-designer)",
      next: [...gates, "build: red → green → review per test", ...release],
    });
    const spaced = JSON.stringify(JSON.parse(userFacingSpec), null, 2);
    expect(spaced).toContain('"userFacing": true');
    const atDbDesign = reach("db-design").snapshot;
    const lane = describeLane(withContext(atDbDesign, { artifacts: { [ARTIFACT_PATHS.spec]: spaced } }));
    expect(lane.next[0]).toBe("screens and states (ux-designer)");
    // Without a user-facing story, and no screens yet, the lane has no screens step.
    const plain = describeLane(withContext(atDbDesign, { artifacts: { [ARTIFACT_PATHS.spec]: smallDesign.spec } }));
    expect(plain.now).toBe("database design (dba)");
    expect(plain.next[0]).toBe("design gate (a person approves)");
    // A screens file already written keeps the step, whatever the spec says.
    const written = describeLane(withContext(atDbDesign, { artifacts: { [ARTIFACT_PATHS.ux]: "{}" } }));
    expect(written.next[0]).toBe("screens and states (ux-designer)");
  });

  it("reads the spec as the machine does: a spec that does not validate names no user-facing story", () => {
    // The machine goes on to ux only from a spec that parses; the lane must not promise a step it skips.
    const atDbDesign = reach("db-design").snapshot;
    const invalid = edited(userFacingSpec, (j) => delete j.feature);
    expect(invalid).toMatch(/"userFacing": true/);
    const lane = describeLane(withContext(atDbDesign, { artifacts: { [ARTIFACT_PATHS.spec]: invalid } }));
    expect(lane.next).not.toContain("screens and states (ux-designer)");
  });

  it("shows the screens as now at the ux stage, whatever the spec says", () => {
    const sim = reach("ux");
    const lane = describeLane(withContext(sim.snapshot, { artifacts: {} }));
    expect(lane.now).toBe("screens and states (ux-designer)");
  });

  it("shows a gate as now, and the unit in turn of the build", () => {
    expect(describeLane(reach("design-gate").snapshot)).toEqual({
      done: design,
      now: "design gate (a person approves)",
      next: gates.slice(1).concat("build: red → green → review per test", ...release),
    });
    expect(describeLane(reach("red-verify").snapshot)).toEqual({
      done: [...design, ...gates],
      now: "T1: red-verify",
      next: [units[1], ...release],
    });
  });

  it("names every test of a unit of several", () => {
    const sim = new TrackSim(ConsortConfig.parse({ granularity: "ac" }));
    sim.throughDesign(
      edited(stockflowText.testList, (j) => {
        j.tests = [j.tests[0], { ...j.tests[0], id: "T2", title: "filing stock > stores the code" }, j.tests[1]].map(
          (t: object, i: number) => ({ ...t, id: `T${i + 1}` }),
        );
      }),
    );
    expect(describeLane(sim.snapshot)).toEqual({
      done: [...design, ...gates],
      now: "S1-AC1: red",
      next: ["S1-AC2: red → green → review", ...release],
    });
    sim.throughUnit();
    expect(describeLane(sim.snapshot).done.at(-1)).toBe("S1-AC1: red → green → review (T1, T2)");
  });

  it("shows a blocked unit with its reason, and a blocked track with no record at RED", () => {
    const sim = reach("blocked");
    expect(describeLane(sim.snapshot)).toEqual({
      done: [...design, ...gates],
      now: "T1: blocked (T1 still fails)",
      next: [units[1], ...release],
    });
    expect(describeLane(withContext(sim.snapshot, { blocked: null })).now).toBe("T1: blocked ()");
  });

  it("shows the release blocked where it stands", () => {
    const sim = reach("deploying");
    sim.expectAccepted(sim.report("invalid", ["GET /health: 502"]));
    expect(describeLane(sim.snapshot)).toEqual({
      done: [...design, ...gates, ...units],
      now: "preview deploy, verified: blocked (GET /health: 502)",
      next: release.slice(1),
    });
  });

  it("shows every step done once the track is done", () => {
    expect(renderLane(reach("done").snapshot)).toBe(
      [...[...design, ...gates, ...units, ...release].map((l) => `  ✓ ${l}`), "  ▶ done"].join("\n"),
    );
  });

  it("shows only why an abandoned track ended", () => {
    const sim = reach("abandoned");
    expect(describeLane(sim.snapshot)).toEqual({ done: [], now: "abandoned: feature dropped", next: [] });
    expect(describeLane(withContext(sim.snapshot, { ended: null }))).toEqual({
      done: [],
      now: "abandoned: ",
      next: [],
    });
  });

  it("says the lane is halted on a rejected commit", () => {
    const sim = reach("green");
    sim.push({ role: "navigator", files: { "src/services/stock.ts": "x" } });
    const sha = sim.context.rejectedHead!.sha;
    expect(describeLane(sim.snapshot).now).toBe(`T1: green — halted: commit ${sha.slice(0, 7)} rejected`);
  });
});

describe("laneOf", () => {
  const statuses = (snapshot: TrackSnapshot) => laneOf(snapshot).stations.map((s) => `${s.key}:${s.status}`);

  it("gives every station its status: a gate the track stands at waits for a person", () => {
    expect(statuses(reach("design-gate").snapshot)).toEqual([
      "stories:done",
      "spec:done",
      "architecture:done",
      "db-design:done",
      "design-gate:waiting",
      "test-list:ahead",
      "test-list-gate:ahead",
      "build:ahead",
      "deploying:ahead",
      "deploy-gate:ahead",
      "promote-gate:ahead",
      "merging:ahead",
      "promoting:ahead",
    ]);
  });

  it("marks the station failed where the track is blocked, with why", () => {
    const lane = laneOf(reach("blocked").snapshot);
    expect(lane.stations.find((s) => s.status === "failed")).toMatchObject({
      key: "unit:T1",
      unit: "T1",
      kind: "unit",
    });
    expect(lane.blocked).toEqual({ reason: "T1 still fails" });
    expect(lane.ended).toBeNull();
  });

  it("ends an abandoned track where its evidence stops: in the design before the design gate", () => {
    const lane = laneOf(reach("abandoned").snapshot);
    expect(lane.ended).toEqual({ reason: "feature dropped" });
    expect(lane.stations.filter((s) => s.status === "failed").map((s) => s.key)).toHaveLength(1);
  });
});
