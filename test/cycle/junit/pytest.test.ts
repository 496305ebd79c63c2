import { beforeEach, describe, expect, it } from "vitest";
import { findTestCase, locateTestCase, parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { fixtureReport, fixtureRun } from "./fixtures.js";

const CART = "tests/test_cart.py";

describe("pytest's report when a test file fails to import (fixtures/pytest/report.xml)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("pytest"));
  });

  it("is recognised as pytest's", () => {
    expect(report.flavour).toBe("pytest");
  });

  it("has no failures at all although the run was red: pytest stopped at collection", async () => {
    expect(report.tests).toEqual([]);
    expect((await fixtureRun("pytest")).exitCode).toBe(2);
  });

  it("lists both files that did not import or compile, with the reason", () => {
    expect(report.loadErrors).toEqual([
      {
        file: "tests/test_broken.py",
        message: "ModuleNotFoundError: No module named 'cart.refunds'",
        missing: { language: "python", module: "cart.refunds" },
      },
      { file: "tests/test_syntax.py", message: "SyntaxError: expected ':'" },
    ]);
  });

  it("reports a test of a file that did not import as failed-error", () => {
    expect(findTestCase(report, { file: "tests/test_broken.py", title: "test_refunds_a_returned_item" })?.outcome).toBe(
      "failed-error",
    );
  });

  it("leaves the tests that never ran missing, never passed", () => {
    expect(locateTestCase(report, { file: CART, title: "test_totals_the_prices_of_its_items" }).status).toBe("missing");
  });
});

describe("pytest's report with --continue-on-collection-errors", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("pytest", "report-continue-on-collection-errors.xml"));
  });

  it("finds a module-level test function by its name in its file", () => {
    expect(findTestCase(report, { file: CART, title: "test_loads_the_cart_module" })?.outcome).toBe("passed");
  });

  it("finds a test in a class by its name, by Class::name and by its whole node id", () => {
    for (const title of [
      "test_totals_the_prices_of_its_items",
      "TestCart::test_totals_the_prices_of_its_items",
      `${CART}::TestCart::test_totals_the_prices_of_its_items`,
    ]) {
      expect(findTestCase(report, { file: CART, title })?.outcome, title).toBe("passed");
    }
  });

  it("finds the test when the repository keeps the Python project in a subfolder", () => {
    expect(findTestCase(report, { file: `backend/${CART}`, title: "test_loads_the_cart_module" })?.outcome).toBe(
      "passed",
    );
    expect(
      findTestCase(report, { file: `backend/${CART}`, title: `${CART}::test_loads_the_cart_module` })?.outcome,
    ).toBe("passed");
  });

  it("reads a failed assert as an assertion failure", () => {
    expect(findTestCase(report, { file: CART, title: "test_applies_a_ten_percent_discount" })).toMatchObject({
      outcome: "failed-assertion",
      type: "AssertionError",
      message: "AssertionError: assert 100 == 90",
    });
  });

  it("reads a TypeError as an error, not an assertion", () => {
    expect(findTestCase(report, { file: CART, title: "test_lists_the_item_names_of_a_missing_cart" })).toMatchObject({
      outcome: "failed-error",
      type: "TypeError",
    });
  });

  it("reads a skipped test as skipped, with its reason", () => {
    expect(findTestCase(report, { file: CART, title: "test_ships_abroad" })).toMatchObject({
      outcome: "skipped",
      message: "not built yet",
    });
  });

  it("reads a test whose fixture raised as failed-error", () => {
    expect(
      findTestCase(report, { file: "tests/test_stock.py", title: "test_files_stock_at_a_location" }),
    ).toMatchObject({
      outcome: "failed-error",
      message: expect.stringContaining("ConnectionRefusedError"),
    });
  });

  it("still lists the files that did not import", () => {
    expect(report.loadErrors.map((e) => e.file)).toEqual(["tests/test_broken.py", "tests/test_syntax.py"]);
  });

  it("does not find a test of one module under another", () => {
    expect(findTestCase(report, { file: "tests/test_other.py", title: "test_loads_the_cart_module" })).toBeUndefined();
  });
});
