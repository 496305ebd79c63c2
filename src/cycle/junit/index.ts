/**
 * JUnit reports from the runners the cycle supports (design §6): parse them, tell an assertion
 * failure from an error and a file that did not load, and find a test-list entry in them.
 */
export { detectFlavour } from "./flavour.js";
export { combineReports, parseJUnit, type ParseJUnitOptions } from "./parse.js";
export { clearReports, readJUnitReports, type ReadJUnitOptions, type ReadJUnitResult } from "./read.js";
export { findTestCase, locateTestCase, TestQuerySchema, type TestLocation, type TestQuery } from "./match.js";
export {
  FLAVOURS,
  FlavourSchema,
  JUnitError,
  JUnitReportSchema,
  LoadErrorSchema,
  TEST_OUTCOMES,
  TestCaseResultSchema,
  TestOutcomeSchema,
  type Flavour,
  type JUnitErrorCode,
  type JUnitReport,
  type LoadError,
  type TestCaseResult,
  type TestOutcome,
} from "./types.js";
