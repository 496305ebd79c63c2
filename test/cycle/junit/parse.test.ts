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

  it.each(REPORTS)("reads %s's %s into the published report schema, every field kept", async (runner, report) => {
    const parsed = parseJUnit(await fixtureReport(runner, report));
    // The schema strips what it does not name: a field the parser writes and the schema lost would vanish.
    expect(JUnitReportSchema.parse(parsed)).toStrictEqual(parsed);
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
  it("calls a title ambiguous when two tests of the file could be it, and finds neither", async () => {
    const vitest = parseJUnit(await fixtureReport("vitest"));
    const twice = combineReports([vitest, vitest]);
    expect(locateTestCase(twice, { file: "test/cart.test.js", title: "loads the cart module" }).status).toBe(
      "ambiguous",
    );
    expect(findTestCase(twice, { file: "test/cart.test.js", title: "loads the cart module" })).toBeUndefined();
  });

  it("finds no test whose file the report does not say (node 20 writes none): it may be another file's", async () => {
    const node = parseJUnit(await fixtureReport("node"));
    expect(locateTestCase(node, { file: "test/cart.test.js", title: "loads the cart module" })).toMatchObject({
      status: "missing",
      reason: expect.stringContaining("does not say which file it ran from"),
    });
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

describe("the options", () => {
  it("are refused with what is wrong with them: a flavour it does not know, or an option it has none of", async () => {
    const { parseJUnitStream } = await import("../../../src/cycle/junit/parse.js");
    const wrong = [{ flavour: "karma" }, { runner: "x" }] as unknown as Array<{ flavour?: Flavour }>;
    const messages = [
      'parseJUnit options: flavour: Invalid option: expected one of "vitest"|"jest"|"mocha"|"node"|"pytest"|"go"|"surefire"|"unknown"',
      'parseJUnit options: Unrecognized key: "runner"',
    ];
    wrong.forEach((options, i) => {
      expect(() => parseJUnit("<testsuites/>", options)).toThrow(
        expect.objectContaining({ name: "JUnitError", code: "bad-option", message: messages[i] }),
      );
    });
    await expect(parseJUnitStream(chunksOf("<testsuites/>", 5), wrong[0])).rejects.toMatchObject({
      code: "bad-option",
      message: messages[0],
    });
  });
});

async function* chunksOf(text: string, size: number): AsyncIterable<string> {
  for (let at = 0; at < text.length; at += size) yield text.slice(at, at + size);
}

describe("a report read as a stream of chunks", () => {
  it("reads the same as the report read whole, whatever the chunks' size", async () => {
    const { parseJUnitStream } = await import("../../../src/cycle/junit/parse.js");
    for (const [runner, report] of REPORTS) {
      const xml = await fixtureReport(runner, report);
      for (const size of [7, 1_999, 2_000, 2_001, 1 << 20])
        expect(await parseJUnitStream(chunksOf(xml, size)), `${runner} ${report} by ${size}`).toStrictEqual(
          parseJUnit(xml),
        );
    }
  });

  it("finds the runner's mark in the head of a big report and node's counters in its very end", async () => {
    const { parseJUnitStream } = await import("../../../src/cycle/junit/parse.js");
    const { MARKS_HEAD, MARKS_TAIL } = await import("../../../src/cycle/junit/flavour.js");
    const filler = (n: number) => `<testcase name="${"x".repeat(n)}"/>`;
    const pytest = `<testsuites><testsuite name="pytest">${filler(MARKS_HEAD)}</testsuite></testsuites>`;
    const node = `<testsuites>${filler(MARKS_HEAD)}<testcase name="t"/>\n<!-- duration_ms 1.5 -->\n${"\n".repeat(MARKS_TAIL - 40)}</testsuites>`;
    const middle = `<testsuites>${filler(MARKS_HEAD)}<testsuite name="pytest"/>${filler(MARKS_TAIL)}</testsuites>`;
    for (const size of [1_000, MARKS_TAIL, 64 * 1024]) {
      expect((await parseJUnitStream(chunksOf(pytest, size))).flavour, `pytest by ${size}`).toBe("pytest");
      expect((await parseJUnitStream(chunksOf(node, size))).flavour, `node by ${size}`).toBe("node");
      expect((await parseJUnitStream(chunksOf(middle, size))).flavour, `middle by ${size}`).toBe("unknown");
    }
    expect((await parseJUnitStream(chunksOf(middle, 1_000), { flavour: "pytest" })).flavour).toBe("pytest");
  });
});

describe("combining the reports of one run", () => {
  const one = (flavour: Flavour, name: string, timestamp?: string) => ({
    flavour,
    tests: [{ name, outcome: "passed" as const }],
    loadErrors: [{ message: `${name} broke` }],
    ...(timestamp ? { timestamp } : {}),
  });

  it("keeps their tests and load errors in order, their shared flavour and their latest time", () => {
    expect(
      combineReports([
        one("surefire", "a", "2026-11-30T06:36:42"),
        one("surefire", "b", "2026-11-30T06:37:42"),
        one("surefire", "c"),
      ]),
    ).toStrictEqual({
      flavour: "surefire",
      tests: [
        { name: "a", outcome: "passed" },
        { name: "b", outcome: "passed" },
        { name: "c", outcome: "passed" },
      ],
      loadErrors: [{ message: "a broke" }, { message: "b broke" }, { message: "c broke" }],
      timestamp: "2026-11-30T06:37:42",
    });
  });

  it("is 'unknown' when the reports' runners differ, or there are none; and has no time when none has one", () => {
    expect(combineReports([one("jest", "a"), one("vitest", "b")])).toMatchObject({ flavour: "unknown" });
    expect(combineReports([])).toStrictEqual({ flavour: "unknown", tests: [], loadErrors: [] });
    expect("timestamp" in combineReports([one("jest", "a")])).toBe(false);
  });
});

describe("the time of a report, among its stamps", () => {
  const stamped = (root: string, ...suites: string[]) =>
    `<testsuites${root}>${suites.map((s, i) => `<testsuite name="s${i}"${s}/>`).join("")}</testsuites>`;
  const time = (xml: string) => parseJUnit(xml).timestamp;

  it("is the latest a suite or the root carries, as written", () => {
    expect(time(stamped(' timestamp="2026-11-30T06:37:00Z"', ' timestamp="2026-11-30T06:36:00Z"'))).toBe(
      "2026-11-30T06:37:00Z",
    );
    expect(
      time(
        stamped(
          "",
          ' timestamp="2026-11-30T06:36:00Z"',
          ' timestamp="2026-11-30T06:38:00Z"',
          ' timestamp="2026-11-30T06:37:00Z"',
        ),
      ),
    ).toBe("2026-11-30T06:38:00Z");
  });

  it("keeps the first of stamps that name the same instant", () => {
    expect(time(stamped("", ' timestamp="2026-11-30T06:36:00Z"', ' timestamp="2026-11-30T06:36:00.000Z"'))).toBe(
      "2026-11-30T06:36:00Z",
    );
  });

  it("leaves out a stamp that is blank or not a time, and is none when no stamp is a time", () => {
    expect(
      time(stamped(' timestamp="  "', ' timestamp="soon"', ' timestamp="2026-11-30T06:36:00Z"', ' timestamp=""')),
    ).toBe("2026-11-30T06:36:00Z");
    expect("timestamp" in parseJUnit(stamped(' timestamp="soon"', ' timestamp=" "'))).toBe(false);
  });
});
