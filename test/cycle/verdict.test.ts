import { describe, expect, test } from "vitest";
import { hashFrozenText } from "../../src/gates/freeze.js";
import type { TestCaseResult } from "../../src/cycle/junit/index.js";
import { CycleRequest, type CycleStep } from "../../src/cycle/request.js";
import { decideVerdict, type FrozenFileState, type ReportForVerdict } from "../../src/cycle/verdict.js";
import type { TestFileChange } from "../../src/cycle/workspace.js";

/** The verdict rules on their own (design §6), one rule per test; the real runs are in cycle.test.ts. */

const FILE = "test/stock.test.ts";
const T1 = { id: "T1", file: FILE, title: "files stock" };
const T2 = { id: "T2", file: FILE, title: "lists stock" };
const passed = (title: string): TestCaseResult => ({ file: FILE, classname: FILE, name: title, outcome: "passed" });
const failed = (
  title: string,
  outcome: TestCaseResult["outcome"],
  type?: string,
  message?: string,
): TestCaseResult => ({
  file: FILE,
  classname: FILE,
  name: title,
  outcome,
  ...(type ? { type } : {}),
  ...(message ? { message } : {}),
});
const report = (...tests: TestCaseResult[]): ReportForVerdict => ({ flavour: "vitest", tests, loadErrors: [] });
const request = (step: CycleStep, inTurn = [T2], earlierGreen = [T1]) =>
  CycleRequest.parse({
    track: "f1",
    step,
    commit: "a".repeat(40),
    tests: { inTurn, earlierGreen },
    database: { branch: "f1" },
  });
const none = { ok: true as const, base: "the merge base abc with main", files: [] };
const changed = (...files: TestFileChange[]) => ({ ...none, files });
const frozen = (text: string, current: string | undefined): FrozenFileState => ({
  path: FILE,
  sha256: hashFrozenText(text),
  frozen: text,
  current,
});

describe("RED", () => {
  test("the test in turn failing by an assertion while the earlier one passes is verified", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), failed("lists stock", "failed-assertion", "AssertionError")),
      testExitCode: 1,
      frozenFiles: [],
    });
    expect(v).toMatchObject({ verdict: "verified", reasons: [] });
  });

  test("a report showing the assertion failure from a run that exited 0 is refused: exit code and report disagree", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), failed("lists stock", "failed-assertion")),
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(v.verdict).toBe("refused");
    expect(v.reasons).toEqual([expect.stringContaining("exited 0 although a RED test must fail")]);
  });

  test("a TypeError is not a RED", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), failed("lists stock", "failed-error", "TypeError", "x is not a function")),
      testExitCode: 1,
      frozenFiles: [],
    });
    expect(v.reasons).toEqual([
      expect.stringContaining("fails with TypeError (x is not a function), not by an assertion"),
    ]);
  });

  test("a skipped or missing test in turn is not a RED", () => {
    expect(
      decideVerdict({
        request: request("red"),
        report: report(passed("files stock"), failed("lists stock", "skipped")),
        testExitCode: 1,
        frozenFiles: [],
      }).reasons,
    ).toEqual([expect.stringContaining("is skipped")]);
    expect(
      decideVerdict({
        request: request("red"),
        report: report(passed("files stock"), failed("other", "failed-assertion")),
        testExitCode: 1,
        frozenFiles: [],
      }).reasons,
    ).toEqual([expect.stringContaining("is not in the test report")]);
  });

  test("an empty report is refused whatever the exit code", () => {
    const v = decideVerdict({ request: request("red"), report: report(), testExitCode: 1, frozenFiles: [] });
    expect(v.reasons[0]).toContain("lists no test cases");
  });

  test("adding to a frozen test file is allowed at RED; changing a frozen line is not", () => {
    const base = "test('files stock', () => {});\n";
    const ok = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), failed("lists stock", "failed-assertion")),
      testExitCode: 1,
      frozenFiles: [frozen(base, `${base}test('lists stock', () => {});\n`)],
    });
    expect(ok.verdict).toBe("verified");
    const changed = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), failed("lists stock", "failed-assertion")),
      testExitCode: 1,
      frozenFiles: [frozen(base, "test('files stock', () => { /* weaker */ });\ntest('lists stock', () => {});\n")],
    });
    expect(changed.reasons).toEqual([expect.stringContaining("frozen line 1")]);
  });

  test("a changed frozen file without its frozen text cannot be checked at RED, so it is refused", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), failed("lists stock", "failed-assertion")),
      testExitCode: 1,
      frozenFiles: [{ path: FILE, sha256: hashFrozenText("old"), current: "new" }],
    });
    expect(v.reasons).toEqual([expect.stringContaining("carries no frozen text")]);
  });
});

describe("GREEN", () => {
  test("a deleted frozen test file is refused", () => {
    const v = decideVerdict({
      request: request("green"),
      report: report(passed("files stock"), passed("lists stock")),
      testExitCode: 0,
      frozenFiles: [frozen("x", undefined)],
    });
    expect(v.reasons).toEqual([expect.stringContaining("was deleted")]);
  });

  test("a run that exits non-zero with every listed test passing is refused, naming the failing ones", () => {
    const v = decideVerdict({
      request: request("green"),
      report: report(passed("files stock"), passed("lists stock"), failed("unlisted", "failed-error", "Error")),
      testExitCode: 1,
      frozenFiles: [],
    });
    expect(v.reasons).toEqual([expect.stringContaining('exited 1; failing: "unlisted"')]);
  });

  test("a test file that failed to load is refused even when every listed test passed", () => {
    const v = decideVerdict({
      request: request("green"),
      report: {
        flavour: "vitest",
        tests: [passed("files stock"), passed("lists stock")],
        loadErrors: [{ file: "test/other.test.ts", message: "Cannot find module './gone.js'" }],
      },
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(v.reasons).toEqual([expect.stringContaining("test/other.test.ts: Cannot find module")]);
  });
});

describe("REFACTOR", () => {
  const all = report(passed("files stock"), passed("lists stock"));
  test("everything passing with every test file as frozen is verified", () => {
    const v = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: all,
      testExitCode: 0,
      frozenFiles: [frozen("a", "a")],
      unfrozenTestChanges: none,
    });
    expect(v).toMatchObject({ verdict: "verified", reasons: [] });
  });

  test("a new test file is a change to the tests, so it is refused", () => {
    const v = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: all,
      testExitCode: 0,
      frozenFiles: [frozen("a", "a")],
      unfrozenTestChanges: changed({ path: "test/extra.test.ts", change: "added" }),
    });
    expect(v.reasons).toEqual([
      expect.stringContaining(
        "test/extra.test.ts: a test file that no verified RED froze was added since the merge base",
      ),
    ]);
  });

  test("a trunk test file the track changed or deleted is a change to tests it does not own, so it is refused", () => {
    const v = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: all,
      testExitCode: 0,
      frozenFiles: [],
      unfrozenTestChanges: changed(
        { path: "test/trunk.test.ts", change: "modified" },
        { path: "test/old.test.ts", change: "deleted" },
      ),
    });
    expect(v.reasons).toEqual([
      expect.stringContaining(
        "test/trunk.test.ts: a test file that no verified RED froze (the trunk's, or one the track never froze) changed since the merge base",
      ),
      expect.stringContaining("test/old.test.ts: a test file was deleted since the merge base"),
    ]);
  });

  test("when the track's test changes cannot be known, the refactor is refused with the reason", () => {
    const unknown = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: all,
      testExitCode: 0,
      frozenFiles: [],
      unfrozenTestChanges: { ok: false, reason: "the base is not in the checkout" },
    });
    expect(unknown).toMatchObject({
      verdict: "refused",
      reasons: ["a refactor must change no tests, but the base is not in the checkout"],
    });
    const missing = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: all,
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(missing.reasons).toEqual([expect.stringContaining("the track's test changes were not determined")]);
  });

  test("a skipped test anywhere in the suite is refused", () => {
    const v = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: report(passed("files stock"), passed("lists stock"), failed("later", "skipped")),
      testExitCode: 0,
      frozenFiles: [],
      unfrozenTestChanges: none,
    });
    expect(v.reasons).toEqual([expect.stringContaining('"later" skipped')]);
  });

  test("adding to a frozen file is a change outside RED", () => {
    const v = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: all,
      testExitCode: 0,
      frozenFiles: [frozen("a\n", "a\nb\n")],
      unfrozenTestChanges: none,
    });
    expect(v.reasons).toEqual([expect.stringContaining("a frozen test file changed")]);
  });
});
