import type { Flavour } from "./types.js";

/**
 * Each runner signs its report in its own way; these are the marks each one leaves by default.
 * Ordered from the most specific mark to the least. A report with none of them is "unknown" and
 * is read by the generic JUnit rules.
 */
const MARKS: Array<[Flavour, RegExp]> = [
  // Surefire's report names its schema; older ones carry Java system properties.
  ["surefire", /surefire-test-report|<property\s+name="(java\.vm\.name|surefire\.)/],
  // gotestsum and go-junit-report record the Go version as a property.
  ["go", /<property\s+name="go\.version"/],
  ["vitest", /<testsuites\b[^>]*\bname="vitest tests"/],
  // jest-junit's report title is configurable; a failure's stack still runs through jest-circus.
  [
    "jest",
    /<testsuites\b[^>]*\bname="jest tests"|<testcase\b[^>]*\bclassname="Test suite failed to run"|[\\/]jest-circus[\\/]/,
  ],
  // mocha-junit-reporter's titles, or mocha's built-in xunit reporter's lone <testsuite name="Mocha Tests">.
  ["mocha", /<testsuites?\b[^>]*\bname="Mocha Tests"|<testsuite\b[^>]*\bname="Root Suite"/],
  ["pytest", /<testsuite\b[^>]*\bname="pytest"/],
  // node --test-reporter=junit: closing counters as comments and its failure types.
  ["node", /<!--\s*duration_ms\s|type="(testCodeFailure|hookFailure|cancelledByParent|testTimeoutFailure)"/],
];

/** Only the head of a huge report is needed for most marks; node's counters sit at the end. */
export const MARKS_HEAD = 200_000;
export const MARKS_TAIL = 2_000;

/** Which runner wrote this JUnit XML, by the marks it leaves; "unknown" when none match. */
export function detectFlavour(xml: string): Flavour {
  const head = xml.length > MARKS_HEAD ? xml.slice(0, MARKS_HEAD) + xml.slice(-MARKS_TAIL) : xml;
  for (const [flavour, mark] of MARKS) if (mark.test(head)) return flavour;
  return "unknown";
}
