import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { REPO_ROOT, fixtureReport, runLive } from "./fixtures.js";
import { PROJECT, describeVitestReport } from "./vitest-report.js";

/**
 * Runs the installed vitest on the sample project. Its own file so that mutation runs
 * (vitest.mutate.config.ts) leave it out: it spawns a runner, seconds per mutant, and checks
 * nothing of the parser the committed report's tests (vitest.test.ts) do not.
 */

// The installed vitest, run now: a change in how vitest writes JUnit fails here, not in a cycle.
describe("a vitest report written live by the installed vitest", () => {
  const live = describeVitestReport(() =>
    runLive(
      join(REPO_ROOT, "node_modules", ".bin", "vitest"),
      (out) => ["run", "--config", join(PROJECT, "vitest.config.mjs"), "--reporter=junit", `--outputFile=${out}`],
      PROJECT,
    ),
  );

  it("reads the same outcomes as the committed report: rerun generate-fixtures.sh when this fails", async () => {
    const committed = parseJUnit(await fixtureReport("vitest"));
    const outcomes = (r: JUnitReport) =>
      r.tests.map((t) => [t.file?.replace(/^.*\/test\//, "test/"), t.name, t.outcome, t.type]).sort();
    expect(outcomes(live())).toEqual(outcomes(committed));
    expect(live().loadErrors.map((e) => e.file?.replace(/^.*\/test\//, "test/"))).toEqual(
      committed.loadErrors.map((e) => e.file?.replace(/^.*\/test\//, "test/")),
    );
  });
});
