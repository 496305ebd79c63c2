import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  combineReports,
  findTestCase,
  parseJUnit,
  readJUnitReports,
  type JUnitReport,
} from "../../../src/cycle/junit/index.js";
import { FIXTURES, fixtureReport, fixtureRun } from "./fixtures.js";

const CART = "src/test/java/shop/CartTest.java";

describe("Maven Surefire's reports, one per test class (fixtures/surefire/reports)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    const files = (await readdir(join(FIXTURES, "surefire", "reports"))).filter((f) => f.endsWith(".xml"));
    report = combineReports(
      await Promise.all(files.map(async (f) => parseJUnit(await fixtureReport("surefire", join("reports", f))))),
    );
  });

  it("is recognised as Surefire's", () => {
    expect(report.flavour).toBe("surefire");
  });

  it("came from a red run", async () => {
    expect((await fixtureRun("surefire", "reports/")).exitCode).not.toBe(0);
  });

  it("finds a test by its source file and method name", () => {
    expect(findTestCase(report, { file: CART, title: "totalsThePricesOfItsItems" })?.outcome).toBe("passed");
  });

  it("finds it by Class.method, Class#method and method() too", () => {
    for (const title of [
      "CartTest.totalsThePricesOfItsItems",
      "CartTest#totalsThePricesOfItsItems",
      "totalsThePricesOfItsItems()",
    ]) {
      expect(findTestCase(report, { file: CART, title })?.outcome, title).toBe("passed");
    }
  });

  it("reads a failed assertEquals as an assertion failure", () => {
    expect(findTestCase(report, { file: CART, title: "appliesATenPercentDiscount" })).toMatchObject({
      outcome: "failed-assertion",
      type: "java.lang.AssertionError",
      message: "expected:<90> but was:<100>",
    });
  });

  it("reads a NullPointerException as an error, not an assertion", () => {
    expect(findTestCase(report, { file: CART, title: "listsTheItemNamesOfAMissingCart" })).toMatchObject({
      outcome: "failed-error",
      type: "java.lang.NullPointerException",
    });
  });

  it("reads @Ignore as skipped, with its reason", () => {
    expect(findTestCase(report, { file: CART, title: "shipsAbroad" })).toMatchObject({
      outcome: "skipped",
      message: "not built yet",
    });
  });

  it("lists a class whose static initialiser throws as a load error, and its test as failed-error", () => {
    expect(report.loadErrors).toContainEqual({
      classname: "shop.RefundTest",
      message: "java.lang.ExceptionInInitializerError",
    });
    expect(
      findTestCase(report, { file: "src/test/java/shop/RefundTest.java", title: "refundsAReturnedItem" }),
    ).toMatchObject({
      outcome: "failed-error",
      type: "java.lang.ExceptionInInitializerError",
    });
  });

  it("lists a class whose @BeforeClass threw as a load error, and reports its test as failed-error", () => {
    expect(report.loadErrors).toContainEqual({
      classname: "shop.StockTest",
      message: "java.lang.IllegalStateException: connect ECONNREFUSED 127.0.0.1:5432",
    });
    expect(report.tests.some((t) => t.name === "shop.StockTest")).toBe(false);
    expect(
      findTestCase(report, { file: "src/test/java/shop/StockTest.java", title: "filesStockAtALocation" })?.outcome,
    ).toBe("failed-error");
  });

  it("does not find a method under another class", () => {
    expect(
      findTestCase(report, { file: "src/test/java/shop/OrderTest.java", title: "totalsThePricesOfItsItems" }),
    ).toBeUndefined();
  });

  it("does not find a method under a class of the same name in another package", () => {
    expect(
      findTestCase(report, { file: "src/test/java/billing/CartTest.java", title: "totalsThePricesOfItsItems" }),
    ).toBeUndefined();
  });
});

describe("Maven with a test class that does not compile", () => {
  it("fails the build before Surefire runs, leaving no report at all", async () => {
    const run = await fixtureRun("surefire", "(none: a test class that does not compile)");
    expect(run).toMatchObject({ written: false, exitCode: 1 });
  });
});

describe("Maven Surefire's reports of JUnit 5 tests (fixtures/surefire/reports-junit5)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    ({ report } = await readJUnitReports(join(FIXTURES, "surefire", "reports-junit5")));
  });

  it("is recognised as Surefire's", () => {
    expect(report.flavour).toBe("surefire");
  });

  it("reads JUnit 5's AssertionFailedError as an assertion failure", () => {
    expect(findTestCase(report, { file: CART, title: "appliesATenPercentDiscount" })).toMatchObject({
      outcome: "failed-assertion",
      type: "org.opentest4j.AssertionFailedError",
    });
  });

  it("reads a NullPointerException as an error, not an assertion", () => {
    expect(findTestCase(report, { file: CART, title: "listsTheItemNamesOfAMissingCart" })?.outcome).toBe(
      "failed-error",
    );
  });

  it("reads @Disabled as skipped", () => {
    expect(findTestCase(report, { file: CART, title: "shipsAbroad" })).toMatchObject({
      outcome: "skipped",
      message: "not built yet",
    });
  });

  it("finds a test of a @Nested class in its outer class's file", () => {
    for (const title of ["paysByCard", "Checkout.paysByCard", "CartTest.Checkout.paysByCard"]) {
      expect(findTestCase(report, { file: CART, title })?.outcome, title).toBe("passed");
    }
  });

  it("lists a class whose static initialiser throws as a load error", () => {
    expect(report.loadErrors).toEqual([
      { classname: "shop.RefundTest", message: "java.lang.ExceptionInInitializerError" },
    ]);
  });
});
