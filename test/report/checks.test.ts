import { describe, expect, it } from "vitest";
import { CheckAction } from "../../src/report/checks.js";

/** A check-run button as GitHub accepts it. */

describe("check-run buttons", () => {
  it.each(["Reseal", "re seal", "reseal!", "a".repeat(21), ""])("refuses the identifier %j", (identifier) => {
    expect(CheckAction.safeParse({ label: "Re-seal state", description: "Restore", identifier }).success).toBe(false);
  });
  it("accepts lowercase letters, digits and dashes up to 20", () => {
    expect(CheckAction.safeParse({ label: "x", description: "y", identifier: "rerun-cycle-2" }).success).toBe(true);
    expect(CheckAction.safeParse({ label: "x", description: "y", identifier: "a".repeat(20) }).success).toBe(true);
  });
});
