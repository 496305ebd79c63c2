import { describe, expect, test } from "vitest";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { CycleInputError, parseCycleRequest } from "../../src/cycle/request.js";
import { throwawayBranchName } from "../../src/cycle/run.js";
import { BRANCH_ID_PATTERN } from "../../src/substrate/index.js";

const T7 = { id: "T7", file: "test/stock-by-location.test.ts", title: "stock by location lists each sku" };
const valid = { track: "f1", step: "red", commit: "a".repeat(40), tests: { inTurn: [T7] }, database: { branch: "f1" } };
const parse = (over: Record<string, unknown>) => () => parseCycleRequest(JSON.stringify({ ...valid, ...over }));

describe("the cycle request is checked where it enters", () => {
  test("a well-formed request gets its defaults", () => {
    expect(parseCycleRequest(JSON.stringify(valid))).toMatchObject({
      version: 1,
      ttlSeconds: 3600,
      frozenTestFiles: [],
      tests: { earlierGreen: [] },
    });
  });

  test("text that is not JSON names the source", () => {
    expect(() => parseCycleRequest("{", "the action input `request`")).toThrow(
      /the action input `request` is not valid JSON/,
    );
  });

  test("a RED with no test in turn is refused, naming the field", () => {
    expect(parse({ tests: { inTurn: [] } })).toThrow(/tests\.inTurn: a red step needs at least one test in turn/);
  });

  test("a short commit sha is refused", () => {
    expect(parse({ commit: "abc123" })).toThrow(/commit: a full 40-character/);
  });

  test("a request that carries a frozen file's text is refused: the runner reads frozen text from git", () => {
    const frozen = { path: T7.file, sha256: hashFrozenText("one text"), text: "one text" };
    expect(parse({ frozenTestFiles: [frozen] })).toThrow(CycleInputError);
    expect(parse({ frozenTestFiles: [frozen] })).toThrow(/frozenTestFiles\[0\]: Unrecognized key: "text"/);
  });

  test("a test listed both in turn and as earlier green is refused", () => {
    expect(parse({ tests: { inTurn: [T7], earlierGreen: [T7] } })).toThrow(/T7 is listed twice/);
  });

  test("a path that climbs out of the repository is refused", () => {
    expect(parse({ tests: { inTurn: [{ ...T7, file: "../secrets.test.ts" }] } })).toThrow(/repository-relative path/);
  });
});

describe("throwaway branch names", () => {
  test.each(["f1-record-stock", "Feature/F1_Record Stock", "1-starts-with-a-digit", "x".repeat(80)])(
    "%s gives a valid branch id",
    (track) => {
      const name = throwawayBranchName(track, "deadbeef");
      expect(name).toMatch(BRANCH_ID_PATTERN);
      expect(name.endsWith("-cycle-deadbeef")).toBe(true);
    },
  );
});
