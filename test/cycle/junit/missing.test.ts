import { beforeEach, describe, expect, it } from "vitest";
import { parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import type { NewModules } from "../../../src/cycle/new-modules.js";
import { fixtureReport, fixtureRun, redOfOne as red, sampleNewModules, samplePythonNewModules } from "./fixtures.js";

/**
 * A new module's first RED, judged from the reports real runners wrote (generate-fixtures.sh
 * new-module): each sample project's architecture declares src/pricing (not written) and
 * src/discounts (written, with one declared export not written yet); src/tax is declared nowhere.
 * Each case is the RED of one test, judged the way the cycle judges it.
 */

const LEGAL_PATH =
  "declare it in .consort/architecture.json modules (architect, before the design gate; a name the test imports goes in the module's exports), or test through an existing seam";

const js = sampleNewModules;
const python = samplePythonNewModules;

function behaviourMissing(verdict: ReturnType<typeof red>, says: string) {
  expect(verdict.reasons).toEqual([]);
  expect(verdict.verdict).toBe("verified");
  expect(verdict.tests[0]).toMatchObject({ outcome: "behaviour-missing", message: says });
}

function refused(verdict: ReturnType<typeof red>, ...reasons: string[]) {
  expect(verdict.verdict).toBe("refused");
  expect(verdict.tests[0]?.outcome).not.toBe("behaviour-missing");
  for (const reason of reasons) expect(verdict.reasons.join("\n")).toContain(reason);
}

describe("vitest: a new module's first RED", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("vitest", "report-new-module.xml"));
  });
  const modules = js("js");

  it("verifies a static import of a declared module not written yet as behaviour missing", () => {
    behaviourMissing(
      red(report, "test/declared.test.js", "prices an item by its weight", modules),
      "behaviour missing: src/pricing.js not written yet",
    );
  });

  it("refuses the same import when the request carries no approved architecture", () => {
    refused(red(report, "test/declared.test.js", "prices an item by its weight", undefined), LEGAL_PATH);
  });

  it("refuses a static import of an undeclared module, naming the legal path", () => {
    refused(
      red(report, "test/undeclared.test.js", "adds the tax", modules),
      "a test file failed to load: test/undeclared.test.js: Cannot find module '../src/tax.js'",
      `'../src/tax.js' cannot be loaded and the approved architecture declares no new module there: ${LEGAL_PATH}`,
    );
  });

  it("verifies a declared export the written module lacks (vitest says only 'is not a function')", () => {
    const says = "behaviour missing: bulkDiscount, declared for src/discounts.js, not written yet";
    behaviourMissing(red(report, "test/export.test.js", "gives a bulk discount", modules), says);
    behaviourMissing(
      red(report, "test/namespace.test.js", "gives a bulk discount through the namespace", modules),
      says,
    );
  });

  it("refuses a name no module declares", () => {
    refused(
      red(report, "test/namespace.test.js", "gives no discount the architecture never declared", modules),
      `loyaltyDiscount is not a name the approved architecture declares for a module the track creates: ${LEGAL_PATH}`,
    );
  });

  it("verifies `.resolves` over a declared module, and refuses every wrapper over an undeclared one", () => {
    behaviourMissing(
      red(report, "test/wrappers.test.js", "prices through a dynamic import", modules),
      "behaviour missing: src/pricing.js not written yet",
    );
    for (const title of [
      "adds the tax through a dynamic import",
      "loads the tax module by require",
      "adds the tax in a promise chain",
    ])
      refused(red(report, "test/wrappers.test.js", title, modules), "inside an assertion", LEGAL_PATH);
    refused(
      red(report, "test/wrappers.test.js", "adds the tax with a stub that throws", modules),
      "fails with TypeError inside an assertion",
    );
  });
});

describe("node:test (Node 20): a new module's first RED", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("node", "report-new-module.xml"));
  });
  const modules = js("js");

  it("refuses a static import of a missing module: node's report does not say which module failed", () => {
    refused(
      red(report, "test/declared.test.js", "prices an item by its weight", modules),
      "node's report does not say why a file did not load",
      'const { f } = await import("../src/m.js")',
    );
  });

  it("reads the module an import inside the test lacks (ERR_MODULE_NOT_FOUND) and the declared name a module lacks", () => {
    const test = (name: string) => report.tests.find((t) => t.name === name);
    expect(test("prices an item loaded inside the test")).toMatchObject({
      outcome: "failed-error",
      missing: { language: "js", module: expect.stringMatching(/\/project-new-module\/src\/pricing\.js$/) },
    });
    expect(test("gives a bulk discount through the namespace")).toMatchObject({
      outcome: "failed-error",
      type: "TypeError",
      missing: { language: "js", export: "bulkDiscount" },
    });
  });

  it("reads every assert wrapper over an undeclared module or a throwing stub as an error", () => {
    for (const name of [
      "adds the tax through a dynamic import",
      "loads the tax module by require",
      "adds the tax in a promise chain",
      "adds the tax with a stub that throws",
    ])
      expect(report.tests.find((t) => t.name === name)).toMatchObject({
        outcome: "failed-error",
        type: expect.stringMatching(/inside an assertion$/),
      });
  });

  it("judges no test of Node 20's report, whose cases name no file: a test counts only in its own file", () => {
    refused(
      red(report, "test/dynamic.test.js", "prices an item loaded inside the test", modules),
      "does not say which file it ran from",
    );
  });
});

describe("jest: a new module's first RED", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("jest", "report-new-module.xml"));
  });
  const modules = js("cjs");

  it("verifies a require of a declared module not written yet ('Cannot find module … from …')", () => {
    behaviourMissing(
      red(report, "test/declared.test.cjs", "prices an item by its weight", modules),
      "behaviour missing: src/pricing.cjs not written yet",
    );
  });

  it("refuses a require of an undeclared module, naming the legal path", () => {
    refused(red(report, "test/undeclared.test.cjs", "adds the tax", modules), LEGAL_PATH);
  });

  it("verifies a declared export not written yet, refuses an undeclared one", () => {
    behaviourMissing(
      red(report, "test/export.test.cjs", "gives a bulk discount", modules),
      "behaviour missing: bulkDiscount, declared for src/discounts.cjs, not written yet",
    );
    refused(
      red(report, "test/export.test.cjs", "gives no discount the architecture never declared", modules),
      LEGAL_PATH,
    );
  });

  it("verifies `.resolves` over a declared module, and refuses every wrapper over an undeclared one", () => {
    behaviourMissing(
      red(report, "test/wrappers.test.cjs", "prices through a deferred require", modules),
      "behaviour missing: src/pricing.cjs not written yet",
    );
    for (const title of [
      "adds the tax through a deferred require",
      "loads the tax module by require",
      "adds the tax in a promise chain",
      "adds the tax with a stub that throws",
    ])
      refused(red(report, "test/wrappers.test.cjs", title, modules), "inside an assertion");
  });
});

describe("mocha: a new module's first RED", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("mocha", "report-new-module.xml"));
  });
  const modules = js("js");

  it("writes no report at all when a file imports a missing module statically (so the cycle refuses)", async () => {
    expect(await fixtureRun("mocha", "report-new-module-static.xml")).toMatchObject({ written: false, exitCode: 1 });
  });

  it("verifies an import inside the test of a declared module, and a declared export not written yet", () => {
    behaviourMissing(
      red(report, "test/dynamic.test.js", "dynamic prices an item loaded inside the test", modules),
      "behaviour missing: src/pricing.js not written yet",
    );
    behaviourMissing(
      red(report, "test/namespace.test.js", "namespace gives a bulk discount through the namespace", modules),
      "behaviour missing: bulkDiscount, declared for src/discounts.js, not written yet",
    );
  });

  it("refuses every assert wrapper over an undeclared module or a throwing stub", () => {
    for (const title of [
      "wrappers adds the tax through a dynamic import",
      "wrappers loads the tax module by require",
      "wrappers adds the tax in a promise chain",
      "wrappers adds the tax with a stub that throws",
    ])
      refused(red(report, "test/wrappers.test.js", title, modules), "inside an assertion");
  });
});

describe("pytest: a new module's first RED", () => {
  let report: JUnitReport;
  beforeEach(async () => {
    report = parseJUnit(await fixtureReport("pytest", "report-new-module.xml"));
  });

  it("verifies an import of a declared module not written yet (ModuleNotFoundError), at collection and inside the test", () => {
    const says = "behaviour missing: shop/pricing.py not written yet";
    behaviourMissing(red(report, "tests/test_declared.py", "test_prices_an_item_by_its_weight", python), says);
    behaviourMissing(red(report, "tests/test_wrappers.py", "test_prices_an_item_loaded_inside_the_test", python), says);
  });

  it("verifies a declared name the module lacks ('cannot import name')", () => {
    behaviourMissing(
      red(report, "tests/test_export.py", "test_gives_a_bulk_discount", python),
      "behaviour missing: bulk_discount, declared for shop/discounts.py, not written yet",
    );
  });

  it("refuses an undeclared module, plainly, under pytest.raises and under pytest.fail", () => {
    refused(red(report, "tests/test_undeclared.py", "test_adds_the_tax", python), LEGAL_PATH);
    refused(red(report, "tests/test_wrappers.py", "test_adds_the_tax_under_pytest_raises", python), LEGAL_PATH);
    refused(
      red(report, "tests/test_wrappers.py", "test_adds_the_tax_under_pytest_fail", python),
      "fails with ModuleNotFoundError inside an assertion",
      LEGAL_PATH,
    );
    refused(
      red(report, "tests/test_wrappers.py", "test_gives_no_discount_the_architecture_never_declared", python),
      LEGAL_PATH,
    );
  });
});

describe("go test and Surefire: a new module's first RED", () => {
  it("refuses a Go test that does not compile (RefundAll undefined): the report does not name the identifier", async () => {
    const report = parseJUnit(await fixtureReport("go"));
    const modules: NewModules = {
      ok: true,
      modules: [{ path: "refunds/refunds.go", written: true, exports: ["RefundAll"], unwritten: ["RefundAll"] }],
      existing: [],
    };
    refused(
      red(report, "refunds/refunds_test.go", "TestRefundsAReturnedItem", modules),
      "go's report does not name the identifier or package a build failure lacks",
      "a RED in Go must compile and fail by t.Error or t.Fatal",
    );
  });

  it("has no report to judge when a Java test class does not compile: Surefire never ran", async () => {
    expect(await fixtureRun("surefire", "(none: a test class that does not compile)")).toMatchObject({
      written: false,
    });
  });
});
