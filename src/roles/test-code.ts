/**
 * Test code in production code (issue 13 item 6): the driver's code must not reach into the test
 * run. Code under `paths.code` that imports a test framework, or reads a variable only a test run
 * sets, can make a test pass from inside (mock what the test checks, answer differently under
 * test). This is a textual rule on what the commit adds; it cannot see every in-process trick (an
 * alias, a computed import), which is why the reviewed diff at the gates stays the backstop.
 */

/** Test frameworks and assertion libraries, as module names (a subpath counts too). */
const TEST_MODULES = [
  "vitest",
  "@vitest/*",
  "jest",
  "@jest/*",
  "mocha",
  "chai",
  "node:test",
  "ava",
  "tap",
  "uvu",
  "jasmine",
  "sinon",
  "@playwright/test",
];
const PYTHON_TEST_MODULES = ["pytest", "unittest", "nose", "nose2", "hypothesis"];
/** Variables only a test run (or the cycle) sets: reading them lets code tell it is under test. */
const TEST_RUN_VARIABLES =
  /\b(CONSORT_[A-Z0-9_]+|VITEST(?:_[A-Z0-9_]+)?|JEST_WORKER_ID|NODE_TEST_CONTEXT|PYTEST_CURRENT_TEST)\b/;

const moduleName = TEST_MODULES.map((m) =>
  m.endsWith("/*") ? `${m.slice(0, -2).replace("/", "\\/")}\\/[^"'\`/]+` : m.replace("/", "\\/"),
).join("|");
const JS_IMPORT = new RegExp(
  `(?:\\bfrom\\s*|\\bimport\\s*\\(\\s*|\\brequire\\s*\\(\\s*|^\\s*import\\s+)["'\`](${moduleName})(?:\\/[^"'\`]*)?["'\`]`,
  "m",
);
const PY_IMPORT = new RegExp(`^\\s*(?:import|from)\\s+(${PYTHON_TEST_MODULES.join("|")})\\b`, "m");
const IN_SOURCE_TESTS = /\bimport\.meta\.vitest\b/;

/** Why this production file is test code, or undefined when the rule sees nothing. */
export function testCodeIn(path: string, text: string): string | undefined {
  const imported = JS_IMPORT.exec(text)?.[1] ?? PY_IMPORT.exec(text)?.[1];
  if (imported)
    return `${path} imports the test framework "${imported}" into production code: code under paths.code must not reach into the test run (it could make a test pass from inside); keep test helpers under paths.tests`;
  if (IN_SOURCE_TESTS.test(text))
    return `${path} holds in-source tests (import.meta.vitest) in production code: tests belong under paths.tests, where they are frozen`;
  const variable = TEST_RUN_VARIABLES.exec(text)?.[1];
  if (variable)
    return `${path} reads ${variable}, a variable of the test run, in production code: code that behaves differently under test passes tests it does not pass in production`;
  return undefined;
}

/** Texts that complete a match left open at a window's end: a module after `from`, a Python module after `import`, a closing quote. */
const OPEN_AT_END = ['\n"vitest"', "\npytest", '\n"'];
/** Texts that open a match a window's start could complete: a bare `from`, `import(`, `require(`, an `import` at a line's start. */
const OPEN_BEFORE_START = ["from ", "import(", "require(", "import "];
const QUOTE = /["'`]/;

/**
 * The text this rule can judge instead of a file's whole text, from the diff GitHub's compare
 * gives of the commit that changed it (its `patch`): each hunk's new side (context and added lines),
 * as the file now reads there. Undefined when the diff cannot show every match the whole file would:
 * a hunk whose edges a match could cross (after a `from`, inside a module path whose quote closes
 * beyond the hunk, or with no quote above its first added line, where a module path opened earlier
 * could still be open). The rest of the file is as the rule already judged it when it was written.
 */
export function judgedTextFromPatch(patch: string): string | undefined {
  const windows: string[] = [];
  let lines: string[] | undefined;
  let startsAtTop = false;
  let quoteBeforeAdded = false;
  let added = false;
  const close = (): boolean => {
    if (!lines) return true;
    const text = lines.join("\n");
    const judged = testCodeIn("", text) !== undefined;
    if (!judged) {
      if (!startsAtTop && (!quoteBeforeAdded || OPEN_BEFORE_START.some((p) => testCodeIn("", p + text) !== undefined)))
        return false;
      if (OPEN_AT_END.some((s) => testCodeIn("", text + s) !== undefined)) return false;
    }
    windows.push(text);
    return true;
  };
  for (const line of patch.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      if (!close()) return undefined;
      lines = [];
      startsAtTop = hunk[1] === "1" || hunk[1] === "0";
      quoteBeforeAdded = false;
      added = false;
    } else if (!lines) return undefined;
    else if (line.startsWith("+") || line.startsWith(" ")) {
      if (line.startsWith("+")) added = true;
      else if (!added && QUOTE.test(line)) quoteBeforeAdded = true;
      lines.push(line.slice(1));
    } else if (!line.startsWith("-") && !line.startsWith("\\") && line !== "") return undefined;
  }
  if (!lines || !close()) return undefined;
  return windows.join("\n");
}
