import { describe, expect, test } from "vitest";
import { judgedTextFromPatch, testCodeIn } from "../../src/roles/test-code.js";

/** The textual rule on production code: what it refuses, word for word, and what it leaves alone. */

const IMPORTS = (path: string, module: string) =>
  `${path} imports the test framework "${module}" into production code: code under paths.code must not reach into the test run (it could make a test pass from inside); keep test helpers under paths.tests`;
const READS = (path: string, variable: string) =>
  `${path} reads ${variable}, a variable of the test run, in production code: code that behaves differently under test passes tests it does not pass in production`;

describe("test code in production code", () => {
  test.each([
    ["src/a.ts", 'import { vi } from "vitest";', IMPORTS("src/a.ts", "vitest")],
    ["src/a.ts", "import { expect } from 'vitest/dist/index.js';", IMPORTS("src/a.ts", "vitest")],
    ["src/a.ts", 'import type { Mock } from "@vitest/spy";', IMPORTS("src/a.ts", "@vitest/spy")],
    ["src/a.js", 'const { jest } = require("@jest/globals");', IMPORTS("src/a.js", "@jest/globals")],
    ["src/a.js", "const chai = require( 'chai' );", IMPORTS("src/a.js", "chai")],
    ["src/a.ts", 'const t = await import("node:test");', IMPORTS("src/a.ts", "node:test")],
    ["src/a.ts", 'import "mocha";', IMPORTS("src/a.ts", "mocha")],
    ["src/a.ts", 'import sinon from "sinon";', IMPORTS("src/a.ts", "sinon")],
    ["app/models.py", "import pytest\n", IMPORTS("app/models.py", "pytest")],
    ["app/models.py", "from unittest import mock\n", IMPORTS("app/models.py", "unittest")],
    [
      "src/a.ts",
      "if (import.meta.vitest) { /* in-source tests */ }",
      "src/a.ts holds in-source tests (import.meta.vitest) in production code: tests belong under paths.tests, where they are frozen",
    ],
    ["src/a.ts", 'if (process.env.VITEST) return [{ sku: "A-1" }];', READS("src/a.ts", "VITEST")],
    ["src/a.ts", "const worker = process.env.JEST_WORKER_ID;", READS("src/a.ts", "JEST_WORKER_ID")],
    ["src/a.ts", 'if (process.env["CONSORT_STEP"] === "green") {}', READS("src/a.ts", "CONSORT_STEP")],
    ["lib/x.py", 'if os.environ.get("PYTEST_CURRENT_TEST"): pass', READS("lib/x.py", "PYTEST_CURRENT_TEST")],
    ["src/a.js", 'const { test } = require("jest");', IMPORTS("src/a.js", "jest")],
    ["src/a.js", 'import test from "ava";', IMPORTS("src/a.js", "ava")],
    ["src/a.js", 'import t from "tap";', IMPORTS("src/a.js", "tap")],
    ["src/a.js", 'import { test } from "uvu";', IMPORTS("src/a.js", "uvu")],
    ["src/a.js", 'import "jasmine";', IMPORTS("src/a.js", "jasmine")],
    ["src/a.ts", 'import { test } from "@playwright/test";', IMPORTS("src/a.ts", "@playwright/test")],
    ["app/models.py", "import nose\n", IMPORTS("app/models.py", "nose")],
    ["app/models.py", "from nose2.tools import params\n", IMPORTS("app/models.py", "nose2")],
    ["app/models.py", "from hypothesis import given\n", IMPORTS("app/models.py", "hypothesis")],
    ["src/a.ts", 'const a = 1;\nimport "mocha";', IMPORTS("src/a.ts", "mocha")],
    ["app/models.py", "x = 1\nimport pytest\n", IMPORTS("app/models.py", "pytest")],
    ["src/a.ts", "const pool = process.env.VITEST_POOL_ID;", READS("src/a.ts", "VITEST_POOL_ID")],
  ])("%s: %s is refused", (path, text, reason) => {
    expect(testCodeIn(path, text)).toBe(reason);
  });

  test.each([
    'import { z } from "zod";',
    'import assert from "node:assert";',
    'import { testing } from "./testing.js";',
    'import chalk from "chalk";',
    "const tapped = tap(value);",
    'if (process.env.NODE_ENV === "production") {}',
    "import pytestify  # a name that only starts like pytest",
  ])("%s is production code", (text) => {
    expect(testCodeIn("src/a.ts", text)).toBeUndefined();
  });
});

describe("what the rule judges from a diff instead of the whole file", () => {
  test.each([
    [
      "a new file: the whole of it",
      '@@ -0,0 +1,2 @@\n+import { z } from "zod";\n+export const a = z;',
      'import { z } from "zod";\nexport const a = z;',
    ],
    [
      "two hunks: each one's new side, context and added lines, without the removed ones",
      '@@ -1,2 +1,2 @@\n import { z } from "zod";\n-export const a = 1;\n+export const a = 2;\n@@ -20,3 +20,3 @@\n const b = "b";\n-const c = 1;\n+const c = 2;\n const d = "d";\n\\ No newline at end of file',
      'import { z } from "zod";\nexport const a = 2;\nconst b = "b";\nconst c = 2;\nconst d = "d";',
    ],
    [
      "a context line that reads like a hunk header: a line of the file",
      '@@ -1,2 +1,2 @@\n const marker = "@@ -9 +9 @@";\n-const a = 1;\n+const a = 2;',
      'const marker = "@@ -9 +9 @@";\nconst a = 2;',
    ],
    [
      "hunks with counts of two digits",
      '@@ -10,12 +10,12 @@\n const b = "b";\n-const c = 1;\n+const c = 2;',
      'const b = "b";\nconst c = 2;',
    ],
    ["a file emptied: nothing", '@@ -1,2 +0,0 @@\n-import { vi } from "vitest";\n-export const a = vi;', ""],
    ["a diff that ends with a line break", "@@ -0,0 +1 @@\n+const a = 1;\n", "const a = 1;"],
  ])("%s", (_, patch, judged) => {
    expect(judgedTextFromPatch(patch)).toBe(judged);
  });

  test.each([
    ["an empty diff (a rename, a mode change)", ""],
    ["text that is not a diff's hunks", "diff --git a/src/a.ts b/src/a.ts\n@@ -1 +1 @@\n-a\n+b"],
    [
      "a hunk with no quote above its first added line (a module path opened above could still be open)",
      '@@ -5,3 +5,3 @@\n }\n-const a = 1;\n+const a = 2;\n const b = "b";',
    ],
    [
      "a hunk that starts with what a `from` above it could import",
      '@@ -5,2 +5,2 @@\n \n "vitest";\n-const a = 1;\n+const a = 2;',
    ],
    ["a Python import whose module would be below the hunk", "@@ -1,2 +1,3 @@\n x = 'a'\n+import\n \n"],
    ["a context line before any hunk", " const a = 1;\n@@ -1 +1 @@\n+const a = 2;"],
    ["a line that is no part of a hunk", "@@ -1 +1 @@\n+const a = 2;\nnot a diff line"],
    [
      "a hunk that starts with the module a Python `import` or `from` above it could name",
      '@@ -5,2 +5,2 @@\n pytest.fixture = "x"\n-a = 1\n+a = 2',
    ],
  ])("none from %s: the file is read whole", (_, patch) => {
    expect(judgedTextFromPatch(patch)).toBeUndefined();
  });
});
