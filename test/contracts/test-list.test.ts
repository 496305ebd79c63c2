import { describe, expect, it } from "vitest";
import { TestList } from "../../src/contracts/test-list.js";

const stockflowList = {
  tests: [
    {
      id: "T1",
      ac: "S1-AC1",
      file: "test/stock.test.ts",
      title: "filing stock > persists one row with sku, location, quantity and code",
      kind: "behavior",
    },
    {
      id: "T2",
      ac: "S1-AC3",
      file: "test/db/constraints.test.ts",
      title: "stock_records > rejects a second row for the same sku and location",
      kind: "behavior",
      invariant: "INV1",
    },
    {
      id: "T3",
      ac: "S1-AC1",
      file: "test/fitness/layering.test.ts",
      title: "layering > routes never import the database module",
      kind: "fitness",
    },
  ],
};

describe("TestList", () => {
  it("accepts StockFlow's ordered list", () => {
    expect(TestList.parse(stockflowList).tests.map((t) => t.id)).toEqual(["T1", "T2", "T3"]);
  });

  it("requires ids T1…Tn in list order", () => {
    const swapped = { tests: [stockflowList.tests[1], stockflowList.tests[0]] };
    const result = TestList.safeParse(swapped);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["tests", 0, "id"]);
    expect(result.error?.issues[0]?.message).toMatch(/must be T1, not T2/);
  });

  it("refuses two tests the runner could not tell apart", () => {
    const twin = { ...stockflowList.tests[0], id: "T4" };
    const result = TestList.safeParse({ tests: [...stockflowList.tests, twin] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/same file and title as T1/);
  });

  it("refuses an unknown kind, a malformed AC id and an escaping path", () => {
    const bad = { tests: [{ id: "T1", ac: "AC1", file: "../secrets.txt", title: "x", kind: "smoke" }] };
    const result = TestList.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toEqual(
      expect.arrayContaining(["tests.0.ac", "tests.0.file", "tests.0.kind"]),
    );
  });
});
