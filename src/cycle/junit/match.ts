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
 * A test counts for an entry only when the report ties it to the entry's file: a test of the same
 * title whose file the report does not say (mocha-junit-reporter's top-level tests, node 20,
 * jest-junit without addFileAttribute) may have run from any file, so it never stands in for it.
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
  | {
      status: "missing";
      nearest: string[];
      hint?: string;
      /** Why the report's tests of that very title do not count for the entry (no file, or another's). */
      reason?: string;
    };

type ReportLike = Pick<JUnitReport, "tests" | "loadErrors"> & Partial<Pick<JUnitReport, "flavour" | "goModule">>;

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

const folderOf = (file: string) => normalisePath(file).split("/").slice(0, -1).join("/");

/**
 * Go: the classname is the package import path, the module's path and then the file's folder. A
 * file in a folder matches a path that ends with that folder; a file at the module's root only
 * the module's own path, which only go.mod says ("unknown" without it: any package could be it).
 */
function goPackageMatches(classname: string, file: string, goModule: string | undefined): FileMatch {
  const folder = folderOf(file);
  if (folder === "") return goModule === undefined ? "unknown" : classname === goModule ? "confirmed" : "no";
  return classname === folder || classname.endsWith(`/${folder}`) ? "confirmed" : "no";
}

type FileMatch = "confirmed" | "unknown" | "no";

/** Whether the report ties a test to the entry's file: "unknown" when it says no file for it. */
function fileMatch(report: ReportLike, flavour: Flavour, test: TestCaseResult, file: string): FileMatch {
  const classname = test.classname ?? "";
  if (test.file !== undefined && samePath(test.file, file)) return "confirmed";
  if (flavour === "go") {
    if (classname) return goPackageMatches(classname, file, report.goModule);
    return test.file === undefined ? "unknown" : "no";
  }
  // pytest's file is derived from the classname; trust the classname itself first.
  const dotted = flavour === "pytest" || flavour === "surefire" || flavour === "unknown";
  if (classname && dotted && dottedClassMatches(classname, file)) return "confirmed";
  if (classname && flavour === "unknown" && samePath(classname, file)) return "confirmed";
  if (test.file !== undefined) return "no";
  // Surefire 3 with display names writes the class's display name (no package, maybe spaces)
  // where it otherwise writes the qualified class: then only the report file's name says it.
  if (flavour === "surefire" && !classname.includes(".")) {
    if (test.reportClass === undefined) return "unknown";
    return dottedClassMatches(test.reportClass, file) ? "confirmed" : "no";
  }
  if (flavour === "pytest" || flavour === "surefire") return classname ? "no" : "unknown";
  return "unknown";
}

/** The forms under which the runner may have written this title. */
function wantedTitles(flavour: Flavour, title: string, file: string): Set<string> {
  const t = squash(title);
  const forms = new Set([t]);
  const bySeparators = t.split(/\s+[>›]\s+/);
  if (flavour === "jest" || flavour === "mocha" || flavour === "unknown") forms.add(bySeparators.join(" "));
  // jest-junit's ancestorSeparator " > " with its default templates: the blocks joined by it, the title by a space.
  if (flavour === "jest" && bySeparators.length > 1)
    forms.add(`${bySeparators.slice(0, -1).join(" > ")} ${bySeparators[bySeparators.length - 1]}`);
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
    else if (blocks !== name) {
      // The blocks joined by jest-junit's ancestorSeparator (" " by default, or " > ").
      const spaced = blocks.split(/\s+[>›]\s+/).join(" ");
      titles.push(`${blocks} ${name}`, `${blocks} > ${name}`, `${spaced} ${name}`);
    }
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
    if (inner) titles.push(`${inner}.${method}`, `${inner}#${method}`, `${simple}.${inner}.${method}`);
    // Display names hide the outer class ("Checkout"): the report file's class is it (CartTest).
    const outer = test.reportClass?.split(".").pop();
    if (flavour === "surefire" && outer && outer !== simple)
      titles.push(`${outer}.${method}`, `${outer}#${method}`, `${outer}.${simple}.${method}`);
  }
  return titles;
}

function loadErrorFor(flavour: Flavour, report: ReportLike, file: string): LoadError | undefined {
  return report.loadErrors.find((error) => {
    if (error.file !== undefined) return samePath(error.file, file);
    if (error.classname === undefined) return false;
    if (flavour === "go") return goPackageMatches(error.classname, file, report.goModule) === "confirmed";
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
  const unplaced: TestCaseResult[] = [];
  const elsewhere: TestCaseResult[] = [];
  for (const at of [...matching].sort((a, b) => a - b)) {
    const test = report.tests[at];
    if (!test) continue;
    const match = fileMatch(report, flavour, test, file);
    (match === "confirmed" ? confirmed : match === "unknown" ? unplaced : elsewhere).push(test);
  }
  // Only a test the report places in the file counts: one it does not place may be another file's.
  const [only] = confirmed;
  if (confirmed.length === 1 && only) return { status: "found", test: only };
  if (confirmed.length > 1) return { status: "ambiguous", candidates: confirmed };

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
  if (unplaced.length) {
    const n = unplaced.length;
    return {
      status: "missing",
      nearest: nearestTitles(report, flavour, { file, title }, { placedOnly: true }),
      reason:
        `the report has ${n === 1 ? "a test" : `${n} tests`} of that title but does not say which file ` +
        `${n === 1 ? "it" : "they"} ran from, so none counts for ${file}: it may be another file's, and ${file} may not have run`,
      hint: unplacedHint(flavour, report, file),
    };
  }
  const nearest = nearestTitles(report, flavour, { file, title });
  if (elsewhere.length) {
    const where = [...new Set(elsewhere.map((t) => t.file ?? t.reportClass ?? t.classname ?? "?"))];
    return {
      status: "missing",
      nearest,
      reason: `the report has that title only in ${where.slice(0, 3).join(", ")}${where.length > 3 ? ", ..." : ""}, not in ${file}: a test counts only in its own file`,
    };
  }
  const hint = missingHint(flavour, report, title, nearest);
  return { status: "missing", nearest, ...(hint ? { hint } : {}) };
}

/**
 * The setting that makes the runner's report say each test's file, for a report that did not: the
 * cycle never guesses a test's file from its title.
 */
function unplacedHint(flavour: Flavour, report: ReportLike, file: string): string {
  switch (flavour) {
    case "jest":
      return (
        "jest-junit wrote no file for its tests: keep its addFileAttribute on (the cycle sets JEST_JUNIT_ADD_FILE_ATTRIBUTE=true " +
        "for the test command; a test command that sets it to false, or a jest-junit that predates addFileAttribute, loses it)"
      );
    case "mocha":
      return (
        "mocha-junit-reporter writes no file for a test outside any describe block: put the test in a describe block, " +
        "or use mocha's own reporter (--reporter xunit), which writes every test's file"
      );
    case "node":
      return (
        "this Node's junit reporter writes no file for a test (Node 20's writes none): run the test command on a Node " +
        "whose junit reporter writes each test case's file attribute"
      );
    case "surefire":
      return (
        "this Surefire report names classes by their display names (usePhrasedTestCaseClassName), which say no package: " +
        "set junit: in .github/consort.yml to the reports folder (target/surefire-reports/), whose TEST-<class>.xml names " +
        "say each class, or turn usePhrasedTestCaseClassName off"
      );
    case "go":
      return folderOf(file) === "" && report.goModule === undefined
        ? `${file} is in the module's root package, which the report names by the module's path: the cycle reads that path from go.mod at the checkout's root, and found none there (commit go.mod at the repository's root, or keep the test in a package folder)`
        : "the report names no package for it: run the tests through gotestsum (gotestsum --junitfile junit.xml ./...), which names each test's package";
    case "unknown":
      return "the report's runner was not recognised, so its tests' files could not be read: name it with runner: in .github/consort.yml";
    default:
      return `the report names no file for it: run ${flavour} with the command the README gives, which writes each test's file`;
  }
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
 * file, or (when it places none there, and `placedOnly` is not set) among those it places nowhere,
 * the few nearest by edit distance of their gists.
 */
function nearestTitles(
  report: ReportLike,
  flavour: Flavour,
  { file, title }: TestQuery,
  { placedOnly = false } = {},
): string[] {
  const inFile: TestCaseResult[] = [];
  const unplaced: TestCaseResult[] = [];
  for (const test of report.tests) {
    const match = fileMatch(report, flavour, test, file);
    if (match === "confirmed") inFile.push(test);
    else if (match === "unknown" && unplaced.length < NEAREST_SCAN) unplaced.push(test);
    if (inFile.length >= NEAREST_SCAN) break;
  }
  const pool = inFile.length || placedOnly ? inFile : unplaced;
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

/** Whether a Surefire report carries display names: a name with spaces or "()", or a class with no package. */
const carriesDisplayNames = (report: ReportLike) =>
  report.tests.some((t) => /\s|\(\)$/.test(t.name) || (t.classname !== undefined && !t.classname.includes(".")));

/** The runner setting that likely explains a missing title, when the report in hand shows one. */
function missingHint(flavour: Flavour, report: ReportLike, title: string, nearest: string[]): string | undefined {
  if (flavour === "unknown") {
    return "the report's runner was not recognised, so only the generic title forms were tried: name it with runner: in .github/consort.yml";
  }
  if (flavour === "surefire" && nearest.length > 0 && !carriesDisplayNames(report)) {
    if (/\s/.test(title.trim()))
      return (
        "Surefire writes the test method's name, not its @DisplayName: write the method name in the test list, " +
        "or make Surefire write display names (statelessTestsetReporter with usePhrasedTestCaseMethodName set to true, Surefire 3)"
      );
  }
  if (flavour === "surefire" && !/\s/.test(title.trim()) && nearest.some((n) => /\s/.test(n))) {
    return "this Surefire report carries display names (usePhrasedTestCaseMethodName): write the test's @DisplayName in the test list";
  }
  if (flavour === "jest") {
    const wanted = squash(title);
    const bare = nearest.find((n) => wanted.endsWith(n) && n !== wanted);
    if (bare === undefined) return undefined;
    const [outermost = ""] = wanted
      .slice(0, -bare.length)
      .trim()
      .split(/\s+[>›]\s+/);
    const carried =
      outermost !== "" &&
      report.tests.some((t) => squash(t.name) === bare && squash(t.classname ?? "").includes(outermost));
    return carried
      ? 'jest-junit wrote the describe blocks into the classname with an ancestorSeparator the cycle does not read: set ancestorSeparator to " " or " > ", or write the title as the report has it'
      : "jest-junit wrote the title without its describe blocks: keep jest-junit's default titleTemplate and classNameTemplate, or write the bare title in the test list";
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
