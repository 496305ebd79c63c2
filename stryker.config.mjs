/**
 * `npm run mutate`: StrykerJS over the decision core (issue #11, part 3). Not in CI: a whole run takes
 * far longer than CI's budget on this machine. Measure one folder at a time, smallest first:
 *
 *   npm run mutate -- --mutate 'src/gates/**'
 *
 * The report is in reports/mutation/ (html, json); the incremental file reports/stryker-incremental.json
 * lets a rerun reuse what did not change. Both are git-ignored: they are a local cache of one
 * machine's run, regenerated on each run, and a committed one would conflict on every merge.
 *
 * Options: see the configuration page of the StrykerJS 9.6 documentation.
 */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutate.config.ts", related: true },
  mutate: [
    "src/orchestrator/**/*.ts",
    "src/contracts/track.ts",
    "src/gates/**/*.ts",
    "src/roles/**/*.ts",
    "src/cycle/verdict.ts",
    "src/cycle/junit/**/*.ts",
    "src/engine/provenance.ts",
    "src/engine/approvals.ts",
    "src/app/report-view.ts",
    "src/state/seal.ts",
    "src/report/**/*.ts",
  ],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  // Two cores shared by several people: one test process.
  concurrency: 1,
  timeoutMS: 10_000,
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 85, low: 70, break: null },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  // The sandbox needs the sources, the tests and the configs; not the examples, benches (but the big
  // report a junit test builds) or actions bundle.
  ignorePatterns: [
    "/examples",
    "/bench/*",
    "!/bench/big-report.ts",
    "/actions/dist",
    "/reports",
    "/coverage",
    "/.consort-data",
    "/.stryker-tmp*",
  ],
};
