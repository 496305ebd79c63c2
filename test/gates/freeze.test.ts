import { describe, expect, it } from "vitest";
import { checkFrozenTestFile, skipOrFocusMarkers } from "../../src/gates/freeze.js";

const frozen = [
  'import { describe, expect, it } from "vitest";',
  'describe("filing stock", () => {',
  '  it("persists one row with sku, location, quantity and code", async () => {',
  "    expect(await countRows()).toBe(1);",
  "  });",
  "});",
  "",
].join("\n");

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
