import { join } from "node:path";
import { expect, it } from "vitest";
import { findTestCase, locateTestCase, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { FIXTURES, describeSampleRun } from "./fixtures.js";

/**
 * The checks of node --test's report of the sample project, shared by the committed report
 * (node.test.ts) and the one this node writes now (node-live.test.ts).
 */

export const PROJECT = join(FIXTURES, "node", "project");

/**
 * The test a title names in a file: found by the entry when the report says each test's file;
 * Node 20's says none, so no entry finds it (a test counts only in its own file, and the cycle
 * refuses with the setting), and the outcome checks read the report's case of that title itself.
 */
function caseOf(report: JUnitReport, file: string, title: string) {
  const location = locateTestCase(report, { file, title });
  if (report.tests.every((t) => t.file === undefined)) {
    expect(location).toMatchObject({
      status: "missing",
      hint: expect.stringMatching(/^this Node's junit reporter writes no file/),
    });
    const named = report.tests.filter((t) => t.name === title || [...(t.suites ?? []), t.name].join(" > ") === title);
    expect(named, title).toHaveLength(1);
    return named[0];
  }
  return location.status === "found" ? location.test : undefined;
}
const CART = "test/cart.test.js";
const BROKEN = "test/broken.test.js";

/** The checks every node --test report of the sample project must pass, committed or live. */
export function describeNodeReport(
  load: () => Promise<{ xml: string | undefined; exitCode: number }>,
): () => JUnitReport {
  const report = describeSampleRun("node --test", "node", "node's test runner's", load);

  it("finds a top-level test by its title", () => {
    expect(caseOf(report(), CART, "loads the cart module")?.outcome).toBe("passed");
  });

  it("finds a test inside describe blocks by its suites and title joined with >", () => {
    expect(caseOf(report(), CART, "cart > totals the prices of its items")?.outcome).toBe("passed");
  });

  it("finds a nested test by its own title too, since node reports it bare", () => {
    expect(caseOf(report(), CART, "totals the prices of its items")?.outcome).toBe("passed");
  });

  it("reads a failed assert as an assertion failure, though node types every failure testCodeFailure", () => {
    const test = caseOf(report(), CART, "cart > applies a ten percent discount");
    expect(test).toMatchObject({ outcome: "failed-assertion", type: "AssertionError" });
    expect(test?.message).toContain("Expected values to be strictly equal");
  });

  it("reads a TypeError as an error, not an assertion", () => {
    const test = caseOf(report(), CART, "cart > lists the item names of a missing cart");
    expect(test).toMatchObject({ outcome: "failed-error", type: "TypeError" });
  });

  it("reads a skipped test as skipped, with its reason", () => {
    expect(caseOf(report(), CART, "cart > shipping > ships abroad")).toMatchObject({
      outcome: "skipped",
      message: "not built yet",
    });
  });

  it("reads a test cancelled because its block's before hook threw as failed-error", () => {
    expect(caseOf(report(), "test/stock.test.js", "stock > files stock at a location")).toMatchObject({
      outcome: "failed-error",
      type: "cancelledByParent",
    });
  });

  it("lists a file whose import fails as a load error, not as a test", () => {
    expect(report().loadErrors).toHaveLength(1);
    expect(report().loadErrors[0]?.file).toMatch(/\/test\/broken\.test\.js$/);
    expect(report().tests.some((t) => t.name.endsWith(BROKEN))).toBe(false);
  });

  it("reports a test of the file that did not load as failed-error, never passed or silently missing", () => {
    expect(locateTestCase(report(), { file: BROKEN, title: "refunds a returned item" }).status).toBe("not-loaded");
    expect(findTestCase(report(), { file: BROKEN, title: "refunds a returned item" })?.outcome).toBe("failed-error");
  });

  return report;
}
