import { checkFrozenTestFile, hashFrozenText } from "../gates/freeze.js";
import { locateTestCases, type JUnitReport, type LoadError, type TestLocation } from "./junit/index.js";
import { DECLARE_A_MODULE, judgeMissing, type MissingJudgement, type NewModules } from "./new-modules.js";
import type { CycleRequest, CycleTest } from "../contracts/cycle-request.js";
import type { CycleTestOutcome, CycleVerdict, TestOutcome } from "../contracts/cycle-result.js";

/**
 * The verdict of a cycle (docs/ARCHITECTURE.md, Cycles), decided purely from what the run left behind: the parsed
 * report, the test command's exit code and the test files in the checkout. Anything it cannot
 * decide is a refusal with the reason.
 */

export type ReportForVerdict = Pick<JUnitReport, "tests" | "loadErrors"> & { flavour?: JUnitReport["flavour"] };

export interface FrozenFileState {
  path: string;
  sha256: string;
  /** The frozen text, when the request carried it. */
  frozen?: string;
  /** The file in the checkout now; undefined when it is gone. */
  current: string | undefined;
}

/** A test file the checkout changed since the base: what a track did to the tests. */
export interface TestFileChange {
  path: string;
  change: "added" | "modified" | "deleted";
}

export interface VerdictInput {
  request: CycleRequest;
  report: ReportForVerdict;
  /** The test command's exit code; null when it was killed. */
  testExitCode: number | null;
  frozenFiles: FrozenFileState[];
  /**
   * A refactor's evidence: the test files (by the configured globs) the track added, changed or
   * deleted since its base (the merge base with the trunk) that no verified RED froze, or why they
   * could not be known. The trunk's untouched test files are the baseline and never listed.
   * A refactor without it refuses.
   */
  unfrozenTestChanges?: { ok: true; base: string; files: TestFileChange[] } | { ok: false; reason: string };
  /**
   * A RED's evidence for a missing module: the modules the approved architecture declares that the
   * track creates, as git holds them (./new-modules.ts). Without it no missing module is declared.
   */
  newModules?: NewModules;
}

export interface Verdict {
  verdict: CycleVerdict;
  reasons: string[];
  tests: CycleTestOutcome[];
}

const firstLine = (text: string | undefined, max = 200): string | undefined => {
  const line = text
    ?.split("\n")
    .find((l) => l.trim())
    ?.trim();
  return line && line.length > max ? `${line.slice(0, max - 3)}...` : line;
};

export function describeLoadError(error: LoadError): string {
  return [error.file ?? error.classname, firstLine(error.message)].filter(Boolean).join(": ");
}

/** What a turn test's failure that names a missing module or export makes of it, at RED. */
function judged(
  location: TestLocation,
  test: CycleTest,
  newModules: NewModules | undefined,
): MissingJudgement | undefined {
  if (location.status === "not-loaded") {
    const missing = location.loadError.missing;
    return missing ? judgeMissing(missing, test.file, newModules) : undefined;
  }
  if (location.status !== "found" || location.test.outcome !== "failed-error" || !location.test.missing)
    return undefined;
  return judgeMissing(location.test.missing, test.file, newModules);
}

function outcomeOf(location: TestLocation, test: CycleTest, role: "turn" | "earlier"): CycleTestOutcome {
  const base = { id: test.id, file: test.file, title: test.title, role };
  if (location.status === "missing") {
    const nearest =
      location.reason ??
      (location.nearest.length
        ? `the report has no test of that title; nearest: ${location.nearest.map((n) => `"${n}"`).join(", ")}`
        : "the report has no test of that title, nor one near it");
    return { ...base, outcome: "missing", message: nearest, ...(location.hint ? { hint: location.hint } : {}) };
  }
  if (location.status === "ambiguous") {
    return {
      ...base,
      outcome: "missing",
      message: `${location.candidates.length} test cases in the report match this file and title; give the test a title of its own`,
    };
  }
  const found = location.test;
  const message = firstLine(
    location.status === "not-loaded" ? `its file did not load: ${location.loadError.message}` : found.message,
  );
  return {
    ...base,
    outcome: (location.status === "not-loaded" ? "failed-error" : found.outcome) as TestOutcome,
    ...(message ? { message } : {}),
    ...(found.type ? { type: found.type } : {}),
    ...(found.durationMs !== undefined ? { durationMs: found.durationMs } : {}),
    ...(found.hint ? { hint: found.hint } : {}),
  };
}

/** A reason with the setting to change appended, when the report points at one. */
const withHint = (t: CycleTestOutcome, reason: string) => (t.hint ? `${reason} (likely a setting: ${t.hint})` : reason);

/** The first five tests of a list, as the report names them. */
const quoteTests = (tests: ReportForVerdict["tests"]) =>
  `${tests
    .slice(0, 5)
    .map((t) => `"${t.name}"${t.file ? ` (${t.file})` : ""}`)
    .join(", ")}${tests.length > 5 ? ", ..." : ""}`;

const label = (t: CycleTestOutcome) => `${t.id} "${t.title}" (${t.file})`;

function whyNotPassing(t: CycleTestOutcome, now: string): string {
  switch (t.outcome) {
    case "missing":
      return `${label(t)} ${now} is not in the test report${t.message ? ` (${t.message})` : ""}: it was removed or renamed, or its file did not load`;
    case "skipped":
      return `${label(t)} ${now} is skipped: a skipped test proves nothing; remove the skip`;
    case "failed-assertion":
      return `${label(t)} ${now} fails an assertion: ${t.message ?? "no message"}`;
    case "failed-error":
      return `${label(t)} ${now} fails with ${t.type ?? "an error"}: ${t.message ?? "no message"}`;
    case "behaviour-missing":
      return `${label(t)} ${now} did not pass: ${t.message ?? "its module is not written"}`;
    default:
      return `${label(t)} ${now} did not pass`;
  }
}

function whyNotRed(t: CycleTestOutcome, judgement: MissingJudgement | undefined): string | undefined {
  switch (t.outcome) {
    case "failed-assertion":
    case "behaviour-missing":
      return undefined;
    case "passed":
      return `${label(t)} already passes: a RED test must fail because the behaviour does not exist yet; test something the code does not do`;
    case "failed-error":
      return (
        `${label(t)} fails with ${t.type ?? "an error"} (${t.message ?? "no message"}), not by an assertion: ` +
        (judgement && !judgement.declared
          ? `${judgement.why}; a RED test must reach an assertion that fails, or fail only because a declared module is not written yet`
          : "a RED test must compile, load and reach an assertion that fails; a TypeError, a missing import or a crash proves nothing about the behaviour")
      );
    case "skipped":
      return `${label(t)} is skipped: a RED test must run and fail by an assertion`;
    case "missing":
      return `${label(t)} is not in the test report${t.message ? ` (${t.message})` : ""}: check the file and the exact title in the test list, and that the file loads`;
  }
}

function frozenReasons(request: CycleRequest, files: FrozenFileState[]): string[] {
  const reasons: string[] = [];
  const step = request.step === "red" ? "red" : "other";
  for (const file of files) {
    if (file.current !== undefined && hashFrozenText(file.current) === file.sha256) continue;
    if (file.frozen === undefined) {
      reasons.push(
        file.current === undefined
          ? `${file.path}: a frozen test file was deleted; restore it (a verified RED test may never be removed)`
          : step === "red"
            ? `${file.path}: a frozen test file changed and the request carries no frozen text to check it was only added to; the cycle cannot decide, so it refuses`
            : `${file.path}: a frozen test file changed; outside a RED step it must stay exactly as verified (restore it)`,
      );
      continue;
    }
    reasons.push(...checkFrozenTestFile({ path: file.path, frozen: file.frozen, current: file.current, step }).reasons);
  }
  return reasons;
}

function describeTestChange(file: TestFileChange, base: string): string {
  const since = `since ${base}`;
  switch (file.change) {
    case "added":
      return `${file.path}: a test file that no verified RED froze was added ${since}; a refactor changes no tests (remove it)`;
    case "deleted":
      return `${file.path}: a test file was deleted ${since}; a refactor changes no tests (restore it)`;
    case "modified":
      return `${file.path}: a test file that no verified RED froze (the trunk's, or one the track never froze) changed ${since}; a refactor changes no tests (restore it as it is at the base)`;
  }
}

/** What to do about a file that did not load: the legal path when it names a missing module. */
function loadAdvice(error: LoadError, report: ReportForVerdict, newModules: NewModules | undefined): string {
  if (error.missing && error.file) {
    const judgement = judgeMissing(error.missing, error.file, newModules);
    if (!judgement.declared) return `${judgement.why} (a file that does not load proves nothing)`;
  }
  if (report.flavour === "node" && !error.missing)
    return (
      "node's report does not say why a file did not load (the error is only in the runner's output), so the cycle cannot tell a declared module not written yet from a crash: " +
      `import a module that does not exist yet inside the test (const { f } = await import("../src/m.js")), or ${DECLARE_A_MODULE}`
    );
  if (report.flavour === "go" && !error.missing)
    return (
      "go's report does not name the identifier or package a build failure lacks (only the test command's output does), so the cycle cannot tell a declared module not written yet from a compile error: " +
      "a RED in Go must compile and fail by t.Error or t.Fatal, so test through code that already exists"
    );
  return "fix the import or compile error (a file that does not load proves nothing)";
}

export function decideVerdict(input: VerdictInput): Verdict {
  const { request, report, testExitCode } = input;
  // Tests named by id are judged only once read from the approved list (testsOfRequest): never as none.
  if (request.testList)
    throw new Error("the request names its tests by id in the test list: read them from git (testsOfRequest) first");
  // Every test looked up in one pass over the report.
  const { inTurn, earlierGreen } = request.tests;
  const locations = locateTestCases(report, [...inTurn, ...earlierGreen]);
  // Only a RED may fail because a declared module is not written yet; GREEN needs it written and passing.
  const judgements = inTurn.map((t, i) =>
    request.step === "red" ? judged(locations[i]!, t, input.newModules) : undefined,
  );
  const turn = inTurn.map((t, i) => {
    const outcome = outcomeOf(locations[i]!, t, "turn");
    const judgement = judgements[i];
    return judgement?.declared
      ? { ...outcome, outcome: "behaviour-missing" as const, message: judgement.says }
      : outcome;
  });
  // A file that did not load only because a declared module is not written yet holds the RED's tests.
  const explained = new Set(
    inTurn.flatMap((_, i) => {
      const location = locations[i]!;
      return judgements[i]?.declared && location.status === "not-loaded" ? [location.loadError] : [];
    }),
  );
  const earlier = earlierGreen.map((t, i) => outcomeOf(locations[inTurn.length + i]!, t, "earlier"));
  const reasons: string[] = [];

  // A first RED whose only file waits on a declared module leaves no case, only that file's load error.
  if (report.tests.length === 0 && explained.size === 0)
    reasons.push("the test report lists no test cases: the test command ran nothing, or wrote an empty report");
  for (const error of report.loadErrors) {
    if (explained.has(error)) continue;
    reasons.push(
      `a test file failed to load: ${describeLoadError(error)}; ${loadAdvice(error, report, input.newModules)}`,
    );
  }
  if (testExitCode === null) reasons.push("the test command was killed before it finished (timeout or signal)");

  if (request.step === "red") {
    for (const [i, t] of turn.entries()) {
      const why = whyNotRed(t, judgements[i]);
      if (why) reasons.push(withHint(t, why));
    }
    // Exit 0 with a failure in the report: the two disagree. Exit 0 with nothing failing agrees
    // with the report, and the test's own reason ("already passes") says everything.
    const failing = report.tests.filter((t) => t.outcome === "failed-assertion" || t.outcome === "failed-error");
    if (testExitCode === 0 && failing.length > 0) {
      reasons.push(
        `the test command exited 0 although the report shows ${failing.length} failing test(s) (${quoteTests(failing)}): ` +
          "the runner's exit code and its report disagree; make the test command exit non-zero when a test fails",
      );
    }
  } else {
    for (const t of turn) if (t.outcome !== "passed") reasons.push(withHint(t, whyNotPassing(t, "(in turn)")));
    if (testExitCode !== null && testExitCode !== 0) {
      const failing = report.tests.filter((t) => t.outcome === "failed-assertion" || t.outcome === "failed-error");
      reasons.push(
        `the test command exited ${testExitCode}` +
          (failing.length
            ? `; failing: ${quoteTests(failing)}`
            : " with no failing test in the report (a crash, or a file that failed to load)"),
      );
    }
  }
  for (const t of earlier)
    if (t.outcome !== "passed") reasons.push(withHint(t, whyNotPassing(t, "(verified green earlier)")));

  if (request.step === "refactor" || request.step === "release") {
    const notPassing = report.tests.filter((t) => t.outcome !== "passed");
    if (notPassing.length) {
      reasons.push(
        `${notPassing.length} test(s) in the report did not pass (a ${request.step} needs the whole suite green): ` +
          notPassing
            .slice(0, 5)
            .map((t) => `"${t.name}" ${t.outcome}`)
            .join(", "),
      );
    }
  }
  if (request.step === "refactor") {
    const changes = input.unfrozenTestChanges;
    if (!changes)
      reasons.push(
        "the track's test changes were not determined: a refactor cannot prove it changed no tests, so it refuses",
      );
    else if (!changes.ok) reasons.push(`a refactor must change no tests, but ${changes.reason}`);
    else for (const file of changes.files) reasons.push(describeTestChange(file, changes.base));
  }
  reasons.push(...frozenReasons(request, input.frozenFiles));

  return { verdict: reasons.length === 0 ? "verified" : "refused", reasons, tests: [...turn, ...earlier] };
}
