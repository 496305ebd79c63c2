import { beforeEach, describe, expect, it } from "vitest";
import { findTestCase, locateTestCase, parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { fixtureReport, fixtureRun } from "./fixtures.js";

const CART = "test/cart.test.js";

describe("mocha-junit-reporter's report (fixtures/mocha/report.xml)", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("mocha"));
  });

  it("is recognised as mocha's", () => {
    expect(report.flavour).toBe("mocha");
  });

  it("came from a red run", async () => {
    expect((await fixtureRun("mocha")).exitCode).not.toBe(0);
  });

  it("finds a test inside describe blocks by its full title, as the reporter names it", () => {
    expect(findTestCase(report, { file: CART, title: "cart totals the prices of its items" })?.outcome).toBe("passed");
  });

  it("finds the same test when the test list joins the describe blocks with >", () => {
    expect(findTestCase(report, { file: CART, title: "cart > totals the prices of its items" })?.outcome).toBe(
      "passed",
    );
  });

  it("places a test in its file although the reporter writes the file as an absolute path", () => {
    expect(findTestCase(report, { file: CART, title: "cart totals the prices of its items" })?.file).toMatch(
      /\/test\/cart\.test\.js$/,
    );
  });

  it("finds no root-level test, whose suite carries no file: it may be another file's, and the hint says what to change", () => {
    expect(locateTestCase(report, { file: CART, title: "loads the cart module" })).toMatchObject({
      status: "missing",
      hint: expect.stringMatching(/^mocha-junit-reporter writes no file for a test outside any describe block/),
    });
  });

  it("reads a failed assert as an assertion failure", () => {
    expect(findTestCase(report, { file: CART, title: "cart applies a ten percent discount" })).toMatchObject({
      outcome: "failed-assertion",
      type: "AssertionError",
    });
  });

  it("reads a TypeError as an error, not an assertion", () => {
    expect(findTestCase(report, { file: CART, title: "cart lists the item names of a missing cart" })).toMatchObject({
      outcome: "failed-error",
      type: "TypeError",
    });
  });

  it("reports a before hook that threw as a failed-error case, and the test it kept from running as missing", () => {
    const hook = report.tests.find((t) => t.name.includes('"before all" hook'));
    expect(hook).toMatchObject({ outcome: "failed-error", message: "connect ECONNREFUSED 127.0.0.1:5432" });
    expect(
      locateTestCase(report, { file: "test/stock.test.js", title: "stock files stock at a location" }).status,
    ).toBe("missing");
  });

  it("drops a skipped test by default, so it is missing, never passed", () => {
    expect(locateTestCase(report, { file: CART, title: "cart shipping ships abroad" }).status).toBe("missing");
  });
});

describe("mocha-junit-reporter's report with includePending", () => {
  it("keeps the skipped test, as skipped", async () => {
    const report = parseJUnit(await fixtureReport("mocha", "report-include-pending.xml"));
    expect(findTestCase(report, { file: CART, title: "cart shipping ships abroad" })?.outcome).toBe("skipped");
  });
});

describe("mocha with a file that fails to import", () => {
  it("aborts the whole run and writes no report at all, so the cycle must require one written by this run", async () => {
    const run = await fixtureRun("mocha", "report-with-broken-file.xml");
    expect(run).toMatchObject({ written: false, exitCode: 1 });
  });
});
