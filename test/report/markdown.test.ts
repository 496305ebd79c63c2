import { describe, expect, it } from "vitest";
import { code, table, truncate, utf8Bytes } from "../../src/report/markdown.js";

/** The Markdown helpers of check runs and comments, each output exact. */

const note = (omitted: number, limit: number) =>
  `\n\n> **Truncated:** ${omitted} bytes did not fit GitHub's limit of ${limit}. The full record is here.`;

describe("inline code", () => {
  it("fences with one backtick, or two around a text that holds one", () => {
    expect(code("npm test")).toBe("`npm test`");
    expect(code("a `b` c")).toBe("``a `b` c``");
  });
});

describe("tables", () => {
  it("render a head, a rule and a row per entry; no rows are a one-line note", () => {
    expect(table(["A", "B"], [["1", "2"]], "None.")).toBe("| A | B |\n| --- | --- |\n| 1 | 2 |");
    expect(table(["A", "B"], [], "None.")).toBe("_None._");
  });
});

describe("cutting to GitHub's limits", () => {
  it("leaves a text that fits exactly as it is", () => {
    expect(truncate("abc", 3, "here")).toBe("abc");
    expect(truncate("✅", 3, "here")).toBe("✅");
  });
  it("says how many bytes it cut", () => {
    const cut = truncate("a".repeat(1000), 300, "here");
    expect(cut).toBe(`${"a".repeat(211)}${note(789, 300)}`);
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(300);
  });
  it("never splits a character of several bytes", () => {
    const cut = truncate("✅".repeat(200), 301, "here");
    expect(cut).toBe(`${"✅".repeat(71)}${note(387, 301)}`);
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(301);
  });
  it("never splits a character of several bytes in a long cut either", () => {
    expect(truncate("✅".repeat(3000), 7000, "here")).toBe(`${"✅".repeat(2303)}${note(2091, 7000)}`);
  });
  it("cuts at a line break only when one is near the end", () => {
    const cut = truncate(`${"a".repeat(10)}\n${"b".repeat(5000)}`, 3000, "here");
    expect(cut.indexOf("\n")).toBe(10);
    expect(cut.split("b")).toHaveLength(2902);
  });
});
