import { z } from "zod";
import { describe, expect, it } from "vitest";
import { formatZodError, zodProblems } from "../../src/contracts/zod-error.js";

const TestList = z
  .object({
    tests: z.array(z.object({ id: z.string(), ac: z.string() }).strict()),
    "owner-team": z.string(),
  })
  .strict();

/** The zod error of a value that breaks TestList in three places. */
function brokenTestList(): z.ZodError {
  const parsed = TestList.safeParse({
    tests: [
      { id: "T1", ac: "S1-AC1" },
      { id: "T2", ac: 7 },
    ],
    stray: true,
  });
  if (parsed.success) throw new Error("the fixture must break the schema");
  return parsed.error;
}

describe("the one formatter of zod errors", () => {
  it("names each place in zod's own notation, with zod's message, in zod's order", () => {
    expect(zodProblems(brokenTestList())).toEqual([
      "tests[1].ac: Invalid input: expected string, received number",
      '["owner-team"]: Invalid input: expected string, received undefined',
      'Unrecognized key: "stray"',
    ]);
  });

  it("names the same places z.prettifyError does", () => {
    const error = brokenTestList();
    const places = [...z.prettifyError(error).matchAll(/→ at (.+)/g)].map((match) => match[1]);
    expect(places.sort()).toEqual(['["owner-team"]', "tests[1].ac"]);
    for (const place of places) expect(zodProblems(error).some((line) => line.startsWith(`${place}: `))).toBe(true);
  });

  it("lists the problems under what was read, one per line", () => {
    expect(formatZodError(brokenTestList(), ".consort/test-list.json is invalid")).toBe(
      [
        ".consort/test-list.json is invalid:",
        "  - tests[1].ac: Invalid input: expected string, received number",
        '  - ["owner-team"]: Invalid input: expected string, received undefined',
        '  - Unrecognized key: "stray"',
      ].join("\n"),
    );
  });

  it("puts them on one line for a log or a one-line reason", () => {
    expect(formatZodError(brokenTestList(), "the payload is invalid", { inline: true })).toBe(
      'the payload is invalid: tests[1].ac: Invalid input: expected string, received number; ["owner-team"]: Invalid input: expected string, received undefined; Unrecognized key: "stray"',
    );
  });

  it("past a limit, says how many problems it left out", () => {
    expect(zodProblems(brokenTestList(), 1)).toEqual([
      "tests[1].ac: Invalid input: expected string, received number",
      "… and 2 more",
    ]);
  });

  it("formats problems of ours about places in a file the same way", () => {
    expect(
      zodProblems([
        { path: ["database", "lakebase"], message: "set host" },
        { path: [], message: "empty" },
      ]),
    ).toEqual(["database.lakebase: set host", "empty"]);
  });
});
