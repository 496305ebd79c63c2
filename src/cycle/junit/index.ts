/**
 * JUnit reports from the runners the cycle supports (docs/ARCHITECTURE.md, Cycles): parse them, tell an assertion
 * failure from an error and a file that did not load, and find a test-list entry in them.
 */
export { detectFlavour } from "./flavour.js";
export { combineReports, parseJUnit } from "./parse.js";
export { clearReports, readJUnitReports } from "./read.js";
export { findTestCase, locateTestCase, locateTestCases, type TestLocation } from "./match.js";
export {
  JUnitError,
  JUnitReportSchema,
  type Flavour,
  type JUnitReport,
  type LoadError,
  type TestCaseResult,
} from "./types.js";
