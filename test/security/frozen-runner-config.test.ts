import { describe, expect, it } from "vitest";
import type { PushedCommit } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";
import type { TrackSim } from "../orchestrator/helpers/track.js";

/**
 * Which test passes is decided by the runner's configuration as much as by the tests. A driver at
 * GREEN seeking a shortcut changes what `npm test` runs, points the runner's own package at a fake,
 * or rewrites its configuration block: each is refused by name and withdraws the test-list gate.
 * Other dependencies stay the driver's to change.
 */

const PACKAGE = {
  name: "shop",
  scripts: { test: "npm run unit", unit: "vitest run --reporter=junit --outputFile=junit.xml", build: "tsc" },
  dependencies: { pg: "^8.0.0" },
  devDependencies: { vitest: "~4.1", typescript: "~5.9" },
  jest: { testEnvironment: "node" },
};
const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function atGreen(paths?: { code: string[] }, test = "npm test", stage: "green" | "refactor" = "green"): TrackSim {
  const sim = reach(stage, { commands: { test }, ...(paths ? { paths } : {}) });
  expect(sim.context.gates["test-list"].status).toBe("approved");
  return sim;
}

/**
 * The driver's GREEN commit changing `path` from `before` to `after`, with both texts as the app
 * reads them; `packageJson` is the root's package.json before it (the sim's base has none).
 */
function pushChange(
  sim: TrackSim,
  path: string,
  before: string | null,
  after: string | null,
  withBefore = true,
  packageJson: string | null = null,
) {
  const commit: PushedCommit = sim.commit({
    role: "driver",
    files: { [path]: after, "src/services/stock.ts": "export const ok = 1;\n" },
  });
  commit.changes = commit.changes.map((c) =>
    c.path === path ? { ...c, status: before === null ? "added" : after === null ? "removed" : "modified" } : c,
  );
  if (withBefore) commit.before = { "package.json": packageJson, [path]: before };
  else commit.before = {};
  return sim.send({
    type: "push",
    at: "2026-12-01T10:00:00Z",
    before: sim.context.head,
    after: commit.sha,
    forced: false,
    commits: [commit],
  });
}

const reasons = (sim: TrackSim) => (sim.last.rejection?.reasons ?? []).map((r) => r.replace(/^c[0-9a-f]{6}: /, ""));
const refusal = (keys: string, path = "package.json") =>
  `${path}: changes the test runner's configuration (${keys}), frozen at the test-list gate because it decides which tests pass: ` +
  "restore it (other dependencies may change), or ask a person to renegotiate the test list";

describe("the runner's configuration, frozen at the test-list gate", () => {
  it("a GREEN that changes a script the test command calls is refused, naming the key, and the test-list gate is withdrawn", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, scripts: { ...PACKAGE.scripts, unit: "exit 0" } }),
    );
    expect(reasons(sim)).toEqual([refusal("scripts.unit")]);
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
  });

  it("adding a pretest script to the called test script is refused", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, scripts: { ...PACKAGE.scripts, pretest: "node fake.js" } }),
    );
    expect(reasons(sim)).toEqual([refusal("scripts.pretest")]);
  });

  it("pointing the runner's own dependency at a local folder is refused", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, devDependencies: { ...PACKAGE.devDependencies, vitest: "file:../always-green" } }),
    );
    expect(reasons(sim)).toEqual([refusal("devDependencies.vitest")]);
  });

  it("an override of the runner's package is refused", () => {
    const sim = atGreen();
    pushChange(sim, "package.json", text(PACKAGE), text({ ...PACKAGE, overrides: { vitest: "npm:fake-vitest@1" } }));
    expect(reasons(sim)).toEqual([refusal("overrides.vitest")]);
  });

  it("a change to the jest block is refused", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, jest: { testEnvironment: "node", testMatch: [] } }),
    );
    expect(reasons(sim)).toEqual([refusal("jest")]);
  });

  it("a package.json that is not JSON after the change is refused: which keys changed cannot be told", () => {
    const sim = atGreen();
    pushChange(sim, "package.json", text(PACKAGE), "{ not json");
    expect(reasons(sim)).toEqual([refusal("its text is not a JSON object, so which keys changed cannot be told")]);
  });

  it("a commit whose runner file texts (and the root package.json's) were not provided is refused (fail closed)", () => {
    const sim = atGreen();
    pushChange(sim, "package.json", text(PACKAGE), text(PACKAGE), false);
    const short = sim.last.rejection!.reasons[0]!.slice(0, 7);
    expect(reasons(sim)).toEqual([
      `the text of package.json before ${short} was not provided, so which files the frozen test command runs cannot be told (fail closed)`,
      `the text of runner configuration file package.json before and after ${short} was not provided, so the frozen runner configuration cannot be checked (fail closed)`,
    ]);
  });

  it("the driver may still add and change other dependencies and unrelated scripts", () => {
    const sim = atGreen();
    const after = {
      ...PACKAGE,
      scripts: { ...PACKAGE.scripts, build: "tsc -p ." },
      dependencies: { pg: "^8.1.0", zod: "^4.0.0" },
    };
    sim.expectAccepted(pushChange(sim, "package.json", text(PACKAGE), text(after)));
  });

  it("pytest's table in pyproject.toml is frozen, its other tables are not (where code globs let the driver edit it)", () => {
    const code = ["src/**", "pyproject.toml"];
    const pyproject =
      '[project]\nname = "shop"\ndependencies = ["psycopg"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    const sim = atGreen({ code });
    pushChange(
      sim,
      "pyproject.toml",
      pyproject,
      pyproject.replace('addopts = "-q"', 'addopts = "-q -p no:terminal --deselect tests"'),
    );
    expect(reasons(sim)).toEqual([refusal("[tool.pytest]", "pyproject.toml")]);
    const other = atGreen({ code });
    other.expectAccepted(
      pushChange(other, "pyproject.toml", pyproject, pyproject.replace('["psycopg"]', '["psycopg", "httpx"]')),
    );
  });

  it("pytest's table stays frozen when its header line carries a comment (as TOML and pytest allow)", () => {
    const code = ["src/**", "pyproject.toml", "tox.ini"];
    const pyproject = '[project]\nname = "shop"\n\n[tool.pytest.ini_options]  # test settings\naddopts = "-q"\n';
    const sim = atGreen({ code });
    pushChange(
      sim,
      "pyproject.toml",
      pyproject,
      pyproject.replace('addopts = "-q"', 'addopts = "-q --deselect tests"'),
    );
    expect(reasons(sim)).toEqual([refusal("[tool.pytest]", "pyproject.toml")]);
    const tox = "[tox]\nenvlist = py3\n\n[pytest] ; test settings\naddopts = -q\n";
    const other = atGreen({ code });
    pushChange(other, "tox.ini", tox, tox.replace("addopts = -q", "addopts = -q -p no:junitxml"));
    expect(reasons(other)).toEqual([refusal("[pytest]", "tox.ini")]);
  });

  it("a runner config file the code globs cover is frozen whole", () => {
    const sim = atGreen({ code: ["src/**", "vitest.config.ts"] });
    pushChange(
      sim,
      "vitest.config.ts",
      "export default {};\n",
      "export default { test: { passWithNoTests: true } };\n",
    );
    expect(reasons(sim)).toEqual([refusal("the whole file", "vitest.config.ts")]);
  });
});

/**
 * What the runner's configuration reaches beyond its own files and keys (the review's four gaps):
 * the lockfile entries that say which runner is installed, the files its frozen scripts run, the
 * package.json of the folder the test command runs in, and pytest's own dependency entries. A
 * driver at GREEN (or REFACTOR) seeking a shortcut changes each to turn a failing test green.
 */
const LOCK = {
  name: "shop",
  lockfileVersion: 3,
  requires: true,
  packages: {
    "": { name: "shop", dependencies: { pg: "^8.0.0" }, devDependencies: { vitest: "~4.1" } },
    "node_modules/pg": {
      version: "8.16.0",
      resolved: "https://registry.npmjs.org/pg/-/pg-8.16.0.tgz",
      integrity: "sha512-pg",
    },
    "node_modules/vitest": {
      version: "4.1.0",
      resolved: "https://registry.npmjs.org/vitest/-/vitest-4.1.0.tgz",
      integrity: "sha512-vitest",
      dev: true,
    },
    "node_modules/vitest-sonar-reporter": {
      version: "2.0.0",
      resolved: "https://registry.npmjs.org/vitest-sonar-reporter/-/vitest-sonar-reporter-2.0.0.tgz",
      integrity: "sha512-sonar",
      dev: true,
    },
  },
};
const withEntry = (name: string, entry: Record<string, unknown>) => ({
  ...LOCK,
  packages: { ...LOCK.packages, [`node_modules/${name}`]: entry },
});

describe("what the frozen runner configuration reaches", () => {
  it("package-lock.json pointing the installed vitest at a local folder is refused, naming the entry's keys", () => {
    const sim = atGreen();
    const fake = withEntry("vitest", { version: "4.1.0", resolved: "../always-green", link: true });
    pushChange(sim, "package-lock.json", text(LOCK), text(fake), true, text(PACKAGE));
    expect(reasons(sim)).toEqual([
      refusal(
        'packages["node_modules/vitest"].dev, packages["node_modules/vitest"].integrity, packages["node_modules/vitest"].link, packages["node_modules/vitest"].resolved',
        "package-lock.json",
      ),
    ]);
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
  });

  it("npm-shrinkwrap.json changing the runner's version and integrity is refused", () => {
    const sim = atGreen();
    const vitest = LOCK.packages["node_modules/vitest"];
    const fake = withEntry("vitest", { ...vitest, version: "4.1.1", integrity: "sha512-forged" });
    pushChange(sim, "npm-shrinkwrap.json", text(LOCK), text(fake), true, text(PACKAGE));
    expect(reasons(sim)).toEqual([
      refusal(
        'packages["node_modules/vitest"].integrity, packages["node_modules/vitest"].version',
        "npm-shrinkwrap.json",
      ),
    ]);
  });

  it("the lockfile entry of a reporter plugin the test script names is refused", () => {
    const sim = atGreen();
    const pkg = {
      ...PACKAGE,
      scripts: { ...PACKAGE.scripts, unit: "vitest run --reporter=junit --reporter=vitest-sonar-reporter" },
      devDependencies: { ...PACKAGE.devDependencies, "vitest-sonar-reporter": "^2.0.0" },
    };
    const sonar = LOCK.packages["node_modules/vitest-sonar-reporter"];
    const fake = withEntry("vitest-sonar-reporter", { ...sonar, resolved: "file:../sonar-always-green" });
    pushChange(sim, "package-lock.json", text(LOCK), text(fake), true, text(pkg));
    expect(reasons(sim)).toEqual([
      refusal('packages["node_modules/vitest-sonar-reporter"].resolved', "package-lock.json"),
    ]);
  });

  it("the driver may still add and upgrade other packages in the lockfile", () => {
    const sim = atGreen();
    const after = {
      ...LOCK,
      packages: {
        ...LOCK.packages,
        "": { ...LOCK.packages[""], dependencies: { pg: "^8.1.0", zod: "^4.0.0" } },
        "node_modules/pg": { version: "8.17.0", resolved: "https://registry.npmjs.org/pg/-/pg-8.17.0.tgz" },
        "node_modules/zod": { version: "4.0.0", resolved: "https://registry.npmjs.org/zod/-/zod-4.0.0.tgz" },
      },
    };
    sim.expectAccepted(pushChange(sim, "package-lock.json", text(LOCK), text(after), true, text(PACKAGE)));
  });

  it("committing a file of the installed vitest under node_modules/ is refused", () => {
    const sim = atGreen({ code: ["src/**", "node_modules/**"] });
    pushChange(sim, "node_modules/vitest/vitest.mjs", null, "process.exit(0);\n");
    expect(reasons(sim)).toEqual([refusal("a file of the installed vitest package", "node_modules/vitest/vitest.mjs")]);
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
  });

  it("a GREEN that rewrites the file a frozen test script runs is refused, naming the script", () => {
    const code = ["src/**", "scripts/**", "package.json"];
    const sim = atGreen({ code });
    const pkg = { ...PACKAGE, scripts: { ...PACKAGE.scripts, unit: "node scripts/run-tests.js --junit" } };
    const runner = "import { execSync } from 'node:child_process';\nexecSync('vitest run', { stdio: 'inherit' });\n";
    pushChange(sim, "scripts/run-tests.js", runner, "process.exit(0);\n", true, text(pkg));
    expect(reasons(sim)).toEqual([
      "scripts/run-tests.js: changes a file the test command runs (named by package.json scripts.unit), frozen at the test-list gate because it decides which tests pass: " +
        "restore it, or ask a person to renegotiate the test list",
    ]);
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
  });

  it("a REFACTOR that rewrites the shell script the configured test command names is refused", () => {
    const sim = atGreen({ code: ["src/**", "test.sh"] }, "./test.sh", "refactor");
    pushChange(sim, "test.sh", "#!/bin/sh\nnpx vitest run\n", "#!/bin/sh\nexit 0\n");
    expect(reasons(sim)).toEqual([
      "test.sh: changes a file the test command runs (named by .github/consort.yml commands.test), frozen at the test-list gate because it decides which tests pass: " +
        "restore it, or ask a person to renegotiate the test list",
    ]);
  });

  it("files the test command does not name stay the driver's", () => {
    const sim = atGreen({ code: ["src/**", "scripts/**", "package.json"] });
    const pkg = {
      ...PACKAGE,
      scripts: { ...PACKAGE.scripts, unit: "node scripts/run-tests.js", seed: "node scripts/seed.js" },
    };
    sim.expectAccepted(pushChange(sim, "scripts/seed.js", "seed();\n", "seed(); more();\n", true, text(pkg)));
  });

  it("the package.json of the folder the test command runs in is frozen as the root's", () => {
    const code = ["src/**", "api/**"];
    const api = { name: "api", scripts: { test: "vitest run --reporter=junit" }, devDependencies: { vitest: "~4.1" } };
    const sim = atGreen({ code }, "cd api && npm test");
    pushChange(sim, "api/package.json", text(api), text({ ...api, scripts: { test: "exit 0" } }));
    expect(reasons(sim)).toEqual([refusal("scripts.test", "api/package.json")]);
    const dependency = atGreen({ code }, "cd api && npm test");
    pushChange(
      dependency,
      "api/package.json",
      text(api),
      text({ ...api, devDependencies: { vitest: "file:../always-green" } }),
    );
    expect(reasons(dependency)).toEqual([refusal("devDependencies.vitest", "api/package.json")]);
    const config = atGreen({ code }, "cd api && npm test");
    pushChange(config, "api/vitest.config.ts", "export default {};\n", "export default { test: { include: [] } };\n");
    expect(reasons(config)).toEqual([refusal("the whole file", "api/vitest.config.ts")]);
    const other = atGreen({ code }, "cd api && npm test");
    other.expectAccepted(
      pushChange(other, "api/package.json", text(api), text({ ...api, dependencies: { zod: "^4.0.0" } })),
    );
  });

  const PYPROJECT =
    '[project]\nname = "shop"\ndependencies = ["psycopg"]\n\n[project.optional-dependencies]\ntest = ["pytest>=8", "pytest-cov"]\n\n' +
    '[tool.poetry.group.dev.dependencies]\npytest-xdist = "^3"\n';
  const REQUIREMENTS = "psycopg==3.2.0\npytest==8.3.0  # the runner\nPytest_Cov==5.0\n";
  const PYTHON_FILES = [
    {
      file: "pyproject.toml",
      what: "pytest's own dependency entries in pyproject.toml",
      text: PYPROJECT,
      forged: PYPROJECT.replace('"pytest>=8"', '"pytest @ file:///tmp/always-green"').replace(
        '"^3"',
        '{ path = "../fake" }',
      ),
      keys: "[project.optional-dependencies] test: pytest, [tool.poetry.group.dev.dependencies] pytest-xdist",
      other: PYPROJECT.replace('["psycopg"]', '["psycopg", "httpx"]'),
    },
    {
      file: "requirements-dev.txt",
      what: "pytest's lines in a requirements file",
      text: REQUIREMENTS,
      forged: REQUIREMENTS.replace("pytest==8.3.0", "./wheels/pytest-99.0-py3-none-any.whl").replace("5.0", "5.1"),
      keys: "pytest, pytest-cov",
      other: REQUIREMENTS.replace("psycopg==3.2.0", "psycopg==3.2.1\nhttpx==0.28"),
    },
  ];
  for (const { file, what, text, forged, keys, other } of PYTHON_FILES)
    it(`${what} are frozen; other dependencies are not`, () => {
      const code = ["src/**", file];
      const sim = atGreen({ code }, "pytest --junitxml=junit.xml");
      pushChange(sim, file, text, forged);
      expect(reasons(sim)).toEqual([refusal(keys, file)]);
      const driver = atGreen({ code }, "pytest --junitxml=junit.xml");
      driver.expectAccepted(pushChange(driver, file, text, other));
    });
});
