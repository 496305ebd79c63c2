import { describe, expect, it } from "vitest";
import {
  installedRunnerPackage,
  isRunnerConfigPath,
  runnerConfigChanges,
  runnerReach,
  touchesBeyondConsort,
} from "../../src/gates/runner-reach.js";

describe("which paths the runner rule looks at", () => {
  it("a committed runner package is refused by its path, even a file named as the package itself", () => {
    expect(installedRunnerPackage("node_modules/vitest")).toBe("vitest");
    expect(installedRunnerPackage("web/node_modules/@vitest/runner/dist/index.js")).toBe("@vitest/runner");
    expect(installedRunnerPackage("node_modules/left-pad/index.js")).toBeUndefined();
  });

  it("only a change inside .consort/ (moved from nowhere else) leaves what the test command runs alone", () => {
    expect(touchesBeyondConsort({ path: ".consort/spec.json" })).toBe(false);
    expect(touchesBeyondConsort({ path: ".consort/spec.json", previousPath: ".consort/old.json" })).toBe(false);
    expect(touchesBeyondConsort({ path: ".consort/spec.json", previousPath: "src/spec.json" })).toBe(true);
    expect(touchesBeyondConsort({ path: "src/.consort/spec.json" })).toBe(true);
  });

  it("a dependency file in a dot-folder pins the runner like any other: frozen", () => {
    expect(isRunnerConfigPath(".devcontainer/package-lock.json")).toBe(true);
    expect(isRunnerConfigPath(".tools/requirements-dev.txt")).toBe(true);
    expect(isRunnerConfigPath(".tools/notes.txt")).toBe(false);
  });

  it("a runner's config file in the folder a command cds into is frozen like one at the root", () => {
    const commands = ["cd api && npx vitest run"];
    expect(isRunnerConfigPath("api/vitest.config.ts", commands)).toBe(true);
    expect(isRunnerConfigPath("web/vitest.config.ts", commands)).toBe(false);
    expect(runnerConfigChanges({ path: "api/vitest.config.ts", before: "a", after: "b", commands })).toEqual([
      "the whole file",
    ]);
  });
});

describe("runnerReach: what the frozen commands reach", () => {
  it("the files each command, script, pre/post script and runner block names, from the folder it runs in, and the plugins", () => {
    const root = JSON.stringify({
      scripts: {
        test: "npm -s run unit",
        pretest: "node ./prepare.js",
        posttest: "node ./check-report.js",
        unit: "jest --config jest.ci.json",
      },
      jest: { setupFiles: ["<rootDir>/setup.js"] },
      devDependencies: { tsx: "4", jest: "30", pg: "8" },
    });
    const api = JSON.stringify({
      scripts: { test: "NODE_OPTIONS=--require=./hack.js node --import tsx/esm --test" },
      jest: { setupFiles: ["./setup.js"] },
      dependencies: { tsx: "4" },
    });
    const reach = runnerReach(
      { test: "npm test && cd api && npm test", lint: "gmake lint" },
      { "package.json": [root], "api/package.json": [api] },
    );
    expect([...reach.files]).toEqual([
      ["Makefile", ".github/consort.yml commands.lint"],
      ["makefile", ".github/consort.yml commands.lint"],
      ["GNUmakefile", ".github/consort.yml commands.lint"],
      ["api/hack.js", "api/package.json scripts.test"],
      ["api/tsx/esm", "api/package.json scripts.test"],
      ["prepare.js", "package.json scripts.pretest"],
      ["check-report.js", "package.json scripts.posttest"],
      ["jest.ci.json", "package.json scripts.unit"],
      ["setup.js", "package.json jest"],
      ["api/setup.js", "api/package.json jest"],
    ]);
    expect([...reach.plugins]).toEqual(["tsx", "jest"]);
  });
});

describe("runnerConfigChanges: what of a runner's configuration a change alters", () => {
  const pkg = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ scripts, ...extra });

  it("follows the scripts a command calls through yarn, pnpm and npm run, with their pre and post scripts", () => {
    const before = pkg({ test: "yarn unit", unit: "pnpm run db && jest", db: "node db.js", lint: "eslint ." });
    const changes = (scripts: Record<string, string>) =>
      runnerConfigChanges({ path: "package.json", before, after: pkg(scripts), commands: ["npm t"] });
    const base = { test: "yarn unit", unit: "pnpm run db && jest", db: "node db.js", lint: "eslint ." };
    expect(changes({ ...base, db: "exit 0" })).toEqual(["scripts.db"]);
    expect(changes({ ...base, postunit: "node rewrite-report.js" })).toEqual(["scripts.postunit"]);
    expect(changes({ ...base, lint: "eslint --fix ." })).toEqual([]);
  });

  it("reads the runners' keys and packages from the runners' table: jest-junit's block and a jest plugin are frozen", () => {
    const before = pkg(
      {},
      { "jest-junit": { outputName: "junit.xml" }, devDependencies: { "jest-environment-jsdom": "30" } },
    );
    const after = pkg(
      {},
      { "jest-junit": { outputName: "old.xml" }, devDependencies: { "jest-environment-jsdom": "file:x" } },
    );
    expect(runnerConfigChanges({ path: "package.json", before, after, commands: [] })).toEqual([
      "jest-junit",
      "devDependencies.jest-environment-jsdom",
    ]);
  });

  it("freezes pytest's sections of tox.ini and setup.cfg, and Surefire's plugin in pom.xml, not the rest", () => {
    const tox = "[tox]\nenvlist = py3\n\n[pytest]\naddopts = -q\n";
    expect(
      runnerConfigChanges({ path: "tox.ini", before: tox, after: tox.replace("py3", "py311"), commands: [] }),
    ).toEqual([]);
    expect(
      runnerConfigChanges({ path: "tox.ini", before: tox, after: `${tox}-p no:junitxml\n`, commands: [] }),
    ).toEqual(["[pytest]"]);
    const cfg = "[metadata]\nname = shop\n[tool:pytest]\ntestpaths = tests\n";
    expect(
      runnerConfigChanges({ path: "setup.cfg", before: cfg, after: cfg.replace("tests", "none"), commands: [] }),
    ).toEqual(["[tool:pytest]"]);
    const pom = (skip: string) =>
      `<project><build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId></plugin><plugin><artifactId>maven-surefire-plugin</artifactId><configuration><skipTests>${skip}</skipTests></configuration></plugin></plugins></build></project>`;
    expect(runnerConfigChanges({ path: "pom.xml", before: pom("false"), after: pom("true"), commands: [] })).toEqual([
      "the maven-surefire-plugin plugin",
    ]);
    expect(
      runnerConfigChanges({
        path: "pom.xml",
        before: pom("false"),
        after: pom("false").replace(
          "maven-compiler-plugin</artifactId>",
          "maven-compiler-plugin</artifactId><version>3</version>",
        ),
        commands: [],
      }),
    ).toEqual([]);
  });

  it("a runner's config file added or removed is a change of the file", () => {
    expect(runnerConfigChanges({ path: ".mocharc.yml", before: null, after: "spec: none\n", commands: [] })).toEqual([
      "the file, added",
    ]);
    expect(runnerConfigChanges({ path: "conftest.py", before: "import pytest\n", after: null, commands: [] })).toEqual([
      "the file, removed",
    ]);
  });
});

describe("runnerConfigChanges: the scripts a command line calls", () => {
  const scripts = {
    test: "vitest run",
    unit: "vitest run test/unit",
    ci: "vitest run --ci",
    t: "vitest run -t x",
    start: "vitest",
  };
  const changed = (command: string, script: keyof typeof scripts) =>
    runnerConfigChanges({
      path: "package.json",
      before: JSON.stringify({ scripts }),
      after: JSON.stringify({ scripts: { ...scripts, [script]: "exit 0" } }),
      commands: [command],
    });

  it.each([
    ["npm -s run unit", "unit"],
    ["npm --silent run unit", "unit"],
    ["npm --loglevel=silent run unit", "unit"],
    ["npm  run  unit", "unit"],
    ["npm run ci", "ci"],
    ["npm run t", "t"],
    ["yarn t", "t"],
    ["npm t", "test"],
    ["npm run unit", "unit"],
    ["npm --silent  run unit", "unit"],
    ["npm start", "start"],
  ] as const)("%s calls scripts.%s", (command, script) => {
    expect(changed(command, script)).toEqual([`scripts.${script}`]);
  });

  it("npm run unit does not call scripts.test, and npm ci calls no script", () => {
    expect(changed("npm run unit", "test")).toEqual([]);
    expect(changed("npm ci && npm run unit", "ci")).toEqual([]);
  });

  it("names every changed script, key and runner package in sorted order", () => {
    const before = JSON.stringify({ scripts: { zeta: "a", alpha: "a" }, devDependencies: { vitest: "4", jest: "30" } });
    const after = JSON.stringify({ scripts: { zeta: "b", alpha: "b" }, devDependencies: { vitest: "5", jest: "31" } });
    expect(
      runnerConfigChanges({ path: "package.json", before, after, commands: ["npm run zeta && npm run alpha"] }),
    ).toEqual(["scripts.alpha", "scripts.zeta", "devDependencies.jest", "devDependencies.vitest"]);
  });
});

describe("runnerConfigChanges: sections, plugins and whole files", () => {
  const changes = (path: string, before: string | null, after: string | null) =>
    runnerConfigChanges({ path, before, after, commands: [] });

  it("a pytest section whose header carries a comment, or is indented, is still frozen", () => {
    const commented = "[tox]\nenvlist = py3\n\n[pytest]  # pytest's own\naddopts = -q\n";
    expect(changes("tox.ini", commented, commented.replace("-q", "-p no:junitxml"))).toEqual(["[pytest]"]);
    const semicolon = "[tox]\nenvlist = py3\n[pytest] ; pytest's own\naddopts = -q\n";
    expect(changes("tox.ini", semicolon, semicolon.replace("-q", "-p no:junitxml"))).toEqual(["[pytest]"]);
    const toml = "[project]\nname = 'shop'\n[tool.pytest.ini_options] # frozen\naddopts = '-q'\n";
    expect(changes("pyproject.toml", toml, toml.replace("-q", "-x"))).toEqual(["[tool.pytest]"]);
    const indented = "[tox]\nenvlist = py3\n\n  [pytest]  \naddopts = -q\n";
    expect(changes("tox.ini", indented, indented.replace("-q", "-p no:junitxml"))).toEqual(["[pytest]"]);
  });

  it("a pyproject.toml added with pytest's table is a change of it; lines above every table are not pytest's", () => {
    expect(
      changes("pyproject.toml", null, "[project]\nname='shop'\n[tool.pytest.ini_options]\naddopts='-x'\n"),
    ).toEqual(["[tool.pytest]"]);
    const cfg = "# shop\n[tool:pytest]\ntestpaths = tests\n";
    expect(changes("setup.cfg", cfg, cfg.replace("# shop", "# shop, v2"))).toEqual([]);
  });

  it("Surefire's plugin written over several lines, and a pom.xml added with it", () => {
    const pom = (skip: string) =>
      `<project>\n  <build>\n    <plugins>\n      <plugin>\n        <artifactId>maven-surefire-plugin</artifactId>\n        <configuration>\n          <skipTests>${skip}</skipTests>\n        </configuration>\n      </plugin>\n    </plugins>\n  </build>\n</project>\n`;
    expect(changes("pom.xml", pom("false"), pom("true"))).toEqual(["the maven-surefire-plugin plugin"]);
    expect(changes("pom.xml", null, pom("true"))).toEqual(["the maven-surefire-plugin plugin"]);
  });

  it("a whole runner file whose line endings alone changed is unchanged", () => {
    expect(changes(".mocharc.yml", "spec: test\nrecursive: true\n", "spec: test\r\nrecursive: true\r\n")).toEqual([]);
  });

  it("a requirements line that installs pytest from a file or URL is pytest's entry", () => {
    expect(changes("requirements.txt", "requests==2\n", "requests==2\n./vendor/pytest-8.0.tar.gz\n")).toEqual([
      "pytest",
    ]);
  });
});
