import { defineConfig } from "vitest/config";
import MutateLoadGuard from "./test/setup/mutate-load-guard.js";
import base from "./vitest.config.js";

/**
 * The tests `npm run mutate` (stryker.config.mjs) runs against each mutant: only the fast unit tests of
 * the decision core. No e2e, no test that spawns a CLI per mutant, and no Postgres: none of these tests
 * needs one (a test that did would fail to load, and the load guard fails the run). Stryker's vitest
 * runner narrows this list to the tests that import the mutated files (`vitest.related`), then, per
 * mutant, to the tests that cover it (`coverageAnalysis: "perTest"`).
 *
 * `MUTATE_TESTS` (comma-separated globs) replaces the list: a file's static mutants (module-level
 * tables such as freeze.ts's skip markers) cannot be narrowed per test and run every related test,
 * so they are measured against the tests that exercise the file directly:
 *
 *   MUTATE_TESTS='test/gates/**' npm run mutate -- --mutate src/gates/freeze.ts \
 *     --incrementalFile reports/stryker-incremental-narrow.json
 *
 * (a separate incremental file, so the full run's results are kept).
 *
 * Built by hand rather than with mergeConfig, which concatenates arrays: the base's `include` and its
 * Postgres global setup would come back.
 */
const only = process.env.MUTATE_TESTS?.split(",").filter((glob) => glob !== "");

export default defineConfig({
  test: {
    ...base.test,
    include: only ?? [
      "test/gates/**/*.test.ts",
      "test/roles/**/*.test.ts",
      "test/orchestrator/**/*.test.ts",
      "test/contracts/track.test.ts",
      "test/report/**/*.test.ts",
      "test/state/**/*.test.ts",
      "test/cycle/verdict*.test.ts",
      "test/cycle/junit/**/*.test.ts",
      "test/engine/approval*.test.ts",
      "test/engine/provenance*.test.ts",
      "test/app/report-*.test.ts",
      "test/engine/state-*.test.ts",
      "test/handlers/review.test.ts",
      "test/handlers/services.test.ts",
      "test/app/services.test.ts",
      // The attacks on the frozen runner configuration drive the pure machine only: they are most of
      // what decides src/gates/freeze.ts, and each runs in milliseconds.
      "test/security/frozen-runner-config.test.ts",
      "test/security/frozen-helpers.test.ts",
      // The attacks on a test counted in another file's place decide src/cycle/junit/match.ts.
      "test/security/own-file.test.ts",
    ],
    exclude: [
      "**/node_modules/**",
      "test/**/fixtures/**",
      // These drive the CLI: the CLI layer is not the decision core, and it costs seconds per mutant.
      "test/**/cli.test.ts",
      "test/**/*-cli.test.ts",
      // These run a real test runner on a sample project (seconds each) and compare its report with
      // the committed one, whose own tests check the same things of the parser in milliseconds.
      "test/**/*-live.test.ts",
    ],
    globalSetup: [],
    // Stryker's runner counts a test file that fails to load as no tests at all (stryker-js#6150).
    reporters: ["default", new MutateLoadGuard()],
  },
});
