import { describe, expect, it } from "vitest";
import { detectFlavour, type Flavour } from "../../../src/cycle/junit/index.js";
import { MARKS_HEAD, MARKS_TAIL } from "../../../src/cycle/junit/flavour.js";
import { fixtureReport } from "./fixtures.js";

/**
 * The marks each runner leaves in its report, one at a time: each recorded report carries several
 * (parse.test.ts recognises them whole), so here each mark stands alone in a report that has no
 * other, in the place and spelling the runner writes it.
 */

const report = (head: string, body = "") => `<?xml version="1.0" encoding="UTF-8"?>\n${head}${body}</testsuites>`;

describe("the mark each runner leaves", () => {
  it.each<[string, string, Flavour]>([
    [
      "Surefire's schema",
      '<testsuites><testsuite xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report.xsd" name="shop.CartTest">',
      "surefire",
    ],
    [
      "an older Surefire's java.vm.name",
      '<testsuites><testsuite name="shop.CartTest"><properties><property  name="java.vm.name" value="OpenJDK"/>',
      "surefire",
    ],
    [
      "an older Surefire's own property",
      '<testsuites><testsuite name="shop.CartTest"><properties><property name="surefire.version" value="2.22"/>',
      "surefire",
    ],
    [
      "Go's version property",
      '<testsuites><testsuite name="example.com/shop"><properties><property\tname="go.version" value="go1.19"/>',
      "go",
    ],
    ["vitest's title", '<testsuites tests="1" name="vitest tests" failures="0">', "vitest"],
    ["jest-junit's title", '<testsuites tests="1" name="jest tests">', "jest"],
    [
      "jest-junit's placeholder for a file that did not run",
      '<testsuites><testsuite name="x"><testcase name="test/a.test.js" classname="Test suite failed to run">',
      "jest",
    ],
    [
      "jest-circus in a stack (a renamed report)",
      '<testsuites name="cart"><testsuite name="x"><testcase name="t"><failure>at run (/repo/node_modules/jest-circus/build/run.js:1:1)</failure>',
      "jest",
    ],
    [
      "jest-circus in a Windows stack",
      '<testsuites name="cart"><testsuite name="x"><testcase name="t"><failure>at run (C:\\repo\\node_modules\\jest-circus\\build\\run.js:1:1)</failure>',
      "jest",
    ],
    ["mocha-junit-reporter's title", '<testsuites name="Mocha Tests" time="0.078">', "mocha"],
    ["mocha's xunit reporter's suite", '<testsuites><testsuite tests="5" name="Mocha Tests">', "mocha"],
    ["mocha-junit-reporter's root suite", '<testsuites><testsuite name="Root Suite" tests="1">', "mocha"],
    ["pytest's suite", '<testsuites><testsuite errors="0" name="pytest" tests="1">', "pytest"],
    ["node's closing counters", "<testsuites>\n\t<!--  duration_ms 1570.99 -->\n", "node"],
    [
      "node's testCodeFailure",
      '<testsuites><testcase name="t"><failure type="testCodeFailure" message="m"/></testcase>',
      "node",
    ],
    [
      "node's hookFailure",
      '<testsuites><testcase name="t"><failure type="hookFailure" message="m"/></testcase>',
      "node",
    ],
    [
      "node's cancelledByParent",
      '<testsuites><testcase name="t"><failure type="cancelledByParent" message="m"/></testcase>',
      "node",
    ],
    [
      "node's testTimeoutFailure",
      '<testsuites><testcase name="t"><failure type="testTimeoutFailure" message="m"/></testcase>',
      "node",
    ],
  ])("knows %s", (_, head, flavour) => {
    expect(detectFlavour(report(head))).toBe(flavour);
  });

  it.each([
    ["a title only like vitest's", '<testsuites name="vitest tests (copy)">'],
    ["vitest's title on a suite", '<testsuites><testsuite name="vitest tests">'],
    ["jest's title on a suite", '<testsuites><testsuite name="jest tests">'],
    ["a property that only names Go", '<testsuites><testsuite><properties><property name="go.versions"/>'],
    ["a property named after java", '<testsuites><testsuite><properties><property name="java.home"/>'],
    ["pytest's name on a case", '<testsuites><testsuite name="all"><testcase name="pytest">'],
    ["an element whose name only starts like testsuites", '<testsuitesx name="vitest tests"><testsuites>'],
    ["node's counters without their space", "<testsuites><!--duration_ms1570-->"],
    ["a failure type that is not node's", '<testsuites><testcase name="t"><failure type="codeFailure"/></testcase>'],
  ])("does not take %s for a runner's mark", (_, head) => {
    expect(detectFlavour(report(head))).toBe("unknown");
  });

  it("takes the most specific mark first: a Surefire report whose stack runs through jest-circus is Surefire's", () => {
    const xml = report(
      '<testsuites name="vitest tests"><testsuite xsi:noNamespaceSchemaLocation="surefire-test-report.xsd" name="pytest">',
      '<!-- duration_ms 1 --><property name="go.version"/>',
    );
    expect(detectFlavour(xml)).toBe("surefire");
    expect(detectFlavour(xml.replace("surefire-test-report", "report"))).toBe("go");
    expect(
      detectFlavour(
        report(
          '<testsuites name="vitest tests"><testsuite name="pytest">',
          '/jest-circus/ <testsuite name="Root Suite">',
        ),
      ),
    ).toBe("vitest");
    expect(
      detectFlavour(report('<testsuites name="Mocha Tests"><testsuite name="pytest">', "<!-- duration_ms 1 -->")),
    ).toBe("mocha");
    expect(detectFlavour(report('<testsuites><testsuite name="pytest">', "<!-- duration_ms 1 -->"))).toBe("pytest");
  });
});

describe("a report too big to search whole", () => {
  const padding = (n: number) => `<testcase name="${"x".repeat(n)}"/>`;

  it("is searched in its head and its tail: node's counters at the very end are found", async () => {
    const node = await fixtureReport("node");
    const cut = node.indexOf("<!--");
    const withoutFailureTypes = node.slice(0, cut).replace(/type="\w+"/g, 'type="x"');
    const big = `${withoutFailureTypes}${padding(MARKS_HEAD)}${node.slice(cut)}`;
    expect(big.length).toBeGreaterThan(MARKS_HEAD + MARKS_TAIL);
    expect(detectFlavour(big)).toBe("node");
  });

  it("is not searched in its middle, beyond the head and before the tail", () => {
    const xml = report("<testsuites>", `${padding(MARKS_HEAD)}<testsuite name="pytest">${padding(MARKS_TAIL)}`);
    expect(detectFlavour(xml)).toBe("unknown");
    expect(
      detectFlavour(
        report("<testsuites>", `${padding(MARKS_HEAD - 200)}<testsuite name="pytest">${padding(MARKS_TAIL)}`),
      ),
    ).toBe("pytest");
    expect(
      detectFlavour(
        report("<testsuites>", `${padding(MARKS_HEAD)}<testsuite name="pytest">${padding(MARKS_TAIL - 200)}`),
      ),
    ).toBe("pytest");
  });

  it("is searched whole up to the head's size", () => {
    const body = `${padding(MARKS_HEAD - MARKS_TAIL - 500)}<testsuite name="pytest">${padding(MARKS_TAIL)}`;
    const xml = report("<testsuites>", body);
    expect(xml.length).toBeLessThanOrEqual(MARKS_HEAD);
    expect(detectFlavour(xml)).toBe("pytest");
  });
});
