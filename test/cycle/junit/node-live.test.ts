import { describe, expect, it } from "vitest";
import { parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { fixtureReport, runLive } from "./fixtures.js";
import { PROJECT, describeNodeReport } from "./node-report.js";

/**
 * Runs this node's test runner on the sample project. Its own file so that mutation runs
 * (vitest.mutate.config.ts) leave it out: it spawns a runner, seconds per mutant, and checks
 * nothing of the parser the committed report's tests (node.test.ts) do not.
 */

// This node, run now: a change in how node writes JUnit fails here, not in a cycle.
describe("a node --test report written live by this node", () => {
  const live = describeNodeReport(() =>
    runLive(
      process.execPath,
      (out) => ["--test", "--test-reporter=junit", `--test-reporter-destination=${out}`],
      PROJECT,
    ),
  );

  it("reads the same outcomes as the committed report: rerun generate-fixtures.sh when this fails", async () => {
    const committed = parseJUnit(await fixtureReport("node"));
    const outcomes = (r: JUnitReport) =>
      r.tests.map((t) => [t.file?.replace(/^.*\/test\//, "test/"), t.name, t.outcome, t.type]).sort();
    expect(outcomes(live())).toEqual(outcomes(committed));
    expect(live().loadErrors.map((e) => e.file?.replace(/^.*\/test\//, "test/"))).toEqual(
      committed.loadErrors.map((e) => e.file?.replace(/^.*\/test\//, "test/")),
    );
  });
});
