import picomatch from "picomatch";
import { describe, expect, it, vi } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import { PROTECTED_PATHS } from "../../src/roles/roles.js";
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

describe("the one expression a list compiles to", () => {
  // The configured lists and the protected paths, against paths each list matches and misses.
  const config = defaultConfig();
  const lists = [
    config.paths.tests,
    config.paths.code,
    config.paths.migrations,
    [...config.paths.code, ...config.paths.migrations],
    [...PROTECTED_PATHS],
    [".consort/reviews/T1.json", "src/[ab].ts", "docs/{a,b}/*.md", "!(x)*.txt", "lib/**/?.js"],
  ];
  const paths = [
    "test/stock.test.ts",
    "tests/a/b.py",
    "src/services/stock.ts",
    "src/a.ts",
    "src/c.ts",
    "app/x.test.tsx",
    "lib/a/b/c.js",
    "lib/a/bc.js",
    "pkg/test_orders.py",
    "pkg/orders_test.go",
    "migrations/0001_init.sql",
    "db/migrations/0002.sql",
    ".github/workflows/ci.yml",
    ".github/consort.yml",
    "CODEOWNERS",
    ".consort/reviews/T1.json",
    ".consort/reviews/T2.json",
    "docs/a/readme.md",
    "docs/c/readme.md",
    "x.txt",
    "y.txt",
    "package.json",
    "web/package.json",
    "",
  ];
  it("answers as picomatch's list matcher does, path for path", () => {
    for (const globs of lists) {
      const reference = picomatch([...globs], { dot: true });
      const compiled = globMatcher(globs);
      for (const path of paths)
        expect([globs, path, compiled(path)]).toEqual([globs, path, path !== "" && Boolean(reference(path))]);
    }
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
