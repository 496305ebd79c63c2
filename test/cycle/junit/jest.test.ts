import { beforeEach, describe, expect, it } from "vitest";
import { findTestCase, locateTestCase, parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { fixtureReport, fixtureRun } from "./fixtures.js";

const CART = "test/cart.test.cjs";
const BROKEN = "test/broken.test.cjs";

describe("jest-junit's report with its default settings (fixtures/jest/report.xml)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("jest"));
  });

  it("is recognised as jest's", () => {
    expect(report.flavour).toBe("jest");
  });

  it("came from a red run", async () => {
    expect((await fixtureRun("jest")).exitCode).not.toBe(0);
  });

  it("finds a top-level test by its title, though jest-junit writes it with a leading space", () => {
    expect(findTestCase(report, { file: CART, title: "loads the cart module" })?.outcome).toBe("passed");
  });

  it("finds a test inside describe blocks by the space-joined title jest-junit writes", () => {
    expect(findTestCase(report, { file: CART, title: "cart totals the prices of its items" })?.outcome).toBe("passed");
  });

  it("finds the same test when the test list joins the describe blocks with >", () => {
    expect(findTestCase(report, { file: CART, title: "cart > totals the prices of its items" })?.outcome).toBe(
      "passed",
    );
  });

  it("reads a failed expect() as an assertion failure from its text alone (jest-junit writes no type)", () => {
    expect(findTestCase(report, { file: CART, title: "cart applies a ten percent discount" })).toMatchObject({
      outcome: "failed-assertion",
      message: "Error: expect(received).toBe(expected) // Object.is equality",
    });
  });

  it("reads a TypeError as an error, not an assertion", () => {
    expect(findTestCase(report, { file: CART, title: "cart lists the item names of a missing cart" })).toMatchObject({
      outcome: "failed-error",
      type: "TypeError",
    });
  });

  it("reads a skipped test as skipped", () => {
    expect(findTestCase(report, { file: CART, title: "cart shipping ships abroad" })?.outcome).toBe("skipped");
  });

  it("reads a test whose block's beforeAll threw as failed-error with the hook's error", () => {
    expect(
      findTestCase(report, { file: "test/stock.test.cjs", title: "stock files stock at a location" }),
    ).toMatchObject({
      outcome: "failed-error",
      message: "Error: connect ECONNREFUSED 127.0.0.1:5432",
    });
  });

  it("drops a file that failed to load entirely, so its test is missing, never passed", () => {
    expect(report.loadErrors).toEqual([]);
    expect(locateTestCase(report, { file: BROKEN, title: "refunds a returned item" }).status).toBe("missing");
  });
});

describe("jest-junit's report with addFileAttribute and reportTestSuiteErrors (the settings to use)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("jest", "report-with-file-and-suite-errors.xml"));
  });

  it("puts each test in its file", () => {
    expect(new Set(report.tests.map((t) => t.file))).toEqual(new Set([CART, "test/stock.test.cjs"]));
  });

  it("lists the file that failed to load once, with jest's reason", () => {
    expect(report.loadErrors).toEqual([
      {
        file: BROKEN,
        message: "Cannot find module '../src/refunds.cjs' from 'test/broken.test.cjs'",
        missing: { language: "js", module: "../src/refunds.cjs", importer: BROKEN },
      },
    ]);
  });

  it("keeps jest's placeholder for the broken suite out of the tests", () => {
    expect(report.tests.some((t) => t.classname === "Test suite failed to run")).toBe(false);
  });

  it("reports a test of the file that did not load as failed-error", () => {
    const test = findTestCase(report, { file: BROKEN, title: "refunds a returned item" });
    expect(test).toMatchObject({ outcome: "failed-error", type: "load error" });
    expect(test?.message).toContain("Cannot find module");
  });

  it("does not find a test of one file under another", () => {
    expect(
      findTestCase(report, { file: "test/other.test.cjs", title: "cart totals the prices of its items" }),
    ).toBeUndefined();
  });

  it("reads the same outcomes as the default settings", async () => {
    const defaults = parseJUnit(await fixtureReport("jest"));
    const outcomes = (r: JUnitReport) => r.tests.map((t) => [t.name, t.outcome, t.type]);
    expect(outcomes(report)).toEqual(outcomes(defaults));
  });
});
