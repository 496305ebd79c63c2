import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { JUnitError, findTestCase, parseJUnit } from "../../../src/cycle/junit/index.js";
import { fixtureReport } from "./fixtures.js";

const REPORTS: Array<[string, string]> = [
  ["vitest", "report.xml"],
  ["jest", "report-with-file-and-suite-errors.xml"],
  ["mocha", "report.xml"],
  ["node", "report.xml"],
  ["pytest", "report-continue-on-collection-errors.xml"],
  ["go", "report.xml"],
  ["surefire", "reports/TEST-shop.CartTest.xml"],
];

/** parseJUnit either reads a report or refuses it with a JUnitError: it never fails another way. */
function readsOrRefuses(xml: string): boolean {
  try {
    parseJUnit(xml);
    return true;
  } catch (error) {
    return error instanceof JUnitError;
  }
}

describe("reports damaged on the way (a run killed while writing, a disk that filled)", () => {
  const xmls = new Map<string, string>();
  beforeAll(async () => {
    for (const [runner, report] of REPORTS) xmls.set(runner, await fixtureReport(runner, report));
  });

  it.each(REPORTS)("refuses %s's report cut short anywhere with a JUnitError, or reads it", (runner) => {
    const xml = xmls.get(runner) ?? "";
    fc.assert(
      fc.property(fc.nat({ max: xml.length - 1 }), (cut) => readsOrRefuses(xml.slice(0, cut))),
      { numRuns: 30 },
    );
  });

  it.each(REPORTS)("refuses %s's report with a character overwritten with a JUnitError, or reads it", (runner) => {
    const xml = xmls.get(runner) ?? "";
    fc.assert(
      fc.property(fc.nat({ max: xml.length - 1 }), fc.constantFrom("<", ">", "&", '"', "\u0000", "x"), (at, char) =>
        readsOrRefuses(xml.slice(0, at) + char + xml.slice(at + 1)),
      ),
      { numRuns: 30 },
    );
  });
});

describe("a test the runner did not report", () => {
  it("is never found, whichever test of the vitest report is taken out", async () => {
    const xml = await fixtureReport("vitest");
    const cases = [...xml.matchAll(/<testcase\b[^>]*?(?:\/>|>[\s\S]*?<\/testcase>)/g)].map((m) => m[0]);
    const tests = parseJUnit(xml).tests;
    expect(tests.length).toBeGreaterThan(0);
    for (const test of tests) {
      const element = cases.find(
        (c) => c.includes(`name="${test.name.replace(/>/g, "&gt;")}"`) && c.includes(`classname="${test.classname}"`),
      );
      expect(element, test.name).toBeDefined();
      const without = parseJUnit(xml.replace(element ?? "", ""));
      expect(findTestCase(without, { file: test.file ?? "", title: test.name }), test.name).toBeUndefined();
    }
  });
});
