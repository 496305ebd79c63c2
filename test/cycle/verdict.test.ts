import { describe, expect, test } from "vitest";
import { hashFrozenText } from "../../src/gates/freeze.js";
import type { TestCaseResult } from "../../src/cycle/junit/index.js";
import { CycleRequest, type CycleStep } from "../../src/contracts/cycle-request.js";
import {
  decideVerdict,
  type FrozenFileState,
  type ReportForVerdict,
  type TestFileChange,
} from "../../src/cycle/verdict.js";

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
    expect(v.reasons).toEqual([
      `the test command exited 0 although the report shows 1 failing test(s) ("lists stock" (${FILE})): the runner's exit code and its report disagree; make the test command exit non-zero when a test fails`,
    ]);
  });

  test("the disagreement counts the tests failing with an error too", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(
        passed("files stock"),
        failed("lists stock", "failed-assertion"),
        failed("audits stock", "failed-error", "TypeError"),
      ),
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(v.reasons).toEqual([
      `the test command exited 0 although the report shows 2 failing test(s) ("lists stock" (${FILE}), "audits stock" (${FILE})): the runner's exit code and its report disagree; make the test command exit non-zero when a test fails`,
    ]);
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

/**
 * Each reason word for word, and every rule that can let a verdict through: written against the
 * mutants `npm run mutate -- --mutate src/cycle/verdict.ts` left alive.
 */
describe("every reason, exactly", () => {
  const T1_LABEL = `T1 "files stock" (${FILE})`;
  const T2_LABEL = `T2 "lists stock" (${FILE})`;
  const green = (tests: TestCaseResult[], testExitCode: number | null = 0) =>
    decideVerdict({ request: request("green"), report: report(...tests), testExitCode, frozenFiles: [] });

  test("GREEN: a test in turn that fails is refused even when the run exited 0, with the failure's message", () => {
    expect(
      green([passed("files stock"), failed("lists stock", "failed-assertion", "AssertionError", "expected 1 to be 2")]),
    ).toEqual({
      verdict: "refused",
      reasons: [`${T2_LABEL} (in turn) fails an assertion: expected 1 to be 2`],
      tests: [
        {
          id: "T2",
          file: FILE,
          title: "lists stock",
          role: "turn",
          outcome: "failed-assertion",
          message: "expected 1 to be 2",
          type: "AssertionError",
        },
        { id: "T1", file: FILE, title: "files stock", role: "earlier", outcome: "passed" },
      ],
    });
    expect(green([passed("files stock"), failed("lists stock", "failed-assertion")]).reasons).toEqual([
      `${T2_LABEL} (in turn) fails an assertion: no message`,
    ]);
  });

  test("GREEN: an error, a skip and a missing test in turn each say what they are", () => {
    expect(
      green([passed("files stock"), failed("lists stock", "failed-error", "TypeError", "x is not a function")]).reasons,
    ).toEqual([`${T2_LABEL} (in turn) fails with TypeError: x is not a function`]);
    expect(green([passed("files stock"), failed("lists stock", "failed-error")]).reasons).toEqual([
      `${T2_LABEL} (in turn) fails with an error: no message`,
    ]);
    expect(green([passed("files stock"), failed("lists stock", "skipped")]).reasons).toEqual([
      `${T2_LABEL} (in turn) is skipped: a skipped test proves nothing; remove the skip`,
    ]);
    expect(green([passed("files stock")]).reasons).toEqual([
      `${T2_LABEL} (in turn) is not in the test report (the report has no test of that title; nearest: "files stock"): it was removed or renamed, or its file did not load`,
    ]);
    const nothingNear = decideVerdict({
      request: request("green", [T2], []),
      report: report(passed("an unrelated check of the warehouse")),
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(nothingNear.reasons).toEqual([
      `${T2_LABEL} (in turn) is not in the test report (the report has no test of that title, nor one near it): it was removed or renamed, or its file did not load`,
    ]);
  });

  test("a missing test names every near title, and the setting to change when the report points at one", () => {
    const v = decideVerdict({
      request: request("green", [T2], []),
      report: { flavour: "unknown", tests: [passed("lists stocks"), passed("list stock")], loadErrors: [] },
      testExitCode: 0,
      frozenFiles: [],
    });
    const hint =
      "the report's runner was not recognised, so only the generic title forms were tried: name it with runner: in .github/consort.yml";
    expect(v.reasons).toEqual([
      `${T2_LABEL} (in turn) is not in the test report (the report has no test of that title; nearest: "list stock", "lists stocks"): it was removed or renamed, or its file did not load (likely a setting: ${hint})`,
    ]);
    expect(v.tests).toStrictEqual([
      {
        id: "T2",
        file: FILE,
        title: "lists stock",
        role: "turn",
        outcome: "missing",
        message: 'the report has no test of that title; nearest: "list stock", "lists stocks"',
        hint,
      },
    ]);
  });

  test("GREEN: a non-zero exit names the tests failing with an error as failing", () => {
    expect(
      green([failed("files stock", "failed-error", "TypeError", "boom"), passed("lists stock")], 1).reasons,
    ).toEqual([
      `the test command exited 1; failing: "files stock" (${FILE})`,
      `${T1_LABEL} (verified green earlier) fails with TypeError: boom`,
    ]);
  });

  test("a request that names its tests by id is never judged as naming none", () => {
    const byId = CycleRequest.parse({
      track: "f1",
      step: "green",
      commit: "a".repeat(40),
      testList: { path: ".consort/test-list.json", sha256: "b".repeat(64), inTurn: ["T2"], earlierGreen: ["T1"] },
      database: { branch: "f1" },
    });
    expect(() =>
      decideVerdict({ request: byId, report: report(passed("files stock")), testExitCode: 0, frozenFiles: [] }),
    ).toThrow(
      new Error("the request names its tests by id in the test list: read them from git (testsOfRequest) first"),
    );
  });

  test("a title two test cases share is missing, never a guess at one of them", () => {
    const v = green([passed("files stock"), passed("lists stock"), failed("lists stock", "failed-assertion")]);
    expect(v.verdict).toBe("refused");
    expect(v.reasons[0]).toBe(
      `${T2_LABEL} (in turn) is not in the test report (2 test cases in the report match this file and title; give the test a title of its own): it was removed or renamed, or its file did not load`,
    );
  });

  test("a test whose file did not load fails with the load error, whatever the run's exit code", () => {
    const v = decideVerdict({
      request: request("green"),
      report: {
        flavour: "vitest",
        tests: [passed("files stock")],
        loadErrors: [{ file: FILE, message: "Cannot find module './stock.js'\n    at import" }],
      },
      testExitCode: 0,
      frozenFiles: [],
    });
    const why = "its file did not load: Cannot find module './stock.js'";
    expect(v.tests[0]).toEqual({
      id: "T2",
      file: FILE,
      title: "lists stock",
      role: "turn",
      outcome: "failed-error",
      message: why,
      type: "load error",
    });
    expect(v.reasons).toEqual([
      `a test file failed to load: ${FILE}: Cannot find module './stock.js'; fix the import or compile error (a file that does not load proves nothing)`,
      `${T2_LABEL} (in turn) fails with load error: ${why}`,
    ]);
  });

  test("a load error with no file is named by its class, and one with no message by that alone", () => {
    const v = decideVerdict({
      request: request("green"),
      report: {
        flavour: "vitest",
        tests: [passed("files stock"), passed("lists stock")],
        loadErrors: [{ classname: "shop.Stock", message: "" }],
      },
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(v.reasons).toEqual([
      "a test file failed to load: shop.Stock; fix the import or compile error (a file that does not load proves nothing)",
    ]);
  });

  test("a message is cut to its first non-blank line, trimmed, and to 200 characters", () => {
    const message = (text: string) =>
      green([passed("files stock"), failed("lists stock", "failed-assertion", undefined, text)]).tests[0]?.message;
    expect(message("\n   \n  expected 1 to be 2  \n    at stock.test.ts:3")).toBe("expected 1 to be 2");
    expect(message("x".repeat(200))).toBe("x".repeat(200));
    expect(message("x".repeat(201))).toBe(`${"x".repeat(197)}...`);
  });

  test("a test's duration is kept when the report gives one, and absent when it does not", () => {
    const v = green([{ ...passed("files stock"), durationMs: 0 }, passed("lists stock")]);
    // Strict: a duration the report did not give is absent, not present as undefined.
    expect(v.tests).toStrictEqual([
      { id: "T2", file: FILE, title: "lists stock", role: "turn", outcome: "passed" },
      { id: "T1", file: FILE, title: "files stock", role: "earlier", outcome: "passed", durationMs: 0 },
    ]);
  });

  test("a test verified green earlier that fails now is refused even when the run exited 0", () => {
    expect(
      green([failed("files stock", "failed-assertion", "AssertionError", "boom"), passed("lists stock")]),
    ).toMatchObject({
      verdict: "refused",
      reasons: [`${T1_LABEL} (verified green earlier) fails an assertion: boom`],
    });
  });

  test("a killed test command is refused even when the report it left shows every test passing", () => {
    expect(green([passed("files stock"), passed("lists stock")], null)).toMatchObject({
      verdict: "refused",
      reasons: ["the test command was killed before it finished (timeout or signal)"],
    });
  });

  test("a non-zero exit names at most five failing tests, with their files when the report gives them", () => {
    const failures = ["f1", "f2", "f3", "f4", "f5"].map((name) => failed(name, "failed-assertion"));
    const five = `"f1" (${FILE}), "f2" (${FILE}), "f3" (${FILE}), "f4" (${FILE}), "f5" (${FILE})`;
    expect(green([passed("files stock"), passed("lists stock"), ...failures], 1).reasons).toEqual([
      `the test command exited 1; failing: ${five}`,
    ]);
    expect(
      green([passed("files stock"), passed("lists stock"), ...failures, { name: "f6", outcome: "failed-error" }], 1)
        .reasons,
    ).toEqual([`the test command exited 1; failing: ${five}, ...`]);
    expect(
      green(
        [passed("files stock"), passed("lists stock"), { name: "f0", outcome: "failed-error" }, failed("s", "skipped")],
        2,
      ).reasons,
    ).toEqual([`the test command exited 2; failing: "f0"`]);
    expect(green([passed("files stock"), passed("lists stock")], 1).reasons).toEqual([
      "the test command exited 1 with no failing test in the report (a crash, or a file that failed to load)",
    ]);
  });

  test("RED: a test in turn that already passes in a run that exited 0 says only that: the exit code agrees with the report", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), passed("lists stock")),
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(v).toMatchObject({
      verdict: "refused",
      reasons: [
        `${T2_LABEL} already passes: a RED test must fail because the behaviour does not exist yet; test something the code does not do`,
      ],
    });
  });

  test("RED: a test in turn that already passes is refused even when another test makes the run exit 1", () => {
    const v = decideVerdict({
      request: request("red"),
      report: report(passed("files stock"), passed("lists stock"), failed("other", "failed-assertion")),
      testExitCode: 1,
      frozenFiles: [],
    });
    expect(v).toMatchObject({
      verdict: "refused",
      reasons: [
        `${T2_LABEL} already passes: a RED test must fail because the behaviour does not exist yet; test something the code does not do`,
      ],
    });
  });

  test("RED: an error, a skip and a missing test in turn each say exactly why they are not a RED", () => {
    const red = (...tests: TestCaseResult[]) =>
      decideVerdict({
        request: request("red"),
        report: report(passed("files stock"), ...tests),
        testExitCode: 1,
        frozenFiles: [],
      }).reasons;
    expect(red(failed("lists stock", "failed-error"))).toEqual([
      `${T2_LABEL} fails with an error (no message), not by an assertion: a RED test must compile, load and reach an assertion that fails; a TypeError, a missing import or a crash proves nothing about the behaviour`,
    ]);
    expect(red(failed("lists stock", "skipped"))).toEqual([
      `${T2_LABEL} is skipped: a RED test must run and fail by an assertion`,
    ]);
    expect(red()).toEqual([
      `${T2_LABEL} is not in the test report (the report has no test of that title; nearest: "files stock"): check the file and the exact title in the test list, and that the file loads`,
    ]);
    expect(red(failed("lists stock", "failed-assertion"), failed("lists stock", "failed-assertion"))).toEqual([
      `${T2_LABEL} is not in the test report (2 test cases in the report match this file and title; give the test a title of its own): check the file and the exact title in the test list, and that the file loads`,
    ]);
  });

  test("a release needs the whole suite green, even when the run exited 0", () => {
    const v = decideVerdict({
      request: request("release", [], [T1, T2]),
      report: report(passed("files stock"), passed("lists stock"), failed("later", "failed-assertion")),
      testExitCode: 0,
      frozenFiles: [],
    });
    expect(v).toMatchObject({
      verdict: "refused",
      reasons: [
        '1 test(s) in the report did not pass (a release needs the whole suite green): "later" failed-assertion',
      ],
    });
    const many = decideVerdict({
      request: request("refactor", [], [T1, T2]),
      report: report(
        passed("files stock"),
        passed("lists stock"),
        ...["a", "b", "c", "d", "e", "f"].map((n) => failed(n, "skipped")),
      ),
      testExitCode: 0,
      frozenFiles: [],
      unfrozenTestChanges: none,
    });
    expect(many.reasons).toEqual([
      '6 test(s) in the report did not pass (a refactor needs the whole suite green): "a" skipped, "b" skipped, "c" skipped, "d" skipped, "e" skipped',
    ]);
  });

  test("a frozen file left exactly as frozen needs no frozen text; deleted or changed without it, each says why", () => {
    const asFrozen = { path: FILE, sha256: hashFrozenText("same"), current: "same" };
    expect(green([passed("files stock"), passed("lists stock")]).verdict).toBe("verified");
    expect(
      decideVerdict({
        request: request("green"),
        report: report(passed("files stock"), passed("lists stock")),
        testExitCode: 0,
        frozenFiles: [asFrozen],
      }),
    ).toMatchObject({ verdict: "verified", reasons: [] });
    const reasons = (step: CycleStep, current: string | undefined) =>
      decideVerdict({
        request: request(step),
        report: report(
          passed("files stock"),
          step === "red" ? failed("lists stock", "failed-assertion") : passed("lists stock"),
        ),
        testExitCode: step === "red" ? 1 : 0,
        frozenFiles: [{ ...asFrozen, current }],
      }).reasons;
    expect(reasons("green", undefined)).toEqual([
      `${FILE}: a frozen test file was deleted; restore it (a verified RED test may never be removed)`,
    ]);
    expect(reasons("red", undefined)).toEqual([
      `${FILE}: a frozen test file was deleted; restore it (a verified RED test may never be removed)`,
    ]);
    expect(reasons("green", "other")).toEqual([
      `${FILE}: a frozen test file changed; outside a RED step it must stay exactly as verified (restore it)`,
    ]);
  });
});
