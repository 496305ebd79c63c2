import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { locateTestCase, parseJUnit, readJUnitReports, type JUnitReport } from "../../../src/cycle/junit/index.js";
import { CycleRequest, type CycleStep } from "../../../src/contracts/cycle-request.js";
import { decideVerdict } from "../../../src/cycle/verdict.js";
import { FIXTURES, fixtureReport, fixtureRun } from "./fixtures.js";

/**
 * Runner settings teams use that change the report's shape, each on a report the real runner wrote
 * in that configuration (generate-fixtures.sh variants), except Surefire's display names, recorded
 * from Surefire 3's documented shape (see that fixture's header). Each is read as the runner meant
 * it, and a cycle over it is verified or refused with a reason a person can act on.
 */

const judge = async (
  runner: string,
  reportName: string,
  step: CycleStep,
  file: string,
  title: string,
  as: (report: JUnitReport) => JUnitReport = (report) => report,
) => {
  const report = as(parseJUnit(await fixtureReport(runner, reportName)));
  const run = await fixtureRun(runner, reportName);
  return decideVerdict({
    request: CycleRequest.parse({
      track: "f1",
      step,
      commit: "c".repeat(40),
      tests: { inTurn: [{ id: "T1", file, title }], earlierGreen: [] },
      database: { branch: "f1" },
    }),
    report,
    testExitCode: run.exitCode,
    frozenFiles: [],
  });
};

const JEST_CART = "test/cart.test.cjs";

describe("jest-junit with noStackTrace (fixtures/jest/report-no-stack-trace.xml)", () => {
  it("reads a failed expect() written without its 'Error:' prefix as an assertion failure, and verifies the RED", async () => {
    const report = parseJUnit(await fixtureReport("jest", "report-no-stack-trace.xml"));
    expect(report.flavour).toBe("jest");
    expect(locateTestCase(report, { file: JEST_CART, title: "cart applies a ten percent discount" })).toMatchObject({
      status: "found",
      test: { outcome: "failed-assertion", message: "expect(received).toBe(expected) // Object.is equality" },
    });
    const v = await judge(
      "jest",
      "report-no-stack-trace.xml",
      "red",
      JEST_CART,
      "cart > applies a ten percent discount",
    );
    expect(v).toMatchObject({ verdict: "verified", reasons: [] });
  });

  it("refuses a RED on an error it cannot name, and says to turn noStackTrace off", async () => {
    const v = await judge(
      "jest",
      "report-no-stack-trace.xml",
      "red",
      JEST_CART,
      "cart lists the item names of a missing cart",
    );
    expect(v.reasons).toEqual([
      `T1 "cart lists the item names of a missing cart" (${JEST_CART}) fails with an error (Cannot read properties of undefined (reading 'items')), not by an assertion: ` +
        "a RED test must compile, load and reach an assertion that fails; a TypeError, a missing import or a crash proves nothing about the behaviour " +
        "(likely a setting: jest-junit wrote this failure without its stack trace, so the kind of error cannot be told (an error counts as failed-error): " +
        "turn jest-junit's noStackTrace off (JEST_JUNIT_NO_STACK_TRACE=false, or noStackTrace: false in its reporter options))",
    ]);
  });
});

describe("jest-junit's title templates", () => {
  it("finds nested tests by their describe path when titleTemplate is {title} and classNameTemplate {classname} (report-title-template.xml)", async () => {
    const report = parseJUnit(await fixtureReport("jest", "report-title-template.xml"));
    for (const title of ["cart > totals the prices of its items", "cart totals the prices of its items"])
      expect(locateTestCase(report, { file: JEST_CART, title })).toMatchObject({
        status: "found",
        test: { name: "totals the prices of its items", classname: "cart", outcome: "passed" },
      });
    expect(locateTestCase(report, { file: JEST_CART, title: "cart > shipping > ships abroad" })).toMatchObject({
      status: "found",
      test: { outcome: "skipped" },
    });
    const v = await judge(
      "jest",
      "report-title-template.xml",
      "red",
      JEST_CART,
      "cart > applies a ten percent discount",
    );
    expect(v).toMatchObject({ verdict: "verified", reasons: [] });
  });

  it('finds nested tests when classNameTemplate is {classname}, titleTemplate {title} and ancestorSeparator " > " (report-title-template-separator.xml)', async () => {
    const report = parseJUnit(await fixtureReport("jest", "report-title-template-separator.xml"));
    expect(report.tests.find((t) => t.name === "ships abroad")?.classname).toBe("cart > shipping");
    for (const title of ["cart > shipping > ships abroad", "cart shipping ships abroad"])
      expect(locateTestCase(report, { file: JEST_CART, title }), title).toMatchObject({
        status: "found",
        test: { name: "ships abroad", classname: "cart > shipping", outcome: "skipped" },
      });
    const v = await judge(
      "jest",
      "report-title-template-separator.xml",
      "red",
      JEST_CART,
      "cart > applies a ten percent discount",
    );
    expect(v).toMatchObject({ verdict: "verified", reasons: [] });
  });

  it("finds them when only titleTemplate is {title}, the classname keeping blocks and title (report-title-only.xml)", async () => {
    const report = parseJUnit(await fixtureReport("jest", "report-title-only.xml"));
    expect(locateTestCase(report, { file: JEST_CART, title: "cart shipping ships abroad" })).toMatchObject({
      status: "found",
      test: { name: "ships abroad", outcome: "skipped" },
    });
    const v = await judge("jest", "report-title-only.xml", "green", JEST_CART, "cart > totals the prices of its items");
    expect(v.reasons).toEqual([
      'the test command exited 1; failing: "applies a ten percent discount" (test/cart.test.cjs), "lists the item names of a missing cart" (test/cart.test.cjs), "files stock at a location" (test/stock.test.cjs)',
    ]);
  });
});

describe("mocha's built-in xunit reporter (fixtures/mocha/report-xunit.xml)", () => {
  const CART = "test/cart.test.js";

  it("is recognised as mocha's, and a failure with no type is told apart by its stack's header", async () => {
    const report = parseJUnit(await fixtureReport("mocha", "report-xunit.xml"));
    expect(report.flavour).toBe("mocha");
    expect(locateTestCase(report, { file: CART, title: "cart > applies a ten percent discount" })).toMatchObject({
      status: "found",
      test: { outcome: "failed-assertion", type: "AssertionError", message: "Expected values to be strictly equal:" },
    });
    expect(locateTestCase(report, { file: CART, title: "cart lists the item names of a missing cart" })).toMatchObject({
      status: "found",
      test: { outcome: "failed-error", type: "TypeError" },
    });
  });

  it("verifies a RED by an assertion and refuses one by a TypeError", async () => {
    expect(await judge("mocha", "report-xunit.xml", "red", CART, "cart applies a ten percent discount")).toMatchObject({
      verdict: "verified",
      reasons: [],
    });
    const v = await judge("mocha", "report-xunit.xml", "red", CART, "cart > lists the item names of a missing cart");
    expect(v.reasons).toEqual([
      `T1 "cart > lists the item names of a missing cart" (${CART}) fails with TypeError (Cannot read properties of undefined (reading 'items')), not by an assertion: ` +
        "a RED test must compile, load and reach an assertion that fails; a TypeError, a missing import or a crash proves nothing about the behaviour",
    ]);
  });

  it("names the hook that kept a test from running as the nearest title the report has", async () => {
    const v = await judge(
      "mocha",
      "report-xunit.xml",
      "red",
      "test/stock.test.js",
      "stock > files stock at a location",
    );
    expect(v.reasons).toEqual([
      `T1 "stock > files stock at a location" (test/stock.test.js) is not in the test report (the report has no test of that title; nearest: ""before all" hook for "files stock at a location""): ` +
        "check the file and the exact title in the test list, and that the file loads",
    ]);
  });
});

describe("node's test runner on Node 20, quotes escaped twice (fixtures/node/report-quotes.xml)", () => {
  const FILE = "test/greeting.test.js";

  // Node 20 writes no test's file, so no entry finds its tests (a test counts only in its own
  // file): the titles are read as a Node that writes each test's file would report them.
  const placed = (report: JUnitReport): JUnitReport => ({
    ...report,
    tests: report.tests.map((test) => ({ ...test, file: FILE })),
  });

  it("finds no test of a report that names no file, and says the setting", async () => {
    const report = parseJUnit(await fixtureReport("node", "report-quotes.xml"));
    expect(locateTestCase(report, { file: FILE, title: 'says "hello" to Ann & Bob' })).toMatchObject({
      status: "missing",
      hint: expect.stringMatching(/^this Node's junit reporter writes no file for a test/),
    });
  });

  it("finds a title with quotes as the test list writes it and as the runner wrote it", async () => {
    const report = placed(parseJUnit(await fixtureReport("node", "report-quotes.xml")));
    expect(report.flavour).toBe("node");
    for (const title of [
      'says "hello" to Ann & Bob',
      'greeting "friends" > says "hello" to Ann & Bob',
      "says &quot;hello&quot; to Ann & Bob",
    ])
      expect(locateTestCase(report, { file: FILE, title })).toMatchObject({
        status: "found",
        test: { outcome: "passed" },
      });
  });

  it("verifies a RED whose title has quotes and angle brackets", async () => {
    expect(await judge("node", "report-quotes.xml", "red", FILE, "says <dear> to the 'boss'", placed)).toMatchObject({
      verdict: "verified",
      reasons: [],
    });
  });
});

describe("pytest's non-ASCII parameter ids and teardown errors (fixtures/pytest/report-variants.xml)", () => {
  const FILE = "tests/test_sizes.py";
  let report: JUnitReport;

  it("finds a parameter id that is not ASCII as the test list writes it and as pytest escaped it", async () => {
    report = parseJUnit(await fixtureReport("pytest", "report-variants.xml"));
    expect(report.tests.map((t) => t.name)).toContain("test_labels_a_size[Gr\\xf6\\xdfe]");
    for (const title of ["test_labels_a_size[Größe]", "test_labels_a_size[Gr\\xf6\\xdfe]"])
      expect(locateTestCase(report, { file: FILE, title })).toMatchObject({
        status: "found",
        test: { name: "test_labels_a_size[Gr\\xf6\\xdfe]", outcome: "passed" },
      });
  });

  it("reads a failed test and its teardown error, two cases of one name, as one test that ended in an error", async () => {
    report = parseJUnit(await fixtureReport("pytest", "report-variants.xml"));
    expect(report.tests.filter((t) => t.name === "test_counts_the_shop_shelves")).toEqual([
      expect.objectContaining({
        outcome: "failed-error",
        type: "teardown error",
        message:
          'failed on teardown with "RuntimeError: the shop fixture failed to close"; the test itself ended failed-assertion (assert 0 == 3)',
      }),
    ]);
    const v = await judge("pytest", "report-variants.xml", "red", FILE, "test_counts_the_shop_shelves");
    expect(v.reasons).toEqual([
      `T1 "test_counts_the_shop_shelves" (${FILE}) fails with teardown error (failed on teardown with "RuntimeError: the shop fixture failed to close"; the test itself ended failed-assertion (assert 0 == 3)), not by an assertion: ` +
        "a RED test must compile, load and reach an assertion that fails; a TypeError, a missing import or a crash proves nothing about the behaviour",
    ]);
  });

  it("refuses a GREEN whose test passed but whose fixture's teardown raised", async () => {
    const v = await judge("pytest", "report-variants.xml", "green", FILE, "test_opens_the_shop");
    expect(v.reasons[0]).toBe(
      `T1 "test_opens_the_shop" (${FILE}) (in turn) fails with an error: failed on teardown with "RuntimeError: the shop fixture failed to close"`,
    );
  });
});

describe("Surefire and JUnit 5 display names", () => {
  const FILE = "src/test/java/shop/CartTest.java";

  it("on Surefire 2.22's report (method names), a display name is missing with the method named instead and the setting to change", async () => {
    const { report } = await readJUnitReports(join(FIXTURES, "surefire", "reports-junit5"));
    expect(locateTestCase(report, { file: FILE, title: "applies a ten percent discount" })).toEqual({
      status: "missing",
      nearest: ["appliesATenPercentDiscount"],
      hint:
        "Surefire writes the test method's name, not its @DisplayName: write the method name in the test list, " +
        "or make Surefire write display names (statelessTestsetReporter with usePhrasedTestCaseMethodName set to true, Surefire 3)",
    });
  });

  it("on Surefire 3's report with display names (recorded), finds tests by display name, by method and in a nested class", async () => {
    const { report } = await readJUnitReports(join(FIXTURES, "surefire", "reports-junit5-phrased"));
    expect(report.flavour).toBe("surefire");
    expect(locateTestCase(report, { file: FILE, title: "applies a ten percent discount" })).toMatchObject({
      status: "found",
      test: { outcome: "failed-assertion", type: "org.opentest4j.AssertionFailedError" },
    });
    expect(locateTestCase(report, { file: FILE, title: "totalsThePricesOfItsItems" })).toMatchObject({
      status: "found",
      test: { outcome: "passed" },
    });
    expect(locateTestCase(report, { file: FILE, title: "Checkout.paysByCard" })).toMatchObject({
      status: "found",
      test: { name: "paysByCard()", classname: "Checkout" },
    });
    expect(locateTestCase(report, { file: FILE, title: "appliesATenPercentDiscount" })).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discount"],
      hint: "this Surefire report carries display names (usePhrasedTestCaseMethodName): write the test's @DisplayName in the test list",
    });
  });

  it("on Surefire 3's report with display names, finds a nested class's test as Outer#method and Inner#method", async () => {
    const { report } = await readJUnitReports(join(FIXTURES, "surefire", "reports-junit5-phrased"));
    for (const title of [
      "CartTest#paysByCard",
      "CartTest.paysByCard",
      "Checkout#paysByCard",
      "CartTest.Checkout.paysByCard",
    ])
      expect(locateTestCase(report, { file: FILE, title }), title).toMatchObject({
        status: "found",
        test: { name: "paysByCard()", classname: "Checkout", reportClass: "shop.CartTest" },
      });
  });

  it("on a report that carries display names, never says Surefire writes method names", async () => {
    const { report } = await readJUnitReports(join(FIXTURES, "surefire", "reports-junit5-phrased"));
    const location = locateTestCase(report, { file: FILE, title: "applies a ten percent discounts" });
    expect(location).toEqual({ status: "missing", nearest: ["applies a ten percent discount"] });
  });
});
