import { describe, expect, it } from "vitest";
import { parseJUnit } from "../../../src/cycle/junit/index.js";
import { fixtureReport, fixtureRun } from "./fixtures.js";
import { describeVitestReport } from "./vitest-report.js";

// The same checks run on a report the installed vitest writes now: vitest-live.test.ts.
describe("the vitest report committed in fixtures/vitest", () => {
  describeVitestReport(async () => ({
    xml: await fixtureReport("vitest"),
    exitCode: (await fixtureRun("vitest")).exitCode,
  }));
});

describe("a vitest run that fails on an unhandled rejection (fixtures/vitest/report-unhandled-rejection.xml)", () => {
  it("writes a report with no failure although the run was red, so the exit code must be weighed too", async () => {
    const report = parseJUnit(await fixtureReport("vitest", "report-unhandled-rejection.xml"));
    expect(report.tests.map((t) => t.outcome)).toEqual(["passed"]);
    expect(report.loadErrors).toEqual([]);
    expect((await fixtureRun("vitest", "report-unhandled-rejection.xml")).exitCode).toBe(1);
  });
});
