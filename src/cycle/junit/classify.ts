import type { RawCase, RawProblem, RawReport } from "./xml.js";
import type { Flavour, LoadError, TestCaseResult, TestOutcome } from "./types.js";

/**
 * Turns raw test cases into outcomes, runner by runner. The flavours differ exactly where RED is
 * decided (docs/ARCHITECTURE.md, Cycles): most write a crash as a `<failure>` like an assertion and tell them apart
 * only by a type or the text, and each marks a file that did not load in its own way.
 */

/** Error types that mean "an assertion failed", in any of the languages the cycle supports. */
const ASSERTION_TYPE =
  /(^|[.$\s])(AssertionError|AssertionFailedError|ComparisonFailure|JestAssertionError|AssertError|ExpectationNotMetError|MultipleFailuresError|AssertionFailure)\b/;

/** Java errors that mean the test class itself never loaded. */
const JAVA_LOAD_FAILURE =
  /^java\.lang\.(ExceptionInInitializerError|NoClassDefFoundError|ClassNotFoundException|LinkageError|VerifyError)$/;

const SCRIPT_FILE = /\.(c|m)?[jt]sx?$/;

function firstLine(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  // Line by line from the start: a failure body of megabytes is never split whole.
  for (let start = 0; start < text.length;) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end === -1 ? text.length : end).trim();
    if (line !== "") return line;
    if (end === -1) break;
    start = end + 1;
  }
  return undefined;
}

/** "TypeError: Cannot read…" → "TypeError"; "AssertionError [ERR_ASSERTION]: …" → "AssertionError". */
function leadingErrorName(text: string | undefined): string | undefined {
  const match = /^\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:\s*\[[^\]]*\])?:\s/.exec(text ?? "");
  return match?.[1];
}

/**
 * The error named by the first stack header in a text: mocha's xunit reporter writes the message
 * first and the stack ("TypeError: …" then "    at …") after it. Only names that look like an
 * error class count, so a message line such as "Note: …" names nothing.
 */
function stackHeaderName(text: string): string | undefined {
  const match = /^\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:Error|Exception|Failure))(?:\s*\[[^\]]*\])?:\s/m.exec(
    text,
  );
  return match?.[1];
}

/** True when a failure's text carries no stack frame: the runner was told to leave the trace out. */
const hasNoStack = (text: string) => !/^\s+at\s/m.test(text);

const JEST_NO_STACK_HINT =
  "jest-junit wrote this failure without its stack trace, so the kind of error cannot be told (an error counts as failed-error): " +
  "turn jest-junit's noStackTrace off (JEST_JUNIT_NO_STACK_TRACE=false, or noStackTrace: false in its reporter options)";

function seconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number.parseFloat(value);
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 1_000_000) / 1_000 : undefined;
}

interface Verdict {
  outcome: Extract<TestOutcome, "failed-assertion" | "failed-error">;
  type?: string;
  hint?: string;
}

const assertion = (type?: string): Verdict => ({ outcome: "failed-assertion", ...(type ? { type } : {}) });
const error = (type?: string): Verdict => ({ outcome: "failed-error", ...(type ? { type } : {}) });
const byType = (type: string | undefined): Verdict =>
  type && ASSERTION_TYPE.test(type) ? assertion(type) : error(type);

/** Decides what kind of failure one `<failure>` element is, by the rules of its runner. */
function classifyFailure(flavour: Flavour, p: RawProblem): Verdict {
  const type = p.type?.trim() || undefined;
  switch (flavour) {
    case "vitest":
    case "surefire":
      // These write the error's class as the type: AssertionError, TypeError, java.lang.AssertionError…
      return byType(type ?? leadingErrorName(p.message) ?? leadingErrorName(p.text));
    case "mocha":
      // mocha-junit-reporter writes the type; mocha's own xunit reporter writes none, and its text is
      // the message followed by the stack, whose header names the error.
      return byType(type ?? leadingErrorName(p.message) ?? leadingErrorName(p.text) ?? stackHeaderName(p.text));
    case "jest": {
      // jest-junit writes neither type nor message: the text starts with the error. A failed
      // expect() is an Error whose message starts "expect(" (or "expect.assertions("); with
      // noStackTrace the text is the bare message, with no "Error: " before it.
      const text = p.text.trimStart();
      if (/^(Error: )?expect[.(]/.test(text)) return assertion("expect");
      const name = type ?? leadingErrorName(text);
      if (!name && hasNoStack(text)) return { ...error(), hint: JEST_NO_STACK_HINT };
      return byType(name);
    }
    case "node": {
      // Every failure is type testCodeFailure (or a hook/timeout/cancel type); the real error is
      // the `cause` in the text.
      if (type && type !== "testCodeFailure") return error(type);
      const cause = /\bcause:\s*([A-Za-z_$][\w$]*)/.exec(p.text)?.[1] ?? leadingErrorName(p.text.replace(/^\[/, ""));
      if (cause && ASSERTION_TYPE.test(cause)) return assertion(cause);
      if (/code: 'ERR_ASSERTION'/.test(p.text)) return assertion("AssertionError");
      return error(cause && cause !== "Error" ? cause : type);
    }
    case "pytest": {
      // pytest writes the exception as the message's prefix, and ends the text with its name.
      const message = p.message ?? "";
      const last = p.text.trimEnd().split("\n").pop() ?? "";
      const name = leadingErrorName(message) ?? /:\s*([A-Za-z_][\w.]*)$/.exec(last)?.[1];
      if (/^assert\s/.test(message)) return assertion("AssertionError");
      // pytest.fail() and pytest.raises() that saw nothing are the test's own verdict.
      if (name === "Failed") return assertion("Failed");
      return byType(name);
    }
    case "go": {
      // Go has no assertion type: t.Error/t.Fatal is the assertion, a panic or a timeout is not.
      if (/(^|\n)\s*panic: /.test(p.text) || /\bpanic: /.test(p.message ?? "")) return error("panic");
      if (/panic: test timed out|test timed out after/.test(p.text)) return error("timeout");
      return assertion();
    }
    case "unknown": {
      const name = type ?? leadingErrorName(p.message) ?? leadingErrorName(p.text);
      // A report that says nothing about the kind of failure cannot prove an assertion failed.
      return name ? byType(name) : error();
    }
  }
}

/** The name of the innermost suite a case sits in. */
function suiteName(c: RawCase): string | undefined {
  return c.suites[c.suites.length - 1]?.attrs.name;
}

const looksLikeFile = (value: string | undefined): value is string =>
  value !== undefined && /\.[A-Za-z0-9]+$/.test(value) && !/\s/.test(value.trim());

/** "tests.test_cart.TestCart" → "tests/test_cart.py": module segments end at the first class. */
function pytestFile(classname: string | undefined): string | undefined {
  if (!classname) return undefined;
  const parts = classname.split(".");
  const firstClass = parts.findIndex((part) => /^[A-Z]/.test(part));
  const module = firstClass === -1 ? parts : parts.slice(0, firstClass);
  return module.length ? `${module.join("/")}.py` : undefined;
}

function fileOf(flavour: Flavour, c: RawCase): string | undefined {
  if (c.attrs.file) return c.attrs.file;
  switch (flavour) {
    case "vitest":
      return c.attrs.classname;
    case "jest": {
      const suite = suiteName(c);
      return looksLikeFile(suite) ? suite : undefined;
    }
    case "mocha":
      return c.suites[c.suites.length - 1]?.attrs.file;
    case "pytest":
      return pytestFile(c.attrs.classname);
    default:
      return undefined;
  }
}

/**
 * A case that stands for a file, class or package that did not load, rather than a test. `drop`
 * says whether it is a placeholder the runner invented (then it is not a test) or a real test
 * that failed because its class did not load (it stays, as failed-error).
 */
function loadFailure(flavour: Flavour, c: RawCase): { error: LoadError; drop: boolean } | undefined {
  const problems = [...c.errors, ...c.failures];
  const first = problems[0];
  if (!first) return undefined;
  const message = firstLine(first.message) ?? firstLine(first.text) ?? "failed to load";
  const name = c.attrs.name ?? "";
  const classname = c.attrs.classname;
  switch (flavour) {
    case "vitest":
      // A file whose import throws becomes one case named after the file itself.
      if (classname && name === classname && suiteName(c) === classname) {
        return { error: { file: classname, message }, drop: true };
      }
      return undefined;
    case "jest":
      if (classname === "Test suite failed to run") {
        const text = firstLine(first.text.replace(/^\s*●\s*Test suite failed to run\s*/, "")) ?? message;
        return { error: { file: c.attrs.file ?? name, message: text }, drop: true };
      }
      return undefined;
    case "node":
      // node runs each file in its own process; a file that dies before its tests report
      // becomes one top-level case named by its path.
      if (c.suites.length === 0 && SCRIPT_FILE.test(name) && /[\\/]/.test(name)) {
        return {
          error: {
            file: c.attrs.file ?? name,
            message: `${message} (the file did not run its tests: see the runner's output)`,
          },
          drop: true,
        };
      }
      return undefined;
    case "pytest":
      if (!classname && (c.errors.length > 0 || first.message === "collection failure")) {
        const text =
          first.text
            .split("\n")
            .reverse()
            .find((l) => /^E\s+\S/.test(l))
            ?.replace(/^E\s+/, "") ?? message;
        return { error: { file: c.attrs.file ?? pytestFile(name) ?? name, message: text.trim() }, drop: true };
      }
      return undefined;
    case "go":
      if (
        name === "[build failed]" ||
        name === "[setup failed]" ||
        (name === "TestMain" && /\[(build|setup) failed\]/.test(first.text + (first.message ?? "")))
      ) {
        return {
          error: { classname: classname ?? suiteName(c), message: firstLine(first.text) ?? message },
          drop: true,
        };
      }
      return undefined;
    case "surefire": {
      const described = first.type && first.message ? `${first.type}: ${firstLine(first.message)}` : message;
      // A class whose @BeforeClass (or static setup) failed: Surefire names the case after the
      // class, or JUnit's "initializationError"/"classMethod"; its real tests are absent.
      if (name === "initializationError" || name === "classMethod" || (classname !== undefined && name === classname)) {
        return { error: { ...(classname ? { classname } : {}), message: described }, drop: true };
      }
      if (first.type && JAVA_LOAD_FAILURE.test(first.type)) {
        return { error: { ...(classname ? { classname } : {}), message: described }, drop: false };
      }
      return undefined;
    }
    default:
      // Runners that report a broken file name a placeholder case after the file's path.
      return /[\\/]/.test(name) && looksLikeFile(name)
        ? { error: { file: c.attrs.file ?? name, message }, drop: true }
        : undefined;
  }
}

export interface Classified {
  tests: TestCaseResult[];
  loadErrors: LoadError[];
}

export function classifyReport(flavour: Flavour, raw: RawReport): Classified {
  const tests: TestCaseResult[] = [];
  const loadErrors: LoadError[] = [];
  let failedCases = 0;

  for (const suite of raw.suites) {
    for (const p of suite.problems) {
      const file = suite.attrs.file ?? (looksLikeFile(suite.attrs.name) ? suite.attrs.name : undefined);
      loadErrors.push({
        ...(file ? { file } : suite.attrs.name ? { classname: suite.attrs.name } : {}),
        message: firstLine(p.message) ?? firstLine(p.text) ?? "the suite failed before its tests ran",
      });
    }
  }

  for (const c of raw.cases) {
    const file = fileOf(flavour, c);
    const failed = c.failures.length + c.errors.length > 0;
    if (failed) failedCases++;
    const load = failed ? loadFailure(flavour, c) : undefined;
    if (load) loadErrors.push(load.error);
    if (load?.drop) continue;

    const base: TestCaseResult = { name: c.attrs.name ?? "", outcome: "passed" };
    if (file !== undefined) base.file = file;
    if (c.attrs.classname !== undefined) base.classname = c.attrs.classname;
    const durationMs = seconds(c.attrs.time);
    if (durationMs !== undefined) base.durationMs = durationMs;
    if (flavour === "node" && c.suites.length) base.suites = c.suites.map((s) => s.attrs.name ?? "");
    const error = c.errors[0];
    const failure = c.failures[0];
    if (error) {
      const type = error.type?.trim() || leadingErrorName(error.message) || leadingErrorName(error.text);
      tests.push(
        Object.assign(base, { outcome: "failed-error" as const }, messageOf(flavour, error), type ? { type } : {}),
      );
    } else if (failure) {
      tests.push(Object.assign(base, classifyFailure(flavour, failure), messageOf(flavour, failure)));
    } else if (c.skipped) {
      tests.push(Object.assign(base, { outcome: "skipped" as const }, messageOf(flavour, c.skipped)));
    } else {
      tests.push(base);
    }
  }

  const unattributed = declaredFailures(raw) - failedCases - raw.suites.reduce((n, s) => n + s.problems.length, 0);
  if (unattributed > 0) {
    loadErrors.push({
      message:
        `the report counts ${unattributed} failure(s) or error(s) that no test case carries: ` +
        "a file or package probably failed to load or build (see the test command's output)",
    });
  }
  const folded =
    flavour === "vitest" ? foldVitestSuiteFailures(tests) : flavour === "pytest" ? foldPytestTeardowns(tests) : tests;
  return { tests: folded, loadErrors: dedupe(loadErrors) };
}

/** pytest's message for an error in a fixture's setup or teardown, rather than in the test. */
const PYTEST_FIXTURE_ERROR = /^failed on (setup|teardown) with /;

/**
 * pytest writes a test whose call failed and whose fixture's teardown then raised as two cases of
 * the same name: the failure, and the teardown error. They are one test, and it ended in an error
 * (its teardown broke), so the pair becomes one failed-error case that says both.
 */
function foldPytestTeardowns(tests: TestCaseResult[]): TestCaseResult[] {
  const key = (t: TestCaseResult) => `${t.classname ?? ""}\u0000${t.name}`;
  const first = new Map<string, number>();
  const out: TestCaseResult[] = [];
  for (const t of tests) {
    const at = first.get(key(t));
    const earlier = at === undefined ? undefined : out[at];
    const phase = PYTEST_FIXTURE_ERROR.exec(t.message ?? "")?.[1];
    if (at !== undefined && earlier && t.outcome === "failed-error" && phase) {
      const itself =
        earlier.outcome === "passed"
          ? "passed"
          : `ended ${earlier.outcome}${earlier.message ? ` (${earlier.message})` : ""}`;
      out[at] = {
        ...earlier,
        outcome: "failed-error",
        type: `${phase} error`,
        message: `${t.message}; the test itself ${itself}`,
      };
      continue;
    }
    if (at === undefined) first.set(key(t), out.length);
    out.push(t);
  }
  return out;
}

/** Go's runner lines ("=== RUN", "--- FAIL") and its bare "Failed" say nothing: skip them. */
const GO_NOISE = /^(=== (RUN|PAUSE|CONT|NAME)|--- (FAIL|SKIP|PASS))\b/;

function messageOf(flavour: Flavour, p: RawProblem): { message?: string } {
  let line: string | undefined;
  if (flavour === "go") {
    line = `${p.text}\n${p.message ?? ""}`
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "" && l !== "Failed" && !GO_NOISE.test(l));
  } else {
    line = firstLine(p.message) ?? firstLine(p.text);
  }
  return line ? { message: line } : {};
}

/** One entry per file or class: runners may write a broken file more than once. */
function dedupe(errors: LoadError[]): LoadError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = e.file ?? e.classname ?? `#${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** failures + errors the report declares at its top level (summed over suites when unwrapped). */
function declaredFailures(raw: RawReport): number {
  const count = (attrs: Record<string, string>) =>
    (Number.parseInt(attrs.failures ?? "0", 10) || 0) + (Number.parseInt(attrs.errors ?? "0", 10) || 0);
  if (raw.wrapped && (raw.rootAttrs.failures !== undefined || raw.rootAttrs.errors !== undefined))
    return count(raw.rootAttrs);
  return raw.suites.filter((s) => s.depth === 0).reduce((n, s) => n + count(s.attrs), 0);
}

/**
 * vitest reports a describe block whose beforeAll/afterAll threw as one more failed case named
 * after the block ("stock"), and the tests inside it as skipped ("stock > files stock"). Those
 * tests did not run because of an error, so they are failed-error with the hook's reason; the
 * block's own case is not a test.
 */
function foldVitestSuiteFailures(tests: TestCaseResult[]): TestCaseResult[] {
  // The failed cases of each file, by name: only those can be a block. Then one pass over the
  // tests of files that have one, to see which failed case encloses another test, and one to fold:
  // linear in the report, however many failures it has.
  const failedByFile = new Map<string | undefined, Map<string, TestCaseResult>>();
  for (const t of tests) {
    if (t.outcome !== "failed-assertion" && t.outcome !== "failed-error") continue;
    const failed = failedByFile.get(t.file) ?? new Map<string, TestCaseResult>();
    failedByFile.set(t.file, failed);
    if (!failed.has(t.name)) failed.set(t.name, t);
  }
  const blocksByFile = new Map<string | undefined, Map<string, TestCaseResult>>();
  for (const t of tests) {
    const failed = failedByFile.get(t.file);
    if (!failed) continue;
    for (const name of enclosingBlocks(t.name)) {
      const block = failed.get(name);
      if (!block) continue;
      const blocks = blocksByFile.get(t.file) ?? new Map<string, TestCaseResult>();
      blocksByFile.set(t.file, blocks);
      blocks.set(name, block);
    }
  }
  if (blocksByFile.size === 0) return tests;
  const isBlock = new Set([...blocksByFile.values()].flatMap((blocks) => [...blocks.values()]));
  return tests
    .filter((t) => !isBlock.has(t))
    .map((t) => {
      const blocks = blocksByFile.get(t.file);
      if (t.outcome === "failed-assertion" || !blocks) return t;
      const block = outermostFailedBlock(blocks, t);
      if (!block) return t;
      return {
        ...t,
        outcome: "failed-error" as const,
        message: `a beforeAll/afterAll hook of "${block.name}" failed: ${block.message ?? "no message"}`,
        ...(block.type ? { type: block.type } : {}),
      };
    });
}

/** The outermost failed block of its file that encloses a test, if any. */
function outermostFailedBlock(blocks: Map<string, TestCaseResult>, t: TestCaseResult): TestCaseResult | undefined {
  for (const name of enclosingBlocks(t.name)) {
    const block = blocks.get(name);
    if (block) return block;
  }
  return undefined;
}

/** The describe blocks a vitest title sits in, outermost first: "a > b > t" → "a", "a > b". */
function* enclosingBlocks(title: string): Generator<string> {
  for (let at = title.indexOf(" > "); at !== -1; at = title.indexOf(" > ", at + 3)) yield title.slice(0, at);
}
