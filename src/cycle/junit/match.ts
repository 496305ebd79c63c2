import { z } from "zod";
import type { Flavour, JUnitReport, LoadError, TestCaseResult } from "./types.js";

/**
 * Finds a test-list entry (a repo-relative file and the exact title) in a parsed report. Each
 * runner writes the file and the title its own way:
 * - vitest: classname is the file (relative to vitest's root), the name joins describe blocks
 *   with " > ";
 * - jest-junit: the name joins describe blocks and the title with spaces; the file only with
 *   `addFileAttribute` (or suiteNameTemplate "{filepath}");
 * - mocha-junit-reporter: the name is the full title (spaces); the suite carries the file;
 * - node: the bare title inside nested suites; no file before node 22;
 * - pytest: classname is the dotted module path (then classes), the name the function;
 * - Go: classname is the package import path, the name "TestX/sub_test" (spaces become "_");
 * - Surefire: classname is the class, the name the method.
 * Paths match when one ends with the other at a folder boundary (runners write them relative to
 * their own root, or absolute). A title that matches more than one test is ambiguous, never a guess.
 */

const TestQuerySchema = z.object({
  file: z.string().trim().min(1, "the test file is empty"),
  title: z.string().trim().min(1, "the test title is empty"),
});
export type TestQuery = z.infer<typeof TestQuerySchema>;

export type TestLocation =
  | { status: "found"; test: TestCaseResult }
  /** The file failed to load, so the runner never ran the test: it counts as failed-error. */
  | { status: "not-loaded"; test: TestCaseResult; loadError: LoadError }
  | { status: "ambiguous"; candidates: TestCaseResult[] }
  /**
   * Not there. `nearest`: the report's titles closest to the one wanted (in the same file when the
   * report says files), so a person sees what the runner wrote instead; `hint`: the runner setting
   * that likely caused the mismatch.
   */
  | { status: "missing"; nearest: string[]; hint?: string };

type ReportLike = Pick<JUnitReport, "tests" | "loadErrors"> & { flavour?: Flavour };

/** Whitespace runs as one space, ends trimmed (most titles have none to squash: skip the regex then). */
const squash = (s: string) =>
  /[^\S ]| {2}/.test(s) || s.startsWith(" ") || s.endsWith(" ") ? s.trim().replace(/\s+/g, " ") : s;

function normalisePath(path: string): string {
  return path
    .trim()
    .replace(/^file:\/\//, "")
    .replace(/\\/g, "/")
    .replace(/\/{2,}/g, "/")
    .replace(/^(\.\/)+/, "");
}

/** True when one path ends with the other at a folder boundary ("/abs/repo/test/a.ts" ~ "test/a.ts"). */
function samePath(a: string, b: string): boolean {
  const x = normalisePath(a);
  const y = normalisePath(b);
  return x === y || x.endsWith(`/${y}`) || y.endsWith(`/${x}`);
}

const withoutExtension = (path: string) => normalisePath(path).replace(/\.[^./]+$/, "");

/**
 * Dotted classnames (pytest modules, Java classes): some leading part of the classname must be
 * the file's dotted path or a tail of it ("shop.CartTest" ~ "src/test/java/shop/CartTest.java",
 * "tests.test_cart.TestCart" ~ "tests/test_cart.py").
 */
function dottedClassMatches(classname: string, file: string): boolean {
  // Compare segment by segment: a dot inside a file name ("cart.test.js") is not a package dot.
  const wanted = withoutExtension(file).split("/");
  const parts = classname.replace(/\$.*$/, "").split(".");
  for (let k = parts.length; k >= 1; k--) {
    const prefix = parts.slice(0, k);
    if (prefix.length <= wanted.length && prefix.every((part, i) => part === wanted[wanted.length - prefix.length + i]))
      return true;
  }
  return false;
}

/** Go: the classname is the package import path; the file's folder must be its tail. */
function goPackageMatches(classname: string, file: string): boolean {
  const folder = normalisePath(file).split("/").slice(0, -1).join("/");
  if (folder === "") return true; // the module's root package: its import path is the module path
  return classname === folder || classname.endsWith(`/${folder}`);
}

type FileMatch = "confirmed" | "unknown" | "no";

function fileMatch(flavour: Flavour, test: TestCaseResult, file: string): FileMatch {
  const classname = test.classname ?? "";
  const viaClass = () => {
    if (!classname) return false;
    if (flavour === "go") return goPackageMatches(classname, file);
    if (flavour === "pytest" || flavour === "surefire") return dottedClassMatches(classname, file);
    if (flavour === "unknown") return samePath(classname, file) || dottedClassMatches(classname, file);
    return false;
  };
  if (test.file !== undefined && samePath(test.file, file)) return "confirmed";
  // pytest's file is derived from the classname; trust the classname itself first.
  if (viaClass()) return "confirmed";
  if (test.file !== undefined) return "no";
  // Surefire 3 with display names writes the class's display name (no package, maybe spaces)
  // where it otherwise writes the qualified class: the report cannot say the file then.
  if (flavour === "surefire" && !classname.includes(".")) return "unknown";
  if (flavour === "go" || flavour === "pytest" || flavour === "surefire") return classname ? "no" : "unknown";
  return "unknown";
}

/** The forms under which the runner may have written this title. */
function wantedTitles(flavour: Flavour, title: string, file: string): Set<string> {
  const t = squash(title);
  const forms = new Set([t]);
  const bySeparators = t.split(/\s+[>›]\s+/);
  if (flavour === "jest" || flavour === "mocha" || flavour === "unknown") forms.add(bySeparators.join(" "));
  if (flavour === "vitest" || flavour === "node" || flavour === "unknown") forms.add(bySeparators.join(" > "));
  if (flavour === "go" || flavour === "unknown") forms.add(t.replace(/ /g, "_"));
  if (flavour === "pytest" || flavour === "unknown") {
    // A pytest node id ("tests/test_cart.py::TestCart::test_x") as the title, its path the file's.
    const [nodeFile, ...rest] = t.split("::");
    if (nodeFile && rest.length && samePath(nodeFile, file)) forms.add(rest.join("::"));
  }
  if (flavour === "surefire" || flavour === "unknown") forms.add(t.replace(/\(\)$/, ""));
  if (flavour === "pytest" || flavour === "unknown") {
    // pytest writes a parameter id that is not ASCII escaped ("Größe" as "Gr\xf6\xdfe").
    for (const form of [...forms]) forms.add(pytestEscaped(form));
  }
  return forms;
}

/** A title as pytest writes its non-ASCII characters: \xNN, \uNNNN or \UNNNNNNNN, as Python's ascii escaping. */
function pytestEscaped(title: string): string {
  let out = "";
  for (const char of title) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) out += char;
    else if (code < 0x100) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return out;
}

/** pytest's escapes read back ("Gr\xf6\xdfe" → "Größe"), so the runner's form matches too. */
const pytestUnescaped = (name: string) =>
  name.replace(/\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8}))/g, (_, x, u, big) =>
    String.fromCodePoint(Number.parseInt(x ?? u ?? big, 16)),
  );

/** node 20's junit reporter escapes a quote twice: its report reads "&quot;" where the title has '"'. */
const nodeUnescaped = (name: string) => name.replace(/&quot;/g, '"');

function testTitles(flavour: Flavour, test: TestCaseResult): string[] {
  const name = squash(test.name);
  const titles = [name];
  if (test.suites?.length) titles.push([...test.suites, test.name].map(squash).join(" > "));
  const classname = test.classname ?? "";
  if ((flavour === "jest" || flavour === "mocha") && classname.trim() !== "") {
    // Title templates: jest-junit's titleTemplate "{title}" (and mocha's xunit reporter) write the
    // bare title as the name and the describe blocks as the classname, or (jest-junit's default
    // classNameTemplate) the blocks and the title as the classname.
    const blocks = squash(classname);
    if (blocks.endsWith(name) && blocks !== name) titles.push(blocks);
    else if (blocks !== name) titles.push(`${blocks} ${name}`);
  }
  if (flavour === "node" && titles.some((title) => title.includes("&quot;"))) titles.push(...titles.map(nodeUnescaped));
  if ((flavour === "pytest" || flavour === "unknown") && name.includes("\\")) titles.push(pytestUnescaped(name));
  if ((flavour === "pytest" || flavour === "unknown") && classname) {
    const classes = classname.split(".").filter((part) => /^[A-Z]/.test(part));
    if (classes.length) titles.push([...classes, name].join("::"));
  }
  if ((flavour === "surefire" || flavour === "unknown") && classname) {
    const simple = classname.replace(/\$.*$/, "").split(".").pop();
    const method = name.replace(/\(\)$/, "");
    titles.push(method, `${simple}.${method}`, `${simple}#${method}`);
    // A nested class (JUnit 5 @Nested): "CartTest$Checkout" → "Checkout.paysByCard" too.
    const inner = classname.includes("$") ? classname.split("$").pop() : undefined;
    if (inner) titles.push(`${inner}.${method}`, `${simple}.${inner}.${method}`);
  }
  return titles;
}

function loadErrorFor(flavour: Flavour, report: ReportLike, file: string): LoadError | undefined {
  return report.loadErrors.find((error) => {
    if (error.file !== undefined) return samePath(error.file, file);
    if (error.classname === undefined) return false;
    if (flavour === "go") return goPackageMatches(error.classname, file);
    return dottedClassMatches(error.classname, file);
  });
}

/** A title's tests: one position (nearly every title), or several. */
type Positions = number | number[];

const indexes = new WeakMap<readonly TestCaseResult[], { flavour: Flavour; byTitle: Map<string, Positions> }>();

/**
 * Every form of every test's title, to the tests' positions: built once per report, so finding a
 * hundred tests in a report of two hundred thousand costs one pass, not a hundred.
 */
function titleIndex(report: ReportLike, flavour: Flavour): Map<string, Positions> {
  const cached = indexes.get(report.tests);
  if (cached?.flavour === flavour) return cached.byTitle;
  const byTitle = new Map<string, Positions>();
  report.tests.forEach((test, at) => {
    for (const title of testTitles(flavour, test)) {
      const positions = byTitle.get(title);
      if (positions === undefined) byTitle.set(title, at);
      else if (typeof positions === "number") {
        if (positions !== at) byTitle.set(title, [positions, at]);
      } else if (positions[positions.length - 1] !== at) positions.push(at);
    }
  });
  indexes.set(report.tests, { flavour, byTitle });
  return byTitle;
}

const positionsOf = (positions: Positions | undefined): readonly number[] =>
  positions === undefined ? [] : typeof positions === "number" ? [positions] : positions;

/** Where a test-list entry is in the report, or why it is not there. */
export function locateTestCase(report: ReportLike, query: TestQuery): TestLocation {
  const { file, title } = TestQuerySchema.parse(query);
  const flavour = report.flavour ?? "unknown";
  const index = titleIndex(report, flavour);
  const matching = new Set<number>();
  for (const wanted of wantedTitles(flavour, title, file))
    for (const at of positionsOf(index.get(wanted))) matching.add(at);
  return resolve(report, flavour, { file, title }, matching);
}

/**
 * The same for many entries at once (a cycle's tests): one pass over the report that looks every
 * test's titles up among the entries' forms, so a hundred entries in a report of two hundred
 * thousand tests cost one pass and no index of the whole report.
 */
export function locateTestCases(report: ReportLike, queries: readonly TestQuery[]): TestLocation[] {
  const parsed = queries.map((query) => TestQuerySchema.parse(query));
  const flavour = report.flavour ?? "unknown";
  const matching = parsed.map(() => new Set<number>());
  const cached = indexes.get(report.tests);
  if (cached?.flavour === flavour) {
    parsed.forEach(({ file, title }, q) => {
      for (const wanted of wantedTitles(flavour, title, file))
        for (const at of positionsOf(cached.byTitle.get(wanted))) matching[q]!.add(at);
    });
  } else {
    const byForm = new Map<string, number[]>();
    parsed.forEach(({ file, title }, q) => {
      for (const wanted of wantedTitles(flavour, title, file)) {
        const entries = byForm.get(wanted);
        if (entries) entries.push(q);
        else byForm.set(wanted, [q]);
      }
    });
    report.tests.forEach((test, at) => {
      for (const title of testTitles(flavour, test)) for (const q of byForm.get(title) ?? []) matching[q]!.add(at);
    });
  }
  return parsed.map((query, q) => resolve(report, flavour, query, matching[q]!));
}

/** What the tests whose titles match an entry make of it: found, ambiguous, not loaded or missing. */
function resolve(
  report: ReportLike,
  flavour: Flavour,
  { file, title }: TestQuery,
  matching: Set<number>,
): TestLocation {
  const confirmed: TestCaseResult[] = [];
  const unknown: TestCaseResult[] = [];
  for (const at of [...matching].sort((a, b) => a - b)) {
    const test = report.tests[at];
    if (!test) continue;
    const match = fileMatch(flavour, test, file);
    if (match === "confirmed") confirmed.push(test);
    else if (match === "unknown") unknown.push(test);
  }
  // A test the report places in the file wins over one whose file the report does not say.
  const candidates = confirmed.length ? confirmed : unknown;
  const [only] = candidates;
  if (candidates.length === 1 && only) return { status: "found", test: only };
  if (candidates.length > 1) return { status: "ambiguous", candidates };

  const loadError = loadErrorFor(flavour, report, file);
  if (loadError) {
    return {
      status: "not-loaded",
      loadError,
      test: {
        file,
        name: title,
        outcome: "failed-error",
        type: "load error",
        message: `${file} failed before its tests ran (it did not load, compile or set up), so this test never ran: ${loadError.message}`,
      },
    };
  }
  const nearest = nearestTitles(report, flavour, { file, title });
  const hint = missingHint(flavour, title, nearest);
  return { status: "missing", nearest, ...(hint ? { hint } : {}) };
}

/** How many titles a near-miss names, and how many tests it compares at most. */
const NEAREST = 3;
const NEAREST_SCAN = 5_000;

/** A title reduced to what a person means by it: case, separators and punctuation left out. */
const gist = (title: string) =>
  title
    .toLowerCase()
    .replace(/[\s>›:_#.()[\]"'`-]+/g, " ")
    .trim();

/** Levenshtein distance over the gists (short strings, a few thousand pairs at most). */
function distance(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The titles the report has that come closest to a missing one: among the tests it places in the
 * file, or (when it says no file) among all, the few nearest by edit distance of their gists.
 */
function nearestTitles(report: ReportLike, flavour: Flavour, { file, title }: TestQuery): string[] {
  const inFile: TestCaseResult[] = [];
  const unplaced: TestCaseResult[] = [];
  for (const test of report.tests) {
    const match = fileMatch(flavour, test, file);
    if (match === "confirmed") inFile.push(test);
    else if (match === "unknown" && unplaced.length < NEAREST_SCAN) unplaced.push(test);
    if (inFile.length >= NEAREST_SCAN) break;
  }
  const pool = inFile.length ? inFile : unplaced;
  const wanted = gist(title);
  // Near means within half the title's length of edits: anything further is another test. A title
  // that quotes the wanted test's own title (mocha's '"before all" hook for "…"') is near too.
  const near = Math.max(3, Math.ceil(wanted.length / 2));
  const own = gist(title.split(/\s+[>›]\s+/).pop() ?? title);
  const scored = new Map<string, number>();
  for (const test of pool) {
    const shown = test.suites?.length ? [...test.suites, test.name].join(" > ") : test.name;
    const candidates = [shown, ...testTitles(flavour, test)].map(gist);
    let best = Math.min(...candidates.map((c) => distance(wanted, c)));
    if (best > near && own.length >= 8 && candidates.some((c) => c.includes(own))) best = near;
    const name = squash(shown);
    scored.set(name, Math.min(best, scored.get(name) ?? Infinity));
  }
  return [...scored]
    .filter(([, score]) => score <= near)
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, NEAREST)
    .map(([name]) => name);
}

/** The runner setting that likely explains a missing title, when one does. */
function missingHint(flavour: Flavour, title: string, nearest: string[]): string | undefined {
  if (flavour === "unknown") {
    return "the report's runner was not recognised, so only the generic title forms were tried: name it with runner: in .github/consort.yml";
  }
  if (flavour === "surefire" && /\s/.test(title.trim()) && nearest.length > 0) {
    return (
      "Surefire writes the test method's name, not its @DisplayName: write the method name in the test list, " +
      "or make Surefire write display names (statelessTestsetReporter with usePhrasedTestCaseMethodName set to true, Surefire 3)"
    );
  }
  if (flavour === "surefire" && !/\s/.test(title.trim()) && nearest.some((n) => /\s/.test(n))) {
    return "this Surefire report carries display names (usePhrasedTestCaseMethodName): write the test's @DisplayName in the test list";
  }
  if (flavour === "jest" && nearest.some((n) => squash(title).endsWith(n) && n !== squash(title))) {
    return "jest-junit wrote the title without its describe blocks: keep jest-junit's default titleTemplate and classNameTemplate, or write the bare title in the test list";
  }
  return undefined;
}

/**
 * The result of a test-list entry, or undefined when the report does not have it (or has more
 * than one test it could be). A test whose file failed to load comes back as failed-error.
 */
export function findTestCase(report: ReportLike, query: TestQuery): TestCaseResult | undefined {
  const location = locateTestCase(report, query);
  return location.status === "found" || location.status === "not-loaded" ? location.test : undefined;
}
