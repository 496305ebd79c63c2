import { ARTIFACT_PATHS } from "../../../src/artifacts/paths.js";
import { ConsortConfig, type ConsortConfigInput } from "../../../src/config/consort-config.js";
import type { Stage } from "../../../src/orchestrator/types.js";
import { edited, stockflowText } from "../fixtures/stockflow.js";
import { createTrack } from "../../../src/orchestrator/index.js";
import { sha, smallDesign, TrackSim } from "./track.js";

/** A spec whose one story is user-facing, so the lane visits `ux`. */
export const userFacingSpec = edited(smallDesign.spec, (j) => (j.stories[0].userFacing = true));
const uxForS1 = edited(stockflowText.ux, (j) => (j.screens[0].stories = ["S1"]));

const redCommit = (sim: TrackSim) => {
  const unit = sim.context.units[sim.context.unitIndex]!;
  const files: Record<string, string> = {};
  for (const t of unit.tests)
    files[t.file] = `${sim.context.testFiles[t.file] ?? ""}it(${JSON.stringify(t.title)}, () => expect(1).toBe(2));\n`;
  return { role: "navigator" as const, files };
};
const greenCommit = { role: "driver" as const, files: { "src/services/stock.ts": "export const filed = true;\n" } };
const review = (sim: TrackSim, verdict: "accept" | "refactor") => {
  const unit = sim.context.units[sim.context.unitIndex]!.id;
  return {
    role: "navigator" as const,
    files: {
      [`.consort/reviews/${unit}.json`]: JSON.stringify({
        unit,
        verdict,
        notes: verdict === "refactor" ? ["extract the SQL into src/db"] : [],
      }),
    },
  };
};

/**
 * A track driven through the public API to `stage` (StockFlow, two tests). Every step on the way
 * must be accepted, so reaching a stage also proves the way there works.
 */
export function reach(stage: Stage, configInput: ConsortConfigInput = {}): TrackSim {
  const config = ConsortConfig.parse({ repairBound: 2, ...configInput });
  // A maintenance branch's lane starts there (test/roles/maintenance.test.ts drives the rest of it).
  if (stage === "maintenance") return maintenanceSim(config);
  const sim = new TrackSim(config);
  const ok = sim.expectAccepted.bind(sim);
  const steps: Array<[Stage, () => unknown]> = [
    [
      "stories",
      () =>
        ok(
          sim.push({
            role: "product-owner",
            files: {
              [ARTIFACT_PATHS.spec]: edited(stage === "ux" ? userFacingSpec : smallDesign.spec, (j) => delete j.nfrs),
            },
          }),
        ),
    ],
    [
      "spec",
      () =>
        ok(
          sim.push({
            role: "spec-author",
            files: { [ARTIFACT_PATHS.spec]: stage === "ux" ? userFacingSpec : smallDesign.spec },
          }),
        ),
    ],
    [
      "architecture",
      () => ok(sim.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: smallDesign.architecture } })),
    ],
    ["db-design", () => ok(sim.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign } }))],
    ["design-gate", () => ok(sim.approve("design"))],
    [
      "test-list",
      () =>
        ok(
          sim.push({
            role: "test-strategist",
            files: {
              [ARTIFACT_PATHS.testList]: edited(stockflowText.testList, (j) => (j.tests = j.tests.slice(0, 2))),
            },
          }),
        ),
    ],
    ["test-list-gate", () => ok(sim.approve("test-list"))],
    ["red", () => ok(sim.push(redCommit(sim)))],
    ["red-verify", () => ok(sim.report("valid"))],
    ["green", () => ok(sim.push(greenCommit))],
    ["green-verify", () => ok(sim.report("invalid", ["T1 failed: expected 1 rows, got 0"]))],
    ["repair", () => ok(sim.push(greenCommit))],
    ["green-verify#2", () => ok(sim.report("valid"))],
    ["review", () => ok(sim.push(review(sim, "refactor")))],
    ["refactor", () => ok(sim.push(greenCommit))],
    ["refactor-verify", () => ok(sim.report("valid"))],
    // T2, straight through
    ["red#2", () => ok(sim.push(redCommit(sim)))],
    ["red-verify#2", () => ok(sim.report("valid"))],
    ["green#2", () => ok(sim.push(greenCommit))],
    ["green-verify#3", () => ok(sim.report("valid"))],
    ["review#2", () => ok(sim.push(review(sim, "accept")))],
    ["deploying", () => ok(sim.report("valid"))],
    ["deploy-gate", () => ok(sim.approve("deploy"))],
    ["promote-gate", () => ok(sim.approve("promote"))],
    ["merging", () => ok(sim.send({ type: "merged", at: "2026-11-30T12:00:00Z", commit: sim.context.head }))],
    ["promoting", () => ok(sim.report("valid"))],
  ] as Array<[Stage, () => unknown]>;
  if (stage === "ux") {
    steps.splice(4, 0, [
      "ux" as Stage,
      () => ok(sim.push({ role: "ux-designer", files: { [ARTIFACT_PATHS.ux]: uxForS1 } })),
    ]);
  }
  if (stage === "blocked") {
    // Two failed GREENs with a repair bound of 2.
    for (const [name, step] of steps) {
      if (sim.stage === "repair") {
        ok(sim.push(greenCommit));
        ok(sim.report("invalid", ["T1 still fails"]));
        return sim;
      }
      void name;
      step();
    }
  }
  if (stage === "abandoned") {
    ok(sim.send({ type: "abandon", at: "2026-11-30T12:00:00Z", by: "lead-human", reason: "feature dropped" }));
    return sim;
  }
  if (stage === "done") {
    for (const [, step] of steps) step();
    return sim;
  }
  for (const [, step] of steps) {
    if (sim.stage === stage) return sim;
    step();
  }
  if (sim.stage !== stage) throw new Error(`could not reach ${stage}; at ${sim.stage}`);
  return sim;
}

/** A Dependabot-style branch's track, waiting for its change at `maintenance`. */
export function maintenanceSim(config: ConsortConfig = ConsortConfig.parse({})): TrackSim {
  const created = createTrack(
    {
      trackId: "acme/stockflow#dependabot",
      branch: "dependabot/npm_and_yarn/zod-4.1.0",
      baseBranch: "main",
      head: sha(1),
      databaseBranch: "dependabot-zod",
      parentDatabaseBranch: "main",
      at: "2026-12-03T12:00:00Z",
      lane: "maintenance",
    },
    config,
  );
  return new TrackSim(config, created);
}
