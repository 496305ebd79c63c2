import { describe, expect, it } from "vitest";
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
