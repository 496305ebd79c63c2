import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BRANCH_ID_PATTERN,
  plainBranchId,
  resolveParentBranch,
  sanitiseBranchName,
} from "../../src/substrate/names.js";

describe("sanitiseBranchName", () => {
  it("lowercases, turns other characters into single hyphens and trims them, with a hash of the git name", () => {
    expect(sanitiseBranchName("Feature/Cart__Checkout")).toMatch(/^feature-cart-checkout-[0-9a-f]{8}$/);
    expect(sanitiseBranchName("fix/#42--stock!")).toMatch(/^fix-42-stock-[0-9a-f]{8}$/);
    expect(sanitiseBranchName("café/crème")).toMatch(/^cafe-creme-[0-9a-f]{8}$/);
    expect(plainBranchId("café/crème")).toBe("cafe-creme");
  });

  it("keeps a git name that is a branch id already", () => {
    expect(sanitiseBranchName("feature-cart")).toBe("feature-cart");
    expect(sanitiseBranchName("pr-42-t3")).toBe("pr-42-t3");
  });

  it("never gives a git name spelled like another's hashed id that id, with no list of names in use", () => {
    for (const real of ["Feat/Stock", "feature/stock-reserve", "Fix_Cart"]) {
      const id = sanitiseBranchName(real);
      const lookalike = sanitiseBranchName(id);
      expect(lookalike).not.toBe(id);
      expect(lookalike).toMatch(BRANCH_ID_PATTERN);
      expect(sanitiseBranchName(id)).toBe(lookalike);
    }
    // A name that only looks hex-ish at its end but is not a hash suffix keeps its id.
    expect(sanitiseBranchName("release-2026")).toBe("release-2026");
  });

  it("gives a name that starts with a digit a leading letter", () => {
    expect(sanitiseBranchName("42-hotfix")).toMatch(/^b-42-hotfix-[0-9a-f]{8}$/);
    expect(plainBranchId("42-hotfix")).toBe("b-42-hotfix");
  });

  it("gives git names that differ only in case or punctuation different ids, in whatever order they come", () => {
    const names = ["Feature/Cart", "feature/cart", "feature-cart", "feature_cart", "FEATURE-CART", "feature/cart/"];
    const valid = names.filter((n) => n !== "feature/cart/");
    const ids = valid.map((n) => sanitiseBranchName(n));
    expect(new Set(ids).size).toBe(valid.length);
    expect(valid.map((n) => sanitiseBranchName(n)).reverse()).toEqual([...ids].reverse());
    for (const id of ids) expect(id).toMatch(BRANCH_ID_PATTERN);
  });

  it("cuts long names to 63 characters with a stable hash suffix", () => {
    const long = `feature/${"very-long-name-".repeat(10)}`;
    const id = sanitiseBranchName(long);
    expect(id.length).toBeLessThanOrEqual(63);
    expect(id).toMatch(/-[0-9a-f]{8}$/);
    expect(sanitiseBranchName(long)).toBe(id);
    expect(sanitiseBranchName(`${long}x`)).not.toBe(id);
  });

  it("adds a hash suffix when another git name already holds an id-shaped name's id, and keeps a name's own id", () => {
    // `feature-cart` held by `feature/cart` (paired before ids were made unique).
    const taken = new Map([["feature-cart", "feature/cart"]]);
    expect(sanitiseBranchName("feature/cart", taken)).toBe("feature-cart");
    const other = sanitiseBranchName("feature-cart", taken);
    expect(other).toMatch(/^feature-cart-[0-9a-f]{8}$/);
    expect(sanitiseBranchName("feature-cart", ["feature-cart"])).toBe(other);
    const own = sanitiseBranchName("Feature_Cart");
    expect(sanitiseBranchName("Feature_Cart", [own])).toBe(own);
  });

  it("names with no letters or digits still get a valid, distinct id", () => {
    const a = sanitiseBranchName("___");
    const b = sanitiseBranchName("+++");
    expect(a).toMatch(BRANCH_ID_PATTERN);
    expect(b).toMatch(BRANCH_ID_PATTERN);
    expect(a).not.toBe(b);
  });

  it("rejects names git would not accept, saying why", () => {
    expect(() => sanitiseBranchName("")).toThrow(/empty/);
    expect(() => sanitiseBranchName("a b")).toThrow(/space/);
    expect(() => sanitiseBranchName("a..b")).toThrow(/\.\./);
    expect(() => sanitiseBranchName("topic.lock")).toThrow(/\.lock/);
  });

  it("always produces a valid branch id for any name git accepts", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), (name) => {
        let id: string;
        try {
          id = sanitiseBranchName(name);
        } catch {
          return true;
        }
        return BRANCH_ID_PATTERN.test(id) && id.length <= 63;
      }),
    );
  });
});

describe("resolveParentBranch", () => {
  const base = { defaultBranch: "main", rootBranch: "production" };

  it("pairs trunk with the root branch", () => {
    expect(resolveParentBranch({ ...base, branch: "main" })).toEqual({
      branch: "production",
      parent: undefined,
      parentGitBranch: undefined,
      isTrunk: true,
    });
  });

  it("forks a branch without a pull request from the root", () => {
    expect(resolveParentBranch({ ...base, branch: "feature/cart" })).toMatchObject({
      branch: sanitiseBranchName("feature/cart"),
      parent: "production",
      isTrunk: false,
    });
  });

  it("forks a branch from its pull request's base", () => {
    expect(resolveParentBranch({ ...base, branch: "feature/cart-tax", prBase: "feature/cart" })).toMatchObject({
      branch: expect.stringMatching(/^feature-cart-tax-[0-9a-f]{8}$/),
      parent: sanitiseBranchName("feature/cart"),
      parentGitBranch: "feature/cart",
    });
  });

  it("refuses a branch that would be its own parent", () => {
    expect(() => resolveParentBranch({ ...base, branch: "feature/cart", prBase: "feature/cart" })).toThrow(
      /own parent/,
    );
    // Names that differ only in case are different branches, so one may be the other's parent.
    expect(resolveParentBranch({ ...base, branch: "Feature/Cart", prBase: "feature/cart" }).branch).not.toBe(
      sanitiseBranchName("feature/cart"),
    );
  });
});
