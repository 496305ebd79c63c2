import { z } from "zod";

/** The test runners whose JUnit reports the cycle understands (docs/ARCHITECTURE.md, Cycles). */
export const FLAVOURS = ["vitest", "jest", "mocha", "node", "pytest", "go", "surefire", "unknown"] as const;
export const FlavourSchema = z.enum(FLAVOURS);
export type Flavour = z.infer<typeof FlavourSchema>;

/**
 * The test runners the cycle supports (docs/ARCHITECTURE.md, Cycles), one row each: how to make it write a report the
 * cycle reads right, how the test list names a test, the settings that matter, and what of the
 * runner's configuration is frozen at the test-list gate. One table, read by the README's runner
 * section (`npm run docs`), by the freezing rule (src/gates/freeze.ts) and by the tests.
 */

/** A part of a file that configures a runner: the whole file, or one section of it. */
type ConfigPart =
  | { kind: "whole" }
  /** INI-style `[section]` blocks (pytest.ini, tox.ini, setup.cfg) or TOML tables (pyproject.toml). */
  | { kind: "section"; sections: readonly string[] }
  /** A Maven `<plugin>` block, by its artifactId. */
  | { kind: "maven-plugin"; artifactId: string };

/** How a dependency file is read: npm's, yarn's and pnpm's lockfiles, and Python's files. */
export type DependencyFormat =
  "package-lock" | "yarn-lock" | "pnpm-lock" | "pyproject" | "requirements" | "python-lock";

/** Where a runner's packages come from: its dependency entries are read in that ecosystem's files. */
type Ecosystem = "npm" | "python" | "go" | "maven";

/**
 * The files, at the repository's root or in any folder below it, that say which version of a
 * package is installed and from where. The runners' own entries in them are frozen at the
 * test-list gate (src/gates/runner-deps.ts reads them); every other entry stays the driver's.
 */
export const DEPENDENCY_FILES: ReadonlyArray<{ path: string; format: DependencyFormat; ecosystem: Ecosystem }> = [
  { path: "package-lock.json", format: "package-lock", ecosystem: "npm" },
  { path: "npm-shrinkwrap.json", format: "package-lock", ecosystem: "npm" },
  { path: "yarn.lock", format: "yarn-lock", ecosystem: "npm" },
  { path: "pnpm-lock.yaml", format: "pnpm-lock", ecosystem: "npm" },
  { path: "pyproject.toml", format: "pyproject", ecosystem: "python" },
  { path: "requirements*.txt", format: "requirements", ecosystem: "python" },
  { path: "requirements/*.txt", format: "requirements", ecosystem: "python" },
  { path: "constraints*.txt", format: "requirements", ecosystem: "python" },
  { path: "poetry.lock", format: "python-lock", ecosystem: "python" },
  { path: "uv.lock", format: "python-lock", ecosystem: "python" },
  { path: "pdm.lock", format: "python-lock", ecosystem: "python" },
];

interface RunnerConfigFile {
  /** A glob from the repository root. */
  path: string;
  part: ConfigPart;
}

export interface RunnerInfo {
  runner: Exclude<Flavour, "unknown">;
  title: string;
  /** The test command that writes a report the cycle reads right. */
  command: string;
  /** The `junit` setting for that command. */
  junit: string;
  /** How the test list's `title` names a test (any of these forms is matched). */
  titles: string;
  /** The runner's settings the cycle needs, and when `runner:` must name it in .github/consort.yml. */
  settings: string;
  /** How its report tells a failed assertion from an error (what the parser relies on). */
  failures: string;
  /** What its report shows of a test file that does not load. */
  unloadable: string;
  /** Its configuration files, frozen at the test-list gate. */
  configFiles: readonly RunnerConfigFile[];
  /** Its keys at the top of package.json, frozen at the test-list gate. */
  packageKeys: readonly string[];
  /**
   * Its own packages (names, or a prefix ending in `*`; Python names as PEP 503 normalises them):
   * their dependency entries are frozen at the test-list gate, in package.json and in the
   * dependency files of its ecosystem.
   */
  packages: readonly string[];
  ecosystem: Ecosystem;
}

const whole = (...paths: string[]): RunnerConfigFile[] => paths.map((path) => ({ path, part: { kind: "whole" } }));
const SCRIPT_EXTENSIONS = "{js,cjs,mjs,ts,cts,mts,json}";

export const RUNNERS: readonly RunnerInfo[] = [
  {
    runner: "vitest",
    title: "vitest",
    command: "`vitest run --reporter=junit --outputFile=junit.xml`",
    junit: "`junit.xml`",
    titles: "describe blocks and title joined by ` > `",
    settings: "none; its report names itself",
    failures: "`type` (AssertionError vs TypeError…)",
    unloadable: "one case named after the file: a load error. A throwing `beforeAll` fails its block's tests as errors",
    configFiles: whole(
      `vitest.config.${SCRIPT_EXTENSIONS}`,
      `vite.config.${SCRIPT_EXTENSIONS}`,
      `vitest.workspace.${SCRIPT_EXTENSIONS}`,
    ),
    packageKeys: [],
    packages: ["vitest", "@vitest/*"],
    ecosystem: "npm",
  },
  {
    runner: "jest",
    title: "jest + jest-junit",
    command:
      "`jest --ci --reporters=default --reporters=jest-junit` with `JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true` (the cycle sets `JEST_JUNIT_ADD_FILE_ATTRIBUTE=true` itself)",
    junit: "`junit.xml` (jest-junit's `outputDirectory`/`outputName`)",
    titles:
      "describe blocks and title joined by spaces or ` > `; a `titleTemplate` of `{title}` is matched through the classname (its blocks joined by the `ancestorSeparator`, ` ` or ` > `)",
    settings:
      "keep stack traces (`noStackTrace` off: without them an error cannot be told from an assertion); `addFileAttribute`, which the cycle turns on (a test whose file the report does not say counts for no entry); `reportTestSuiteErrors` (else a file that does not load leaves its tests missing); `runner: jest` when `suiteName` is renamed",
    failures: "no type: text starting `Error: expect(` is an assertion",
    unloadable: "dropped by default (its tests are missing); with `reportTestSuiteErrors` a load error",
    configFiles: whole(`jest.config.${SCRIPT_EXTENSIONS}`),
    packageKeys: ["jest", "jest-junit"],
    packages: ["jest", "jest-*", "@jest/*", "ts-jest", "babel-jest"],
    ecosystem: "npm",
  },
  {
    runner: "mocha",
    title: "mocha",
    command:
      "`mocha --reporter xunit --reporter-options output=junit.xml` (mocha's own), or `mocha --reporter mocha-junit-reporter --reporter-options includePending=true` with every test in a `describe` block",
    junit: "`junit.xml` (`MOCHA_FILE` or `output`)",
    titles: "full title (describe blocks and title, spaces or ` > `)",
    settings:
      "the xunit reporter writes each test's file; mocha-junit-reporter writes none for a test outside any `describe` block, so such a test counts for no entry; `includePending=true` with mocha-junit-reporter (else skipped tests are dropped and read as missing); `runner: mocha` when `testsuitesTitle` is renamed",
    failures: "`type`",
    unloadable: "mocha aborts and writes no report at all; pending tests are dropped without `includePending`",
    configFiles: whole(".mocharc.{js,cjs,mjs,json,jsonc,yaml,yml}"),
    packageKeys: ["mocha"],
    packages: ["mocha", "mocha-*", "@mochajs/*"],
    ecosystem: "npm",
  },
  {
    runner: "node",
    title: "node --test",
    command: "`node --test --test-reporter=junit --test-reporter-destination=junit.xml`",
    junit: "`junit.xml`",
    titles: "the title, or suites and title joined by ` > ` (quotes as written: Node 20's double escaping is undone)",
    settings:
      "a Node whose junit reporter writes each test's `file` attribute: Node 20's writes none, so on Node 20 a test counts for no entry and the cycle refuses",
    failures: "every failure is `testCodeFailure`: the `cause` decides",
    unloadable: "one top-level case named by the file's path: a load error",
    configFiles: [],
    packageKeys: [],
    packages: [],
    ecosystem: "npm",
  },
  {
    runner: "pytest",
    title: "pytest",
    command: "`pytest --junitxml=junit.xml --continue-on-collection-errors`",
    junit: "`junit.xml`",
    titles:
      "the function name, `Class::name` or the node id; a non-ASCII parameter id as written (`[Größe]`) or as pytest escapes it (`[Gr\\xf6\\xdfe]`)",
    settings:
      "`--continue-on-collection-errors` (else one file that does not import stops the session and every other test is missing)",
    failures: "message prefix (`AssertionError`, `assert …`, `Failed:` vs `TypeError…`)",
    unloadable:
      "a collection error is a load error; without `--continue-on-collection-errors` pytest stops and every other test is missing",
    configFiles: [
      ...whole("pytest.ini", "conftest.py"),
      { path: "pyproject.toml", part: { kind: "section", sections: ["tool.pytest"] } },
      { path: "tox.ini", part: { kind: "section", sections: ["pytest"] } },
      { path: "setup.cfg", part: { kind: "section", sections: ["tool:pytest"] } },
    ],
    packageKeys: [],
    packages: ["pytest", "pytest-*"],
    ecosystem: "python",
  },
  {
    runner: "go",
    title: "Go (gotestsum)",
    command: "`gotestsum --junitfile junit.xml ./...`",
    junit: "`junit.xml`",
    titles: "`TestName` or `TestName/sub test`",
    settings:
      "`go.mod` at the repository's root for a test in the module's root package (its import path is the module's)",
    failures: "a `panic:` or a timeout is an error; `t.Error`/`t.Fatal` are assertions",
    unloadable:
      "gotestsum 1.8 only counts it in `<testsuites errors>`: an unattributed load error; a panic ends the package's run, so later tests are missing",
    configFiles: [],
    packageKeys: [],
    packages: [],
    ecosystem: "go",
  },
  {
    runner: "surefire",
    title: "Maven Surefire",
    command: "`mvn test`",
    junit: "`target/surefire-reports/` (one file per class)",
    titles:
      "the method, `Class.method` or `Class#method`, for a nested class `Outer.Inner.method`, `Inner#method` or `Outer#method` (file: the `.java` path); a JUnit 5 `@DisplayName` only when Surefire 3 writes display names",
    settings:
      "for `@DisplayName` titles, Surefire 3's `statelessTestsetReporter` with `usePhrasedTestCaseMethodName` (Surefire 2 writes method names); with `usePhrasedTestCaseClassName`, `junit` must name the reports folder, whose `TEST-<class>.xml` names say each class",
    failures: "`<failure>` with an assertion type vs `<error>`",
    unloadable:
      "a class that does not compile: no report at all; a throwing static initialiser or `@BeforeClass`: a load error",
    configFiles: [{ path: "pom.xml", part: { kind: "maven-plugin", artifactId: "maven-surefire-plugin" } }],
    packageKeys: [],
    packages: [],
    ecosystem: "maven",
  },
];

/**
 * What the cycle sets in the environment of the project's commands so that each runner's report
 * ties every test to its file (a test counts only in its own file, never by its title alone).
 * jest-junit reads its options from the environment over its configuration. A variable for a
 * runner the project does not use is read by nothing.
 */
export const REPORTER_ENV: Readonly<Record<string, string>> = { JEST_JUNIT_ADD_FILE_ATTRIBUTE: "true" };

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The README's runner section: one row per runner, from RUNNERS. */
export function runnersTable(): string {
  const frozen = (r: RunnerInfo) =>
    [
      ...r.configFiles.map((f) =>
        f.part.kind === "whole"
          ? `\`${f.path}\``
          : f.part.kind === "section"
            ? `\`${f.path}\` [${f.part.sections.join(", ")}…]`
            : `\`${f.path}\`'s ${f.part.artifactId}`,
      ),
      ...r.packageKeys.map((k) => `package.json \`${k}\``),
      ...r.packages.map((p) => `the \`${p}\` dependency`),
    ].join(", ") || "the test command's scripts only";
  const files = (ecosystem: Ecosystem) =>
    DEPENDENCY_FILES.filter((f) => f.ecosystem === ecosystem)
      .map((f) => `\`${f.path}\``)
      .join(", ");
  return [
    "| runner | test command | `junit` | test-list title | settings it needs | frozen at the test-list gate |",
    "|---|---|---|---|---|---|",
    ...RUNNERS.map(
      (r) =>
        `| ${cell(r.title)} | ${cell(r.command)} | ${cell(r.junit)} | ${cell(r.titles)} | ${cell(r.settings)} | ${cell(frozen(r))} |`,
    ),
    "",
    `A runner's dependency entries are frozen in every \`package.json\` and, at the root or in any folder, in ${files("npm")} (npm, yarn and pnpm; for the npm runners, with the packages their commands and \`package.json\` blocks name) and ${files("python")} (pip, Poetry, uv, PDM and Hatch; for pytest, with every option line of a requirements file and the \`pytest11\` entry points). A file committed under \`node_modules/\` for a runner's package is refused.`,
  ].join("\n");
}

/** src/cycle/junit/README.md's table of how each runner's report reads, from RUNNERS. */
export function reportReadingTable(): string {
  return [
    "| runner | assertion vs error | a file that does not load |",
    "|---|---|---|",
    ...RUNNERS.map((r) => `| ${cell(r.title)} | ${cell(r.failures)} | ${cell(r.unloadable)} |`),
  ].join("\n");
}
