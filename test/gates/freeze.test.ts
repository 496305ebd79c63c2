import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  checkFrozenTestFile,
  gitBlobId,
  hashFrozenText,
  manifestHash,
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
