import { join } from "node:path";
import { expect, it } from "vitest";
import { findTestCase, locateTestCase, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { FIXTURES, describeSampleRun } from "./fixtures.js";

/**
 * The checks of vitest's report of the sample project, shared by the committed report
 * (vitest.test.ts) and the one the installed vitest writes now (vitest-live.test.ts).
 */

export const PROJECT = join(FIXTURES, "vitest", "project");
const CART = "test/cart.test.js";

/** The checks every vitest report of the sample project must pass, committed or live. */
export function describeVitestReport(
  load: () => Promise<{ xml: string | undefined; exitCode: number }>,
): () => JUnitReport {
  const report = describeSampleRun("vitest", "vitest", "vitest's", load);

  it("finds a top-level test by its file and title", () => {
    expect(findTestCase(report(), { file: CART, title: "loads the cart module" })?.outcome).toBe("passed");
  });

  it("finds a test inside describe blocks by the joined title vitest reports", () => {
    expect(findTestCase(report(), { file: CART, title: "cart > totals the prices of its items" })?.outcome).toBe(
      "passed",
    );
  });

  it("reads a failed expect() as an assertion failure", () => {
    const test = findTestCase(report(), { file: CART, title: "cart > applies a ten percent discount" });
    expect(test).toMatchObject({
      outcome: "failed-assertion",
      type: "AssertionError",
      message: "expected 100 to be 90 // Object.is equality",
    });
  });

  it("reads a TypeError as an error, not an assertion", () => {
    const test = findTestCase(report(), { file: CART, title: "cart > lists the item names of a missing cart" });
    expect(test).toMatchObject({ outcome: "failed-error", type: "TypeError" });
  });

  it("reads a skipped test as skipped", () => {
    expect(findTestCase(report(), { file: CART, title: "cart > shipping > ships abroad" })?.outcome).toBe("skipped");
  });

  it("lists a file whose import fails as a load error, not as a test", () => {
    expect(report().loadErrors).toEqual([
      {
        file: "test/broken.test.js",
        message: expect.stringContaining("Cannot find module '../src/refunds.js'"),
        missing: {
          language: "js",
          module: "../src/refunds.js",
          importer: expect.stringMatching(/test\/broken\.test\.js$/),
        },
      },
    ]);
    expect(report().tests.map((t) => t.name)).not.toContain("test/broken.test.js");
  });

  it("reports a test of the file that did not load as failed-error, never passed or silently missing", () => {
    const location = locateTestCase(report(), { file: "test/broken.test.js", title: "refunds a returned item" });
    expect(location.status).toBe("not-loaded");
    expect(findTestCase(report(), { file: "test/broken.test.js", title: "refunds a returned item" })?.outcome).toBe(
      "failed-error",
    );
  });

  it("reads a test whose block's beforeAll threw as failed-error with the hook's reason, not as skipped", () => {
    expect(
      findTestCase(report(), { file: "test/stock.test.js", title: "stock > files stock at a location" }),
    ).toMatchObject({
      outcome: "failed-error",
      message: expect.stringContaining("connect ECONNREFUSED"),
    });
    expect(report().tests.some((t) => t.name === "stock")).toBe(false);
  });

  it("does not find a title that is only the last part of a nested test", () => {
    expect(locateTestCase(report(), { file: CART, title: "applies a ten percent discount" }).status).toBe("missing");
  });

  it("does not find a test under another file", () => {
    expect(findTestCase(report(), { file: "test/other.test.js", title: "loads the cart module" })).toBeUndefined();
  });

  it("carries the time of the run and each test's duration", () => {
    expect(Date.parse(report().timestamp ?? "")).not.toBeNaN();
    expect(report().tests.every((t) => t.durationMs !== undefined && t.durationMs >= 0)).toBe(true);
  });

  return report;
}
