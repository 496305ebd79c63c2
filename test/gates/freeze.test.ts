import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  checkFrozenTestFile,
  gitBlobId,
  hashFrozenText,
  installedRunnerPackage,
  isRunnerConfigPath,
  manifestHash,
  manifestHashFromHashes,
  runnerConfigChanges,
  runnerReach,
  skipOrFocusMarkers,
  touchesBeyondConsort,
} from "../../src/gates/freeze.js";

const frozen = [
  'import { describe, expect, it } from "vitest";',
  'describe("filing stock", () => {',
  '  it("persists one row with sku, location, quantity and code", async () => {',
  "    expect(await countRows()).toBe(1);",
  "  });",
  "});",
  "",
].join("\n");

describe("hashFrozenText", () => {
  it("is the sha256 hex of the text", () => {
    expect(hashFrozenText("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  it("treats CRLF and CR line endings as LF", () => {
    expect(hashFrozenText("a\r\nb\rc\n")).toBe(hashFrozenText("a\nb\nc\n"));
  });
  it("sees any other change", () => {
    expect(hashFrozenText("a\nb\n")).not.toBe(hashFrozenText("a\nb \n"));
  });
});

describe("manifestHash", () => {
  it("does not depend on the order the paths come in", () => {
    const a = manifestHash({ ".consort/spec.json": "{}", ".consort/architecture.json": "[]" });
    const b = manifestHash({ ".consort/architecture.json": "[]", ".consort/spec.json": "{}" });
    expect(a).toBe(b);
  });
  it("changes when a file's text changes, or a file moves", () => {
    const base = manifestHash({ ".consort/spec.json": "{}" });
    expect(manifestHash({ ".consort/spec.json": "{ }" })).not.toBe(base);
    expect(manifestHash({ ".consort/spec2.json": "{}" })).not.toBe(base);
    expect(manifestHash({ ".consort/spec.json": "{}", ".consort/ux.json": "{}" })).not.toBe(base);
  });
});

describe("checkFrozenTestFile", () => {
  const check = (current: string | undefined, step: "red" | "other") =>
    checkFrozenTestFile({ path: "test/stock.test.ts", frozen, current, step });

  it("accepts an identical file at any step, line endings aside", () => {
    expect(check(frozen, "other")).toEqual({ ok: true, reasons: [] });
    expect(check(frozen.replace(/\n/g, "\r\n"), "red")).toEqual({ ok: true, reasons: [] });
  });

  it("lets a later RED append a new test", () => {
    const added = frozen.replace(
      /\}\);\n$/,
      '  it("reads a filed record back exactly as filed", async () => {\n    expect(1).toBe(2);\n  });\n});\n',
    );
    expect(check(added, "red").ok).toBe(true);
  });

  it("refuses any change outside a RED step, even an addition", () => {
    const result = check(`${frozen}// one more line\n`, "other");
    expect(result.ok).toBe(false);
    expect(result.reasons[0]).toMatch(/must stay exactly as verified/);
  });

  it("refuses a RED that edits a frozen assertion, naming the line", () => {
    const weakened = frozen.replace("toBe(1)", "toBeGreaterThanOrEqual(0)");
    const result = check(weakened, "red");
    expect(result.ok).toBe(false);
    expect(result.reasons[0]).toMatch(/frozen line 4/);
  });

  it("counts a skip marker added to a frozen test as a change", () => {
    const skipped = frozen.replace('  it("persists', '  it.skip("persists');
    expect(check(skipped, "red").ok).toBe(false);
    expect(check(skipped, "other").reasons.join()).toMatch(/\.skip/);
  });

  it("refuses a RED that inserts a pytest skip decorator above a frozen test without touching its lines", () => {
    const py = "def test_files_stock():\n    assert count_rows() == 1\n";
    const result = checkFrozenTestFile({
      path: "tests/test_stock.py",
      frozen: py,
      current: `@pytest.mark.skip(reason="later")\n${py}`,
      step: "red",
    });
    expect(result.ok).toBe(false);
    expect(result.reasons[0]).toMatch(/@pytest\.mark\.skip/);
  });

  it("refuses a RED that adds a focused test, which would silence the others", () => {
    const focused = `${frozen}it.only("new test", () => {});\n`;
    expect(check(focused, "red").reasons.join()).toMatch(/\.only/);
  });

  it("does not count a marker the frozen text already carried when a RED adds other lines, and counts one more copy of it", () => {
    const skipping = `${frozen}it.skip("waits for the importer", () => {});\n`;
    const added = `${skipping}it("lists stock by location", () => {});\n`;
    expect(checkFrozenTestFile({ path: "test/stock.test.ts", frozen: skipping, current: added, step: "red" })).toEqual({
      ok: true,
      reasons: [],
    });
    const again = `${skipping}it.skip("waits for the importer", () => {});\n`;
    expect(
      checkFrozenTestFile({ path: "test/stock.test.ts", frozen: skipping, current: again, step: "red" }).reasons,
    ).toEqual([
      `test/stock.test.ts: line ${again.split("\n").length - 1} adds the skip/focus marker \`.skip\`; a frozen or new test may not be skipped or focused`,
    ]);
  });

  it("treats a deleted frozen file as a change", () => {
    const result = check(undefined, "red");
    expect(result.ok).toBe(false);
    expect(result.reasons[0]).toMatch(/deleted/);
  });
});

describe("skipOrFocusMarkers", () => {
  it.each([
    ["xit('x', () => {})", "xit"],
    ["xdescribe('x', () => {})", "xit"],
    ["fit('x', () => {})", "fit"],
    ["test.only('x', () => {})", ".only"],
    ["describe.skip('x', () => {})", ".skip"],
    ["test.fails('x', () => {})", ".fails"],
    ['    t.Skip("flaky")', "t.Skip("],
    ["@Disabled", "@Disabled"],
    ["#[ignore]", "#[ignore]"],
    ["        self.skipTest('no db')", "skipTest("],
  ])("finds the marker in %s", (line, marker) => {
    expect(skipOrFocusMarkers(line)).toContain(marker);
  });

  // Each marker with and without the spaces a formatter may leave, indented, in every runner.
  it.each([
    ['it.skip ("x", () => {})', ".skip"],
    ['it.todo("x")', ".todo"],
    ['it.todo ("x")', ".todo"],
    ['test.fails ("x", () => {})', ".fails"],
    ['test.runIf(process.env.CI)("x", () => {})', ".runIf"],
    ['test.runIf (process.env.CI)("x", () => {})', ".runIf"],
    ['  xit("x", () => {})', "xit"],
    ['xit ("x", () => {})', "xit"],
    ['xit( "x", () => {})', "xit"],
    ['  fit("x", () => {})', "fit"],
    ['fit ("x", () => {})', "fit"],
    ['fit( "x", () => {})', "fit"],
    ['    pytest.skip("no db")', [".skip", "pytest.skip("]],
    ['    pytest.skip ("no db")', [".skip", "pytest.skip("]],
    ['@unittest.skip("flaky")', [".skip", "@unittest.skip"]],
    ["        self.skipTest ('no db')", "skipTest("],
    ['    t.Skip ("flaky")', "t.Skip("],
    ['it("x", {skip:true}, () => {})', "skip:"],
    ['it("x", { skip : true }, () => {})', "skip:"],
    ['it("x", { skip: true }, () => {})', "skip:"],
  ] as Array<[string, string | string[]]>)("finds exactly the markers in %s", (line, markers) => {
    expect(skipOrFocusMarkers(line)).toEqual([markers].flat());
  });

  it.each([
    "it('skips empty rows', () => {})",
    "const profit = fit(x);",
    "expect(list.only).toBe(1)",
    "submit('form')",
  ])("does not flag an ordinary line: %s", (line) => {
    expect(skipOrFocusMarkers(line)).toEqual([]);
  });
});

describe("checkFrozenTestFile: which line a refusal names", () => {
  const file = (...body: string[]) => [...body, ""].join("\n");
  const check = (before: string, after: string) =>
    checkFrozenTestFile({ path: "test/stock.test.ts", frozen: before, current: after, step: "red" });

  it("a RED that removes one of two identical frozen lines is refused: each frozen line needs its own place", () => {
    const twice = file("it('x', () => {", "  expect(total).toBe(2);", "  expect(total).toBe(2);", "});");
    expect(check(twice, file("it('x', () => {", "  expect(total).toBe(2);", "});"))).toEqual({
      ok: false,
      reasons: [
        "test/stock.test.ts: frozen line 3 (`expect(total).toBe(2);`) was changed or removed; a RED step may only add lines to a frozen test file",
      ],
    });
  });

  it("names a long frozen line by its first 57 characters, and a line of 60 whole", () => {
    const long = `    expect(${"a".repeat(60)}).toBe(1);`;
    expect(check(file(long), file("")).reasons).toEqual([
      `test/stock.test.ts: frozen line 1 (\`expect(${"a".repeat(50)}...\`) was changed or removed; a RED step may only add lines to a frozen test file`,
    ]);
    const sixty = `  ${"b".repeat(60)}  `;
    expect(check(file(sixty), file("")).reasons).toEqual([
      `test/stock.test.ts: frozen line 1 (\`${"b".repeat(60)}\`) was changed or removed; a RED step may only add lines to a frozen test file`,
    ]);
  });

  it("a marker the frozen file already carried is no addition; a copy of that line is, named where it is", () => {
    const skipped = file("it.skip('old', () => {});", "it('kept', () => {});");
    expect(check(skipped, file("it.skip('old', () => {});", "it('kept', () => {});", "it('new', () => {});"))).toEqual({
      ok: true,
      reasons: [],
    });
    expect(
      check(skipped, file("it.skip('old', () => {});", "it('kept', () => {});", "it.skip('old', () => {});")).reasons,
    ).toEqual([
      "test/stock.test.ts: line 3 adds the skip/focus marker `.skip`; a frozen or new test may not be skipped or focused",
    ]);
    const twoSkipped = file("it.skip('a', () => {});", "it.skip('b', () => {});", "it('kept', () => {});");
    expect(check(twoSkipped, `${twoSkipped}it.skip('a', () => {});\n`).reasons).toEqual([
      "test/stock.test.ts: line 4 adds the skip/focus marker `.skip`; a frozen or new test may not be skipped or focused",
    ]);
  });

  it("a skipped test among other added lines, or added after a last line with no newline, is refused", () => {
    const plain = file("it('kept', () => {});");
    expect(check(plain, file("it('kept', () => {});", "// helpers", "it.only('new', () => {});")).reasons).toEqual([
      "test/stock.test.ts: line 3 adds the skip/focus marker `.only`; a frozen or new test may not be skipped or focused",
    ]);
    const noNewline = "it('kept', () => {});";
    expect(check(noNewline, `${noNewline}\nit.only('new', () => {});`).reasons).toEqual([
      "test/stock.test.ts: line 2 adds the skip/focus marker `.only`; a frozen or new test may not be skipped or focused",
    ]);
  });

  it("a RED that edits a frozen line of a file that already skipped a test is refused for the edit alone", () => {
    const skipped = file("it.skip('old', () => {});", "  expect(total).toBe(2);");
    expect(check(skipped, file("it.skip('old', () => {});", "  expect(total).toBe(3);")).reasons).toEqual([
      "test/stock.test.ts: frozen line 2 (`expect(total).toBe(2);`) was changed or removed; a RED step may only add lines to a frozen test file",
    ]);
  });

  it("a new skipped test inserted above a frozen skipped one is named, not the frozen one", () => {
    const skipped = file("it.skip('old', () => {});");
    expect(check(skipped, file("it.skip('new', () => {});", "it.skip('old', () => {});")).reasons).toEqual([
      "test/stock.test.ts: line 1 adds the skip/focus marker `.skip`; a frozen or new test may not be skipped or focused",
    ]);
  });
});

describe("manifestHashFromHashes", () => {
  it("is the sha256 of `path NUL hash LF` per file in path order (sha256sum of that text gives the same)", () => {
    // printf 'a.txt\0<64 ones>\nb.txt\0<64 twos>\n' | sha256sum
    expect(manifestHashFromHashes({ "b.txt": "2".repeat(64), "a.txt": "1".repeat(64) })).toBe(
      "f13462e2754b1e827e8ac54d394ddb475090b95bc406b358aa566f8d4da78308",
    );
  });
});

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

describe("gitBlobId", () => {
  it("is the id git itself gives the text's blob, so a tree read checks a file without its content", () => {
    for (const text of ["", "{}\n", '{"stories": []}\r\n', "ünïcødé\n"]) {
      const fromGit = execFileSync("git", ["hash-object", "--stdin"], { input: text, encoding: "utf8" }).trim();
      expect(gitBlobId(text)).toBe(fromGit);
    }
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
