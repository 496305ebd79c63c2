import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

/** Every file under src/ with its text. */
function sources(dir = "src"): Array<{ file: string; text: string }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((file) => ({ file, text: readFileSync(file, "utf8") }));
}

const headings = readFileSync("docs/ARCHITECTURE.md", "utf8")
  .split("\n")
  .filter((line) => line.startsWith("## "))
  .map((line) => line.slice(3).trim());

describe("docs/ARCHITECTURE.md, the document src/ cites", () => {
  test("every citation of it in src/ names one of its headings (or several, with ';')", () => {
    const cited = sources().flatMap(({ file, text }) =>
      [...text.matchAll(/docs\/ARCHITECTURE\.md, ([^\n]*)/g)].map((match) => ({ file, after: match[1]! })),
    );
    expect(cited.length).toBeGreaterThan(40);
    const problems: string[] = [];
    for (const { file, after } of cited) {
      let rest = after;
      do {
        const heading = headings.find((h) => rest.startsWith(h));
        if (!heading) {
          problems.push(`${file}: "${after}" names no heading of docs/ARCHITECTURE.md`);
          break;
        }
        rest = rest.slice(heading.length);
        if (!rest.startsWith("; ")) break;
        rest = rest.slice(2);
      } while (rest !== "");
    }
    expect(problems).toEqual([]);
  });

  test("no comment cites a numbered section of a design document that is not in the repository", () => {
    const stale = sources().filter(({ text }) => /design §\d/.test(text));
    expect(stale.map(({ file }) => file)).toEqual([]);
  });
});
