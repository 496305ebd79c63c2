import { describe, expect, test } from "vitest";
import { hashFrozenText } from "../../src/gates/freeze.js";
import {
  CycleInputError,
  idsOfRuns,
  parseCycleRequest,
  runsOfIds,
  testIdsOf,
} from "../../src/contracts/cycle-request.js";
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

describe("tests named by id in the approved test list", () => {
  const testList = { path: ".consort/test-list.json", sha256: "b".repeat(64), inTurn: ["T7"], earlierGreen: ["T1-T6"] };
  const listed = { ...valid, tests: undefined, testList };

  test("ids become runs and runs become the same ids again, in id order", () => {
    expect(runsOfIds(["T3", "T1", "T2", "T7", "T5", "T6", "T9"])).toEqual(["T1-T3", "T5-T7", "T9"]);
    expect(idsOfRuns(["T1-T3", "T5-T7", "T9"])).toEqual(["T1", "T2", "T3", "T5", "T6", "T7", "T9"]);
    expect(runsOfIds([])).toEqual([]);
  });

  test("a listed request parses with no test written out, and its ids are the runs' ids", () => {
    const request = parseCycleRequest(JSON.stringify(listed));
    expect(request.tests).toEqual({ inTurn: [], earlierGreen: [] });
    expect(testIdsOf(request)).toEqual({ inTurn: ["T7"], earlierGreen: ["T1", "T2", "T3", "T4", "T5", "T6"] });
  });

  test("a run that goes down is refused", () => {
    expect(parse({ tests: undefined, testList: { ...testList, earlierGreen: ["T6-T1"] } })).toThrow(
      /testList\.earlierGreen\[0\]: a run of ids goes up: T1-T40, not T40-T1/,
    );
  });

  test("a test in turn that a run also names as green is refused", () => {
    expect(parse({ tests: undefined, testList: { ...testList, inTurn: ["T3"] } })).toThrow(
      /testList\.earlierGreen: T3 is listed twice \(also in inTurn\)/,
    );
  });

  test("two green runs that share ids inside them are refused, naming each shared id", () => {
    const request = parse({ tests: undefined, testList: { ...testList, earlierGreen: ["T1-T5", "T4-T6"] } });
    expect(request).toThrow(/testList\.earlierGreen: T4 is listed twice \(also in earlierGreen\)/);
    expect(request).toThrow(/T5 is listed twice/);
  });

  test("a RED with no id in turn is refused, naming the field", () => {
    expect(parse({ tests: undefined, testList: { ...testList, inTurn: [] } })).toThrow(
      /testList\.inTurn: a red step needs at least one test in turn/,
    );
  });

  test("a request that names tests both ways is refused", () => {
    expect(parse({ testList })).toThrow(
      /tests: a request names its tests either in full \(tests\) or by id in the test list \(testList\), not both/,
    );
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
