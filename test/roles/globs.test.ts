import { describe, expect, it, vi } from "vitest";
import { globMatcher } from "../../src/roles/globs.js";

/** The compiled glob matchers every ownership and freezing rule uses. */

describe("glob matchers", () => {
  it("match nothing for no globs", () => {
    expect(globMatcher([])("src/a.ts")).toBe(false);
  });
  it("match files and folders whose names start with a dot", () => {
    const tests = globMatcher(["test/**"]);
    expect(tests("test/.fixtures/seed.json")).toBe(true);
    expect(tests("test/.setup.ts")).toBe(true);
    expect(globMatcher([".github/workflows/**"])(".github/workflows/.hidden.yml")).toBe(true);
  });
  it("keep lists whose globs join to the same text apart", () => {
    // A cache keyed by the globs run together would give ["ab"] the matcher of ["a", "b"].
    expect(globMatcher(["a", "b"])("a")).toBe(true);
    expect(globMatcher(["ab"])("a")).toBe(false);
    expect(globMatcher(["ab"])("ab")).toBe(true);
  });
});

describe("the matcher cache", () => {
  it("compiles a glob list once, and holds at most 257 lists before starting again", async () => {
    vi.resetModules();
    const { globMatcher: fresh } = await import("../../src/roles/globs.js");
    const first = fresh(["k0"]);
    expect(fresh(["k0"])).toBe(first);
    for (let i = 1; i <= 256; i++) fresh([`k${i}`]);
    expect(fresh(["k0"])).toBe(first);
    fresh(["k257"]);
    expect(fresh(["k0"])).not.toBe(first);
  });
});
