import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  checkFrozenTestFile,
  gitBlobId,
  hashFrozenText,
  manifestHash,
  runnerConfigChanges,
  skipOrFocusMarkers,
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

  it.each([
    "it('skips empty rows', () => {})",
    "const profit = fit(x);",
    "expect(list.only).toBe(1)",
    "submit('form')",
  ])("does not flag an ordinary line: %s", (line) => {
    expect(skipOrFocusMarkers(line)).toEqual([]);
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
