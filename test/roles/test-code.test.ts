import { describe, expect, test } from "vitest";
import { testCodeIn } from "../../src/roles/test-code.js";

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
