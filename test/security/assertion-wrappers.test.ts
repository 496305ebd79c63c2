import { describe, expect, it } from "vitest";
import { parseJUnit } from "../../src/cycle/junit/index.js";
import type { NewModules } from "../../src/cycle/new-modules.js";
import { fixtureReport, redOfOne, sampleNewModules, samplePythonNewModules } from "../cycle/junit/fixtures.js";

/**
 * A crash proves nothing about the behaviour, whatever wraps it. Each attack is a RED whose test
 * wraps a module nobody declared (src/tax), or a stub that throws, in an assertion: the runner then
 * reports an assertion failure whose text shows the crash. Every report here was written by the
 * real runner (test/cycle/junit/generate-fixtures.sh new-module). Each was verified before the
 * cycle read a crash through its wrapper; each must be refused, naming the wrapped crash.
 */

const declared = sampleNewModules;
const python = samplePythonNewModules;

const ATTACKS: Array<[runner: string, file: string, title: string, wrapper: string, modules: NewModules]> = [
  [
    "vitest",
    "test/wrappers.test.js",
    "adds the tax through a dynamic import",
    "expect(import(…)).resolves",
    declared("js"),
  ],
  [
    "vitest",
    "test/wrappers.test.js",
    "loads the tax module by require",
    "expect(() => require(…)).not.toThrow()",
    declared("js"),
  ],
  [
    "vitest",
    "test/wrappers.test.js",
    "adds the tax in a promise chain",
    "import(…).then(…).catch(expect.fail)",
    declared("js"),
  ],
  [
    "vitest",
    "test/wrappers.test.js",
    "adds the tax with a stub that throws",
    "expect(stub()).resolves over a TypeError",
    declared("js"),
  ],
  [
    "jest",
    "test/wrappers.test.cjs",
    "adds the tax through a deferred require",
    "expect(promise of require(…)).resolves",
    declared("cjs"),
  ],
  [
    "jest",
    "test/wrappers.test.cjs",
    "loads the tax module by require",
    "expect(() => require(…)).not.toThrow()",
    declared("cjs"),
  ],
  [
    "jest",
    "test/wrappers.test.cjs",
    "adds the tax in a promise chain",
    "a promise chain whose catch asserts",
    declared("cjs"),
  ],
  [
    "jest",
    "test/wrappers.test.cjs",
    "adds the tax with a stub that throws",
    "expect(stub()).resolves over a TypeError",
    declared("cjs"),
  ],
  [
    "mocha",
    "test/wrappers.test.js",
    "wrappers adds the tax through a dynamic import",
    "assert.doesNotReject(import(…))",
    declared("js"),
  ],
  [
    "mocha",
    "test/wrappers.test.js",
    "wrappers loads the tax module by require",
    "assert.doesNotThrow(() => require(…))",
    declared("js"),
  ],
  [
    "mocha",
    "test/wrappers.test.js",
    "wrappers adds the tax in a promise chain",
    "import(…).then(…).catch(assert.fail)",
    declared("js"),
  ],
  [
    "mocha",
    "test/wrappers.test.js",
    "wrappers adds the tax with a stub that throws",
    "assert.doesNotReject over a TypeError",
    declared("js"),
  ],
  [
    "node",
    "test/wrappers.test.js",
    "adds the tax through a dynamic import",
    "assert.doesNotReject(import(…))",
    declared("js"),
  ],
  [
    "node",
    "test/wrappers.test.js",
    "loads the tax module by require",
    "assert.doesNotThrow(() => require(…))",
    declared("js"),
  ],
  [
    "node",
    "test/wrappers.test.js",
    "adds the tax in a promise chain",
    "import(…).then(…).catch(assert.fail)",
    declared("js"),
  ],
  [
    "node",
    "test/wrappers.test.js",
    "adds the tax with a stub that throws",
    "assert.doesNotReject over a TypeError",
    declared("js"),
  ],
  ["pytest", "tests/test_wrappers.py", "test_adds_the_tax_under_pytest_fail", "pytest.fail around an import", python],
  [
    "pytest",
    "tests/test_wrappers.py",
    "test_adds_the_tax_under_pytest_raises",
    "pytest.raises around an import",
    python,
  ],
];

describe("a RED whose assertion wraps a crash", () => {
  it.each(ATTACKS)("%s: %s %s (%s) is refused", async (runner, file, title, _wrapper, modules) => {
    const report = parseJUnit(await fixtureReport(runner, "report-new-module.xml"));
    // The runner's case: an error, however the wrapper worded it.
    const name = (t: { name: string }) => t.name.trim();
    expect(report.tests.find((t) => name(t) === title || name(t) === title.replace(/^wrappers /, ""))).toMatchObject({
      outcome: "failed-error",
    });
    const verdict = redOfOne(report, file, title, modules);
    expect(verdict.verdict).toBe("refused");
    // Node 20's report names no file for a case, so no case counts (a test counts only in its own file).
    if (runner !== "node") {
      expect(verdict.tests[0]?.outcome).toBe("failed-error");
      expect(verdict.reasons.join("\n")).toMatch(/ fails with \S+.* not by an assertion/);
    }
  });

  it("names the legal path when the wrapped crash is a module nobody declared", async () => {
    const report = parseJUnit(await fixtureReport("vitest", "report-new-module.xml"));
    const verdict = redOfOne(report, "test/wrappers.test.js", "adds the tax through a dynamic import", declared("js"));
    expect(verdict.reasons).toEqual([
      `T1 "adds the tax through a dynamic import" (test/wrappers.test.js) fails with a missing module or export inside an assertion ` +
        `(promise rejected "Error: Cannot find module '/src/tax.js' i… { …(2) }" instead of resolving), not by an assertion: ` +
        "'/src/tax.js' cannot be loaded and the approved architecture declares no new module there: " +
        "declare it in .consort/architecture.json modules (architect, before the design gate; a name the test imports goes in the module's exports), or test through an existing seam; " +
        "a RED test must reach an assertion that fails, or fail only because a declared module is not written yet",
    ]);
  });
});
