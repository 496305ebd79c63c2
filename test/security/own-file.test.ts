import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJUnit, readJUnitReports, type JUnitReport } from "../../src/cycle/junit/index.js";
import { CycleRequest, type CycleStep } from "../../src/contracts/cycle-request.js";
import { decideVerdict } from "../../src/cycle/verdict.js";
import { FIXTURES, fixtureReport, fixtureRun } from "../cycle/junit/fixtures.js";

/**
 * A test counts only in its own file. The test list's entry lives in one file; that file did not
 * run (or did not load), while another file (the driver's, not frozen) has a test of the same
 * title that fails for RED or passes for GREEN. Each report is a real runner's
 * (test/cycle/junit/generate-fixtures.sh own-file; Go and Surefire from the runs recorded there,
 * as neither can run here). Before this protection, a report that named no file for the copy let
 * it stand for the entry, and the cycle verified a test it never ran where the list says it lives.
 */

const RUN_NOTE = "it may be another file's, and";

function verdictOn(report: JUnitReport, step: CycleStep, exitCode: number, file: string, title: string) {
  return decideVerdict({
    request: CycleRequest.parse({
      track: "f1",
      step,
      commit: "c".repeat(40),
      tests: { inTurn: [{ id: "T1", file, title }], earlierGreen: [] },
      database: { branch: "f1" },
    }),
    report,
    testExitCode: exitCode,
    frozenFiles: [],
  });
}

async function judged(runner: string, report: string, step: CycleStep, file: string, title: string) {
  const { exitCode } = await fixtureRun(runner, report);
  return verdictOn(parseJUnit(await fixtureReport(runner, report)), step, exitCode, file, title);
}

const STEPS = ["red", "green"] as const;
const TITLE = "applies a ten percent discount";

describe("a report that names no file for the copy: refused, naming the file and the setting", () => {
  it.each(STEPS)("mocha-junit-reporter, the copy a top-level it.only (%s)", async (step) => {
    const file = "test/cart.test.js";
    const v = await judged("mocha", `report-own-file-${step}.xml`, step, file, TITLE);
    expect(v.verdict).toBe("refused");
    expect(v.reasons).toContainEqual(
      expect.stringContaining(
        `T1 "${TITLE}" (${file}) ${step === "green" ? "(in turn) " : ""}is not in the test report (the report has a test of that title but does not say which file it ran from, so none counts for ${file}: ${RUN_NOTE} ${file} may not have run)`,
      ),
    );
    expect(v.reasons.join("\n")).toContain(
      "(likely a setting: mocha-junit-reporter writes no file for a test outside any describe block: put the test in a describe block, or use mocha's own reporter (--reporter xunit), which writes every test's file)",
    );
  });

  it.each(STEPS)("node 20's junit reporter, the entry's file not run (%s)", async (step) => {
    const file = "test/cart.test.js";
    const v = await judged("node", `report-own-file-${step}.xml`, step, file, TITLE);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(`so none counts for ${file}`);
    expect(v.reasons.join("\n")).toContain(
      "(likely a setting: this Node's junit reporter writes no file for a test (Node 20's writes none): run the test command on a Node whose junit reporter writes each test case's file attribute)",
    );
  });

  it.each(STEPS)("jest-junit without addFileAttribute, the entry's file not loaded (%s)", async (step) => {
    const file = "test/cart.test.cjs";
    const v = await judged("jest", `report-own-file-${step}-no-file.xml`, step, file, TITLE);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(`so none counts for ${file}`);
    expect(v.reasons.join("\n")).toContain(
      "(likely a setting: jest-junit wrote no file for its tests: keep its addFileAttribute on (the cycle sets JEST_JUNIT_ADD_FILE_ATTRIBUTE=true",
    );
  });

  it.each(STEPS)("Surefire 3 with display names, read as one report (%s)", async (step) => {
    // The recorded report holds CartTest's tests only: RefundTest, the entry's class, did not run.
    const file = "src/test/java/shop/RefundTest.java";
    const xml = await fixtureReport("surefire", "reports-junit5-phrased/TEST-shop.CartTest.xml");
    const report = parseJUnit(xml);
    const title = step === "red" ? TITLE : "totalsThePricesOfItsItems()";
    const v = verdictOn(report, step, 1, file, title);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(`so none counts for ${file}`);
    expect(v.reasons.join("\n")).toContain(
      "(likely a setting: this Surefire report names classes by their display names (usePhrasedTestCaseClassName), which say no package: set junit: in .github/consort.yml to the reports folder (target/surefire-reports/)",
    );
  });

  it.each(STEPS)("Go, the entry in the module's root package with no go.mod to say its path (%s)", async (step) => {
    // The recorded run has one package, example.com/shop/cart: no root package ran.
    const file = "shop_test.go";
    const title = step === "red" ? "TestDiscount" : "TestTotal";
    const report = parseJUnit(await fixtureReport("go"));
    const v = verdictOn(report, step, 2, file, title);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(`so none counts for ${file}`);
    expect(v.reasons.join("\n")).toContain(
      `(likely a setting: ${file} is in the module's root package, which the report names by the module's path: the cycle reads that path from go.mod at the checkout's root`,
    );
  });
});

describe("a report that names the copy's file: refused, naming both files", () => {
  const elsewhere = (where: string, file: string) =>
    `(the report has that title only in ${where}, not in ${file}: a test counts only in its own file)`;

  it.each(STEPS)("jest-junit as the cycle runs it, the entry's file not loaded (%s)", async (step) => {
    const file = "test/cart.test.cjs";
    const v = await judged("jest", `report-own-file-${step}.xml`, step, file, TITLE);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(elsewhere(`test/copy-${step}.test.cjs`, file));
  });

  it.each(STEPS)("mocha's xunit reporter, the copy a top-level it.only (%s)", async (step) => {
    const file = "test/cart.test.js";
    const v = await judged("mocha", `report-own-file-${step}-xunit.xml`, step, file, TITLE);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toMatch(
      /the report has that title only in \/\S+\/test\/copy-(red|green)\.test\.js, not in test\/cart\.test\.js/,
    );
  });

  it.each(STEPS)("vitest, the entry's file not run (%s)", async (step) => {
    const file = "test/cart.test.js";
    const v = await judged("vitest", `report-own-file-${step}.xml`, step, file, TITLE);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(elsewhere(`test/copy-${step}.test.js`, file));
  });

  it.each(STEPS)("pytest, the entry's file not run (%s)", async (step) => {
    const file = "tests/test_cart.py";
    const v = await judged("pytest", `report-own-file-${step}.xml`, step, file, "test_applies_a_ten_percent_discount");
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(elsewhere(`tests/test_copy_${step}.py`, file));
  });

  it.each(STEPS)("Surefire 3 with display names, read from its reports folder (%s)", async (step) => {
    const file = "src/test/java/shop/RefundTest.java";
    const { report } = await readJUnitReports(join(FIXTURES, "surefire", "reports-junit5-phrased"));
    const title = step === "red" ? TITLE : "totalsThePricesOfItsItems()";
    const v = verdictOn(report, step, 1, file, title);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(elsewhere("shop.CartTest", file));
  });

  it.each(STEPS)("Go, the module's path read from go.mod (%s)", async (step) => {
    const file = "shop_test.go";
    const title = step === "red" ? "TestDiscount" : "TestTotal";
    const { report } = await readJUnitReports(join(FIXTURES, "go", "report.xml"), {
      cwd: join(FIXTURES, "go", "project"),
    });
    expect(report.goModule).toBe("example.com/shop");
    const v = verdictOn(report, step, 2, file, title);
    expect(v.verdict).toBe("refused");
    expect(v.reasons.join("\n")).toContain(elsewhere("example.com/shop/cart", file));
  });
});
