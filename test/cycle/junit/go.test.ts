import { beforeEach, describe, expect, it } from "vitest";
import { findTestCase, locateTestCase, parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { fixtureReport, fixtureRun } from "./fixtures.js";

const CART = "cart/cart_test.go";

describe("gotestsum's report of go test (fixtures/go/report.xml)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("go"));
  });

  it("is recognised as Go's", () => {
    expect(report.flavour).toBe("go");
  });

  it("came from a red run", async () => {
    expect((await fixtureRun("go")).exitCode).not.toBe(0);
  });

  it("finds a test by its package folder and name", () => {
    expect(findTestCase(report, { file: CART, title: "TestTotal" })?.outcome).toBe("passed");
  });

  it("finds a subtest by the name go gives it, and by its title with spaces", () => {
    expect(findTestCase(report, { file: CART, title: "TestCheckout/pays_by_card" })?.outcome).toBe("passed");
    expect(findTestCase(report, { file: CART, title: "TestCheckout/pays by card" })?.outcome).toBe("passed");
  });

  it("reads t.Errorf as an assertion failure, with the test's own message", () => {
    expect(findTestCase(report, { file: CART, title: "TestDiscount" })).toMatchObject({
      outcome: "failed-assertion",
      message: "cart_test.go:14: Total = 100, want 90",
    });
  });

  it("reads t.Fatal in a subtest as an assertion failure", () => {
    expect(findTestCase(report, { file: CART, title: "TestCheckout/rejects an empty cart" })?.outcome).toBe(
      "failed-assertion",
    );
  });

  it("reads a nil pointer panic as an error, not an assertion", () => {
    expect(findTestCase(report, { file: CART, title: "TestItemNamesOfAMissingCart" })).toMatchObject({
      outcome: "failed-error",
      type: "panic",
      message: expect.stringContaining("nil pointer dereference"),
    });
  });

  it("reads t.Skip as skipped, with its reason", () => {
    expect(findTestCase(report, { file: CART, title: "TestShipsAbroad" })).toMatchObject({
      outcome: "skipped",
      message: "cart_test.go:20: not built yet",
    });
  });

  it("notices the package that did not compile, which gotestsum only counts in <testsuites errors>", () => {
    expect(report.loadErrors).toHaveLength(1);
    expect(report.loadErrors[0]?.message).toMatch(/no test case carries/);
  });

  it("leaves the test of the package that did not compile missing, never passed", () => {
    expect(locateTestCase(report, { file: "refunds/refunds_test.go", title: "TestRefundsAReturnedItem" }).status).toBe(
      "missing",
    );
  });

  it("does not find a test under another package's folder", () => {
    expect(findTestCase(report, { file: "refunds/refunds_test.go", title: "TestTotal" })).toBeUndefined();
  });
});
