import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  JUnitError,
  JUnitReportSchema,
  combineReports,
  detectFlavour,
  findTestCase,
  locateTestCase,
  parseJUnit,
  type Flavour,
} from "../../../src/cycle/junit/index.js";
import { FIXTURES, fixtureReport } from "./fixtures.js";

const REPORTS: Array<[string, string, Flavour]> = [
  ["vitest", "report.xml", "vitest"],
  ["jest", "report.xml", "jest"],
  ["jest", "report-with-file-and-suite-errors.xml", "jest"],
  ["jest", "report-custom-suite-name.xml", "jest"],
  ["mocha", "report.xml", "mocha"],
  ["mocha", "report-include-pending.xml", "mocha"],
  ["node", "report.xml", "node"],
  ["pytest", "report.xml", "pytest"],
  ["pytest", "report-continue-on-collection-errors.xml", "pytest"],
  ["go", "report.xml", "go"],
  ["surefire", "reports/TEST-shop.CartTest.xml", "surefire"],
  ["surefire", "reports/TEST-shop.RefundTest.xml", "surefire"],
];

describe("telling the runners apart", () => {
  it.each(REPORTS)("recognises %s's %s", async (runner, report, flavour) => {
    expect(detectFlavour(await fixtureReport(runner, report))).toBe(flavour);
  });

  it.each(REPORTS)("reads %s's %s into the published report schema", async (runner, report) => {
    const xml = await fixtureReport(runner, report);
    expect(JUnitReportSchema.safeParse(parseJUnit(xml)).success).toBe(true);
  });
});

describe("reports that cannot be read", () => {
  it("refuses a report cut short while it was written, naming where", async () => {
    const xml = await fixtureReport("vitest");
    const cut = xml.slice(0, Math.floor(xml.length / 2));
    expect(() => parseJUnit(cut)).toThrow(JUnitError);
    expect(() => parseJUnit(cut)).toThrow(/not well-formed XML at line \d+/);
  });

  it("refuses an empty report", () => {
    expect(() => parseJUnit("")).toThrow(
      expect.objectContaining({ code: "malformed-xml", message: expect.stringMatching(/empty/) }),
    );
  });

  it("refuses XML that is not JUnit, naming its root", async () => {
    const pom = await readFile(join(FIXTURES, "surefire", "project", "pom.xml"), "utf8");
    expect(() => parseJUnit(pom)).toThrow(
      expect.objectContaining({ code: "not-junit", message: expect.stringContaining("<project>") }),
    );
  });

  it("refuses a flavour it does not know", async () => {
    const xml = await fixtureReport("vitest");
    expect(() => parseJUnit(xml, { flavour: "karma" as Flavour })).toThrow(
      expect.objectContaining({ code: "bad-option" }),
    );
  });
});

describe("a report from a runner it does not recognise", () => {
  it("still reads a failure's type: an AssertionError is an assertion, a TypeError an error", async () => {
    const report = parseJUnit(await fixtureReport("vitest"), { flavour: "unknown" });
    const outcome = (name: string) => report.tests.find((t) => t.name === name)?.outcome;
    expect(outcome("cart > applies a ten percent discount")).toBe("failed-assertion");
    expect(outcome("cart > lists the item names of a missing cart")).toBe("failed-error");
  });

  it("never calls a failure an assertion when nothing in the report says so", async () => {
    // node types every failure testCodeFailure; without node's rules that proves nothing.
    const report = parseJUnit(await fixtureReport("node"), { flavour: "unknown" });
    expect(report.tests.filter((t) => t.outcome === "failed-assertion")).toEqual([]);
    expect(report.tests.filter((t) => t.outcome === "failed-error").map((t) => t.name)).toEqual([
      "applies a ten percent discount",
      "lists the item names of a missing cart",
      "files stock at a location",
    ]);
  });
});

describe("finding a test-list entry", () => {
  it("calls a title ambiguous when two tests could be it, and finds neither", async () => {
    // node 20 writes no file: two files with the same test title cannot be told apart.
    const node = parseJUnit(await fixtureReport("node"));
    const twoFiles = combineReports([node, node]);
    expect(locateTestCase(twoFiles, { file: "test/cart.test.js", title: "loads the cart module" }).status).toBe(
      "ambiguous",
    );
    expect(findTestCase(twoFiles, { file: "test/cart.test.js", title: "loads the cart module" })).toBeUndefined();
  });

  it("prefers the test the report places in the file over one whose file it does not say", async () => {
    const vitest = parseJUnit(await fixtureReport("vitest"));
    const node = parseJUnit(await fixtureReport("node"));
    const mixed = combineReports([vitest, node]);
    expect(findTestCase(mixed, { file: "test/cart.test.js", title: "loads the cart module" })?.classname).toBe(
      "test/cart.test.js",
    );
  });

  it("works on the tests and load errors alone, without the flavour", async () => {
    const { tests, loadErrors } = parseJUnit(await fixtureReport("vitest"));
    expect(
      findTestCase({ tests, loadErrors }, { file: "test/cart.test.js", title: "cart > applies a ten percent discount" })
        ?.outcome,
    ).toBe("failed-assertion");
  });

  it("matches a path written absolute, with ./ or with backslashes", async () => {
    const report = parseJUnit(await fixtureReport("vitest"));
    for (const file of ["./test/cart.test.js", "test\\cart.test.js", "/home/ci/repo/test/cart.test.js"]) {
      expect(findTestCase(report, { file, title: "loads the cart module" })?.outcome, file).toBe("passed");
    }
  });

  it("does not match a file whose name merely ends the same way", async () => {
    const report = parseJUnit(await fixtureReport("vitest"));
    expect(findTestCase(report, { file: "test/mycart.test.js", title: "loads the cart module" })).toBeUndefined();
  });

  it("refuses an empty title", async () => {
    const report = parseJUnit(await fixtureReport("vitest"));
    expect(() => findTestCase(report, { file: "test/cart.test.js", title: " " })).toThrow(/title is empty/);
  });
});

describe("the time of a report", () => {
  it("is the latest suite's: jest-junit stamps a suite that failed to run 1970", async () => {
    const report = parseJUnit(await fixtureReport("jest", "report-with-file-and-suite-errors.xml"));
    expect(report.timestamp?.startsWith("1970")).toBe(false);
    expect(Date.parse(report.timestamp ?? "")).toBeGreaterThan(Date.parse("2020-01-01"));
  });
});
