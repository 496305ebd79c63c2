import { describe, expect, it } from "vitest";
import { detectFlavour, parseJUnit, type Flavour } from "../../../src/cycle/junit/index.js";
import { fixtureReport } from "./fixtures.js";

/**
 * A `<failure>` that carries no `type` attribute, and whose message and text name no error:
 * nothing in the report says an assertion failed, so it is never RED's "failed by an assertion".
 * The recorded fixtures of every runner always carry a type (or, for jest, a text that says
 * `Error: expect(`); this report is written by hand, in the shape generic JUnit writers use.
 */

const untypedFailure = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1" errors="0">
  <testsuite name="cart" tests="1" failures="1" errors="0">
    <testcase classname="cart" name="applies a ten percent discount" file="test/cart.test.js">
      <failure message="expected 90 to equal 81">at Context.&lt;anonymous&gt; (test/cart.test.js:12:5)</failure>
    </testcase>
  </testsuite>
</testsuites>
`;

const sameFailureWith = (attributes: string) =>
  untypedFailure.replace('<failure message="expected 90 to equal 81">', `<failure ${attributes}>`);

/** What decides RED, per test: its name, outcome, the error type read and the message. */
const verdicts = (xml: string, flavour?: Flavour) =>
  parseJUnit(xml, flavour ? { flavour } : {}).tests.map(({ name, outcome, type, message }) => ({
    name,
    outcome,
    type,
    message,
  }));
const name = "applies a ten percent discount";

describe("a failure without a type", () => {
  it("comes from a runner no mark identifies", () => {
    expect(detectFlavour(untypedFailure)).toBe("unknown");
  });

  // Go is left out on purpose: it has no assertion type, and t.Error/t.Fatal are its assertions.
  it.each<Flavour>(["unknown", "vitest", "jest", "mocha", "node", "pytest", "surefire"])(
    "is an error, not an assertion, read by %s's rules",
    (flavour) => {
      expect(verdicts(untypedFailure, flavour)).toEqual([
        { name, outcome: "failed-error", type: undefined, message: "expected 90 to equal 81" },
      ]);
    },
  );

  it("with an empty type is an error too", () => {
    expect(verdicts(sameFailureWith('type="" message="expected 90 to equal 81"'))).toEqual([
      { name, outcome: "failed-error", type: undefined, message: "expected 90 to equal 81" },
    ]);
  });

  it("is an assertion when its message names an AssertionError", () => {
    expect(verdicts(sameFailureWith('message="AssertionError: expected 90 to equal 81"'))).toEqual([
      {
        name,
        outcome: "failed-assertion",
        type: "AssertionError",
        message: "AssertionError: expected 90 to equal 81",
      },
    ]);
  });
});

/**
 * Hand-written reports, each in the shape of one runner's recorded report (the fixture named in its
 * describe), changed only where the case needs: what each runner's rules make of a failure.
 */

const read = (xml: string, flavour: Flavour) => parseJUnit(xml, { flavour });

/** One suite of vitest's shape (fixtures/vitest/report.xml) around some cases. */
const vitestReport = (cases: string, counts = 'tests="1" failures="1" errors="0"') =>
  `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" ${counts}>
  <testsuite name="test/cart.test.js" timestamp="2026-11-30T06:36:26.469Z" ${counts}>
${cases}
  </testsuite>
</testsuites>`;

const vitestCase = (name: string, failure: string) =>
  `<testcase classname="test/cart.test.js" name="${name}" time="0.0015">${failure}</testcase>`;

describe("a failure's kind, by the type the runner writes (vitest, fixtures/vitest/report.xml)", () => {
  it.each([
    "AssertionError",
    "java.lang.AssertionError",
    "junit.framework.AssertionFailedError",
    "org.junit.ComparisonFailure",
    "JestAssertionError",
    "AssertError",
    "ExpectationNotMetError",
    "org.opentest4j.MultipleFailuresError",
    "AssertionFailure",
    "CartTest$AssertionError",
    "chai AssertionError",
  ])("%s is an assertion", (type) => {
    const xml = vitestReport(vitestCase("t", `<failure message="expected 1 to be 2" type="${type}"></failure>`));
    expect(verdicts(xml, "vitest")).toEqual([
      { name: "t", outcome: "failed-assertion", type, message: "expected 1 to be 2" },
    ]);
  });

  it.each(["TypeError", "NotAnAssertionError", "AssertionErrorish", "Error", "assertionerror"])(
    "%s is an error",
    (type) => {
      const xml = vitestReport(vitestCase("t", `<failure message="expected 1 to be 2" type="${type}"></failure>`));
      expect(verdicts(xml, "vitest")).toEqual([
        { name: "t", outcome: "failed-error", type, message: "expected 1 to be 2" },
      ]);
    },
  );

  it("trims the type", () => {
    const xml = vitestReport(vitestCase("t", `<failure message="m" type="  AssertionError  "></failure>`));
    expect(verdicts(xml, "vitest")).toEqual([
      { name: "t", outcome: "failed-assertion", type: "AssertionError", message: "m" },
    ]);
  });

  it("without a type, reads it from the message, or else from the text", () => {
    const xml = vitestReport(
      [
        vitestCase(
          "by message",
          `<failure message="AssertionError [ERR_ASSERTION]: 1 !== 2">CartFailure: not this one</failure>`,
        ),
        vitestCase(
          "by text",
          `<failure message="1 !== 2">\n   TypeError: x is not a function\n ❯ test/cart.test.js:3:1</failure>`,
        ),
        vitestCase("dotted", `<failure message="org.opentest4j.AssertionFailedError: expected: &lt;1&gt;"></failure>`),
        vitestCase("no space after the colon", `<failure message="AssertionError:1 !== 2"></failure>`),
        vitestCase("not a name", `<failure message="1AssertionError: 1 !== 2"></failure>`),
      ].join("\n"),
    );
    expect(verdicts(xml, "vitest")).toEqual([
      {
        name: "by message",
        outcome: "failed-assertion",
        type: "AssertionError",
        message: "AssertionError [ERR_ASSERTION]: 1 !== 2",
      },
      { name: "by text", outcome: "failed-error", type: "TypeError", message: "1 !== 2" },
      {
        name: "dotted",
        outcome: "failed-assertion",
        type: "org.opentest4j.AssertionFailedError",
        message: "org.opentest4j.AssertionFailedError: expected: <1>",
      },
      { name: "no space after the colon", outcome: "failed-error", type: undefined, message: "AssertionError:1 !== 2" },
      { name: "not a name", outcome: "failed-error", type: undefined, message: "1AssertionError: 1 !== 2" },
    ]);
  });

  it("takes the first line that is not blank as the message, from the text when the message is blank", () => {
    const xml = vitestReport(
      [
        vitestCase(
          "blank lines first",
          `<failure message="&#10;  &#10;  expected 1 to be 2  &#10;- Expected" type="AssertionError"></failure>`,
        ),
        vitestCase(
          "blank message",
          `<failure message="   " type="AssertionError">\n\n  AssertionError: from the text\n</failure>`,
        ),
        vitestCase("nothing at all", `<failure message="" type="AssertionError">  </failure>`),
      ].join("\n"),
    );
    expect(verdicts(xml, "vitest")).toEqual([
      { name: "blank lines first", outcome: "failed-assertion", type: "AssertionError", message: "expected 1 to be 2" },
      {
        name: "blank message",
        outcome: "failed-assertion",
        type: "AssertionError",
        message: "AssertionError: from the text",
      },
      { name: "nothing at all", outcome: "failed-assertion", type: "AssertionError", message: undefined },
    ]);
  });
});

describe("a test's duration", () => {
  it("is its time in milliseconds, to the microsecond; none when the time is negative or not a number", () => {
    const timed = (time: string) => `<testcase classname="test/cart.test.js" name="${time}" time="${time}"></testcase>`;
    const xml = vitestReport(
      ["0.0015", "2", "0", "0.0000004", "0.0000005", "-0.5", "soon", "Infinity"].map(timed).join("\n"),
    );
    expect(read(xml, "vitest").tests.map((t) => [t.name, t.durationMs])).toEqual([
      ["0.0015", 1.5],
      ["2", 2000],
      ["0", 0],
      ["0.0000004", 0],
      ["0.0000005", 0.001],
      ["-0.5", undefined],
      ["soon", undefined],
      ["Infinity", undefined],
    ]);
  });

  it("is left out when the case has no time, as the classname is when it has none", () => {
    const xml = vitestReport(
      `<testcase classname="test/cart.test.js" name="t"></testcase><testcase name="u"></testcase>`,
    );
    expect(read(xml, "vitest").tests).toStrictEqual([
      { name: "t", outcome: "passed", file: "test/cart.test.js", classname: "test/cart.test.js" },
      { name: "u", outcome: "passed" },
    ]);
  });
});

describe("mocha's failures (fixtures/mocha/report.xml, report-xunit.xml)", () => {
  /** mocha's built-in xunit reporter: a lone <testsuite name="Mocha Tests">, failures with no type. */
  const xunit = (failure: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Mocha Tests" tests="1" failures="0" errors="1" skipped="0" timestamp="Tue, 01 Dec 2026 20:12:51 GMT" time="0.003">
<testcase classname="cart" name="t" file="/repo/test/cart.test.js" time="0.001">${failure}</testcase>
</testsuite>`;

  it("names the error by the stack's header below the message when the reporter writes no type", () => {
    const xml = xunit(`<failure>Expected values to be strictly equal:

100 !== 90

      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
      at Context.&lt;anonymous&gt; (test/cart.test.js:16:12)</failure>`);
    expect(verdicts(xml, "mocha")).toEqual([
      {
        name: "t",
        outcome: "failed-assertion",
        type: "AssertionError",
        message: "Expected values to be strictly equal:",
      },
    ]);
  });

  it("takes only a name that looks like an error class as the header: a line such as 'Note: …' names nothing", () => {
    const xml = xunit(`<failure>the cart is empty
Note: see the fixture
   at Context.&lt;anonymous&gt; (test/cart.test.js:16:12)</failure>`);
    expect(verdicts(xml, "mocha")).toEqual([
      { name: "t", outcome: "failed-error", type: undefined, message: "the cart is empty" },
    ]);
  });

  it.each(["TypeError", "shop.CartException", "chai.AssertionFailure"])("reads a %s header", (name) => {
    const xml = xunit(`<failure>the cart is empty\n${name}: the cart is empty\n    at x (a.js:1:1)</failure>`);
    const outcome = name.endsWith("AssertionFailure") ? "failed-assertion" : "failed-error";
    expect(verdicts(xml, "mocha")).toEqual([{ name: "t", outcome, type: name, message: "the cart is empty" }]);
  });

  it("reads a header with a code in brackets", () => {
    const xml = xunit(`<failure>the cart is empty\nAssertionError [ERR_ASSERTION]: the cart is empty</failure>`);
    expect(verdicts(xml, "mocha")[0]).toMatchObject({ outcome: "failed-assertion", type: "AssertionError" });
  });

  it("prefers the message's own error name to the stack's", () => {
    const xml = xunit(`<failure message="TypeError: x is undefined">the cart\nAssertionError: the cart</failure>`);
    expect(verdicts(xml, "mocha")).toEqual([
      { name: "t", outcome: "failed-error", type: "TypeError", message: "TypeError: x is undefined" },
    ]);
  });
});

describe("jest-junit's failures, which carry no type (fixtures/jest/report.xml, report-no-stack-trace.xml)", () => {
  const jest = (text: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="1" failures="1" errors="0" time="1.878">
  <testsuite name="test/cart.test.cjs" errors="0" failures="1" skipped="0" timestamp="2026-11-30T06:36:47" time="0.624" tests="1">
    <testcase classname="cart t" name="cart t" time="0.007" file="test/cart.test.cjs">
      <failure>${text}</failure>
    </testcase>
  </testsuite>
</testsuites>`;
  const STACK = "\n    at Object.&lt;anonymous&gt; (/repo/test/cart.test.cjs:16:50)";
  const one = (outcome: string, type: string | undefined, message: string) => [
    { name: "cart t", outcome, type, message },
  ];

  it.each([
    [
      "Error: expect(received).toBe(expected) // Object.is equality" + STACK,
      "Error: expect(received).toBe(expected) // Object.is equality",
    ],
    ["expect(received).toBe(expected) // Object.is equality", "expect(received).toBe(expected) // Object.is equality"],
    ["  Error: expect.assertions(2)" + STACK, "Error: expect.assertions(2)"],
    ["expect.hasAssertions()", "expect.hasAssertions()"],
  ])("reads %j as a failed expect()", (text, message) => {
    expect(verdicts(jest(text), "jest")).toEqual(one("failed-assertion", "expect", message));
  });

  it("reads an error named at the start of the text by its name", () => {
    expect(verdicts(jest("TypeError: Cannot read properties of undefined" + STACK), "jest")).toEqual(
      one("failed-error", "TypeError", "TypeError: Cannot read properties of undefined"),
    );
    expect(verdicts(jest("JestAssertionError: expect(received).toEqual(expected)" + STACK), "jest")).toEqual(
      one("failed-assertion", "JestAssertionError", "JestAssertionError: expect(received).toEqual(expected)"),
    );
  });

  it("reads text that only mentions expect( as an error, not an assertion", () => {
    expect(verdicts(jest("Error: expected the cart to load" + STACK), "jest")).toEqual(
      one("failed-error", "Error", "Error: expected the cart to load"),
    );
    expect(verdicts(jest("the cart failed, expect(received).toBe(expected)" + STACK), "jest")).toEqual(
      one("failed-error", undefined, "the cart failed, expect(received).toBe(expected)"),
    );
  });

  it("says to turn noStackTrace off only when the text has no stack and names no error", () => {
    const [nameless] = read(jest("connect ECONNREFUSED 127.0.0.1:5432"), "jest").tests;
    expect(nameless).toMatchObject({ outcome: "failed-error", message: "connect ECONNREFUSED 127.0.0.1:5432" });
    expect(nameless?.type).toBeUndefined();
    expect(nameless?.hint).toMatch(/^jest-junit wrote this failure without its stack trace/);
    const [stacked] = read(jest("connect ECONNREFUSED 127.0.0.1:5432" + STACK), "jest").tests;
    expect(stacked).toEqual({
      name: "cart t",
      outcome: "failed-error",
      file: "test/cart.test.cjs",
      classname: "cart t",
      durationMs: 7,
      message: "connect ECONNREFUSED 127.0.0.1:5432",
    });
    const [named] = read(jest("Error: connect ECONNREFUSED 127.0.0.1:5432"), "jest").tests;
    expect(named).toMatchObject({ outcome: "failed-error", type: "Error" });
    expect(named?.hint).toBeUndefined();
  });
});

describe("node --test's failures, all typed testCodeFailure: the cause decides (fixtures/node/report.xml)", () => {
  const node = (type: string, text: string) => `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
	<testsuite name="cart" time="0.018779" disabled="0" errors="0" tests="1" failures="1" skipped="0" hostname="vm">
		<testcase name="t" time="0.002006" classname="test" failure="the message">
			<failure type="${type}" message="the message">
${text}
			</failure>
		</testcase>
	</testsuite>
	<!-- duration_ms 1570.995204 -->
</testsuites>`;
  const one = (outcome: string, type: string | undefined) => [{ name: "t", outcome, type, message: "the message" }];

  it.each([
    ["an AssertionError cause", "AssertionError [ERR_ASSERTION]: 100 !== 90", "failed-assertion", "AssertionError"],
    ["a TypeError cause", "TypeError [Error]: Cannot read properties of undefined", "failed-error", "TypeError"],
    ["a cause that is a bare Error", "Error: the cart is gone", "failed-error", "testCodeFailure"],
  ])("reads %s", (_, cause, outcome, type) => {
    const text = `Error [ERR_TEST_FAILURE]: the message\n    at async Promise.all (index 0) {\n  code: 'ERR_TEST_FAILURE',\n  failureType: 'testCodeFailure',\n  cause: ${cause}\n}`;
    expect(verdicts(node("testCodeFailure", text), "node")).toEqual(one(outcome, type));
  });

  it("reads an assertion by its ERR_ASSERTION code when the cause is not named", () => {
    const text = `[Error [ERR_TEST_FAILURE]: the message] {\n  code: 'ERR_ASSERTION',\n  failureType: 'testCodeFailure',\n  cause: 'the message'\n}`;
    expect(verdicts(node("testCodeFailure", text), "node")).toEqual(one("failed-assertion", "AssertionError"));
  });

  it("reads the error's name from the text's start when there is no cause", () => {
    expect(verdicts(node("testCodeFailure", "AssertionError [ERR_ASSERTION]: 1 !== 2"), "node")).toEqual(
      one("failed-assertion", "AssertionError"),
    );
    expect(verdicts(node("testCodeFailure", "something broke"), "node")).toEqual(
      one("failed-error", "testCodeFailure"),
    );
  });

  it.each(["hookFailure", "testTimeoutFailure", "cancelledByParent"])(
    "reads a %s as an error, whatever its cause",
    (type) => {
      const text = `[Error [ERR_TEST_FAILURE]: the message] { code: 'ERR_ASSERTION', failureType: '${type}', cause: AssertionError [ERR_ASSERTION]: 1 !== 2 }`;
      expect(verdicts(node(type, text), "node")).toEqual(one("failed-error", type));
    },
  );

  it("keeps the suites a test sits in, outermost first", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
	<testcase name="top" time="0.006711" classname="test"/>
	<testsuite name="cart" time="0.018779" disabled="0" errors="0" tests="1" failures="0" skipped="0" hostname="vm">
		<testsuite name="shipping" time="0.000846" disabled="0" errors="0" tests="1" failures="0" skipped="0" hostname="vm">
			<testcase name="ships abroad" time="0.000472" classname="test"/>
		</testsuite>
		<testcase name="after" time="0.000472" classname="test"/>
	</testsuite>
	<!-- duration_ms 1570.995204 -->
</testsuites>`;
    expect(read(xml, "node").tests.map((t) => [t.name, t.suites])).toEqual([
      ["top", undefined],
      ["ships abroad", ["cart", "shipping"]],
      ["after", ["cart"]],
    ]);
    expect(read(xml, "vitest").tests.map((t) => t.suites)).toEqual([undefined, undefined, undefined]);
  });
});

describe("pytest's failures: the exception is the message's prefix (fixtures/pytest/report-continue-on-collection-errors.xml)", () => {
  const pytest = (problem: string) =>
    `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="1" time="0.314" timestamp="2026-11-30T06:37:07.953149" hostname="vm"><testcase classname="tests.test_cart.TestCart" name="test_x" time="0.001">${problem}</testcase></testsuite></testsuites>`;
  const one = (outcome: string, type: string | undefined, message: string) => [
    { name: "test_x", outcome, type, message },
  ];

  it.each([
    ["AssertionError: assert 100 == 90", "failed-assertion", "AssertionError"],
    ["assert 0 == 3", "failed-assertion", "AssertionError"],
    ["Failed: DID NOT RAISE &lt;class 'ValueError'&gt;", "failed-assertion", "Failed"],
    ["TypeError: 'NoneType' object is not subscriptable", "failed-error", "TypeError"],
    ["asserting: the cart", "failed-error", "asserting"],
  ])("reads the message %j", (message, outcome, type) => {
    const xml = pytest(
      `<failure message="${message}">self = x\n\n    def test_x(self):\nE       ${message}\n\ntests/test_cart.py:17: ${type}</failure>`,
    );
    expect(verdicts(xml, "pytest")).toEqual(one(outcome, type, message.replace("&lt;", "<").replace("&gt;", ">")));
  });

  it("reads the exception's name from the text's last line when the message does not start with it", () => {
    const xml = pytest(
      `<failure message="the cart is empty">    def test_x(self):\nE       the cart is empty\n\ntests/test_cart.py:17: shop.CartError\n  \n</failure>`,
    );
    expect(verdicts(xml, "pytest")).toEqual(one("failed-error", "shop.CartError", "the cart is empty"));
    const asserted = pytest(
      `<failure message="the cart is empty">E   the cart is empty\n\ntests/test_cart.py:17: AssertionError</failure>`,
    );
    expect(verdicts(asserted, "pytest")).toEqual(one("failed-assertion", "AssertionError", "the cart is empty"));
    const failed = pytest(
      `<failure message="the cart is empty">E   the cart is empty\n\ntests/test_cart.py:17: Failed</failure>`,
    );
    expect(verdicts(failed, "pytest")).toEqual(one("failed-assertion", "Failed", "the cart is empty"));
  });

  it("names no exception when neither the message nor the last line does", () => {
    const xml = pytest(
      `<failure message="the cart is empty">E   the cart is empty\ntests/test_cart.py:17 in test_x</failure>`,
    );
    expect(verdicts(xml, "pytest")).toEqual(one("failed-error", undefined, "the cart is empty"));
    const bare = pytest(`<failure>E   the cart is empty</failure>`);
    expect(verdicts(bare, "pytest")).toEqual(one("failed-error", undefined, "E   the cart is empty"));
  });

  it("finds the file from the module path: module segments end at the first class", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="4" time="0.314" timestamp="2026-11-30T06:37:07.953149" hostname="vm"><testcase classname="tests.test_cart.TestCart.TestInner" name="a" time="0.001" /><testcase classname="tests.test_cart" name="b" time="0.001" /><testcase classname="TestCart" name="c" time="0.001" /><testcase classname="" name="d" time="0.001" /></testsuite></testsuites>`;
    expect(read(xml, "pytest").tests.map((t) => [t.name, t.file])).toEqual([
      ["a", "tests/test_cart.py"],
      ["b", "tests/test_cart.py"],
      ["c", undefined],
      ["d", undefined],
    ]);
  });
});

describe("Go's failures: t.Error and t.Fatal are the assertions (fixtures/go/report.xml)", () => {
  const go = (cases: string, errors = "0") => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1" errors="${errors}" time="1.643890">
	<testsuite tests="1" failures="1" time="0.025000" name="example.com/shop/cart" timestamp="2026-11-30T06:37:09Z">
		<properties>
			<property name="go.version" value="go1.19.8 linux/amd64"></property>
		</properties>
${cases}
	</testsuite>
</testsuites>`;
  const failing = (name: string, text: string, message = "Failed") =>
    `<testcase classname="example.com/shop/cart" name="${name}" time="0.000000"><failure message="${message}" type="">${text}</failure></testcase>`;

  it("reads a panic, in the output or the message, and a timeout as errors; anything else as an assertion", () => {
    const xml = go(
      [
        failing(
          "TestPanics",
          "=== RUN   TestPanics&#xA;--- FAIL: TestPanics (0.00s)&#xA;panic: runtime error: index out of range [recovered]&#xA;",
        ),
        failing("TestIndented", "=== RUN   TestIndented&#xA;&#x9;panic: boom&#xA;"),
        failing("TestPanicMessage", "=== RUN   TestPanicMessage&#xA;", "panic: boom"),
        failing("TestTimesOut", "=== RUN   TestTimesOut&#xA;panic: test timed out after 1s&#xA;running tests:&#xA;"),
        failing("TestTimeoutLine", "=== RUN   TestTimeoutLine&#xA;    slow_test.go:9: test timed out after 1s&#xA;"),
        failing(
          "TestSaysPanic",
          "=== RUN   TestSaysPanic&#xA;    cart_test.go:9: want no panic:true&#xA;--- FAIL: TestSaysPanic (0.00s)&#xA;",
        ),
        failing(
          "TestAsserts",
          "=== RUN   TestAsserts&#xA;    cart_test.go:14: Total = 100, want 90&#xA;--- FAIL: TestAsserts (0.00s)&#xA;",
        ),
      ].join("\n"),
    );
    expect(verdicts(xml, "go")).toEqual([
      {
        name: "TestPanics",
        outcome: "failed-error",
        type: "panic",
        message: "panic: runtime error: index out of range [recovered]",
      },
      { name: "TestIndented", outcome: "failed-error", type: "panic", message: "panic: boom" },
      { name: "TestPanicMessage", outcome: "failed-error", type: "panic", message: "panic: boom" },
      { name: "TestTimesOut", outcome: "failed-error", type: "panic", message: "panic: test timed out after 1s" },
      {
        name: "TestTimeoutLine",
        outcome: "failed-error",
        type: "timeout",
        message: "slow_test.go:9: test timed out after 1s",
      },
      {
        name: "TestSaysPanic",
        outcome: "failed-assertion",
        type: undefined,
        message: "cart_test.go:9: want no panic:true",
      },
      {
        name: "TestAsserts",
        outcome: "failed-assertion",
        type: undefined,
        message: "cart_test.go:14: Total = 100, want 90",
      },
    ]);
  });

  it("leaves go's runner lines and its bare 'Failed' out of the message", () => {
    const noise = [
      "=== RUN   TestX",
      "=== PAUSE TestX",
      "=== CONT  TestX",
      "=== NAME  TestX",
      "--- FAIL: TestX/a (0.00s)",
      "--- SKIP: TestX/b (0.00s)",
      "--- PASS: TestX/c (0.00s)",
      "   ",
      "Failed",
    ];
    const xml = go(
      [
        failing(
          "TestX",
          [...noise, "    cart_test.go:14: the line that says it", "--- FAIL: TestX (0.00s)"].join("&#xA;"),
        ),
        failing("TestY", noise.join("&#xA;")),
        failing("TestZ", noise.join("&#xA;"), "exit status 2"),
      ].join("\n"),
    );
    expect(verdicts(xml, "go").map((t) => t.message)).toEqual([
      "cart_test.go:14: the line that says it",
      undefined,
      "exit status 2",
    ]);
  });

  it("lists a package that did not build or set up as a load error, not as a test (go-junit-report's placeholders)", () => {
    const xml = go(
      [
        failing(
          "[build failed]",
          "cart_test.go:3:2: undefined: refund&#xA;FAIL example.com/shop/cart [build failed]&#xA;",
        ),
        `<testcase classname="example.com/shop/stock" name="[setup failed]" time="0.000000"><failure message="Failed" type="">&#xA;  go: updates to go.mod needed&#xA;</failure></testcase>`,
        `<testcase name="TestMain" time="0.000000"><failure message="Failed" type="">FAIL example.com/shop/refunds [build failed]</failure></testcase>`,
        `<testcase classname="example.com/shop/orders" name="TestMain" time="0.000000"><failure message="[setup failed]" type=""></failure></testcase>`,
        failing("TestMain", "=== RUN   TestMain&#xA;    main_test.go:9: the database is down&#xA;"),
      ].join("\n"),
      "4",
    );
    const report = read(xml, "go");
    // The TestMain without a classname is placed in its suite's package, already listed: once.
    expect(report.loadErrors).toEqual([
      { classname: "example.com/shop/cart", message: "cart_test.go:3:2: undefined: refund" },
      { classname: "example.com/shop/stock", message: "go: updates to go.mod needed" },
      { classname: "example.com/shop/orders", message: "[setup failed]" },
    ]);
    expect(report.tests.map((t) => [t.name, t.outcome])).toEqual([["TestMain", "failed-assertion"]]);
  });
});

describe("an <error> element", () => {
  it("is failed-error whatever its type says, and wins over a <failure> and a <skipped> in the same case", () => {
    const xml = vitestReport(
      [
        vitestCase("typed", `<error message="expected 1 to be 2" type=" AssertionError "></error>`),
        vitestCase("named by its message", `<error message="AssertionError: expected 1 to be 2"></error>`),
        vitestCase("named by its text", `<error message="expected 1 to be 2">\n  TypeError: x is undefined</error>`),
        vitestCase("unnamed", `<error message="expected 1 to be 2"></error>`),
        vitestCase(
          "both",
          `<failure message="the failure" type="AssertionError"/><error message="the error" type="TypeError"/>`,
        ),
        vitestCase(
          "failed and skipped",
          `<skipped message="later"/><failure message="the failure" type="AssertionError"/>`,
        ),
        vitestCase("skipped", `<skipped message="&#10;not built yet"/>`),
      ].join("\n"),
      'tests="7" failures="2" errors="5"',
    );
    expect(verdicts(xml, "vitest")).toEqual([
      { name: "typed", outcome: "failed-error", type: "AssertionError", message: "expected 1 to be 2" },
      {
        name: "named by its message",
        outcome: "failed-error",
        type: "AssertionError",
        message: "AssertionError: expected 1 to be 2",
      },
      { name: "named by its text", outcome: "failed-error", type: "TypeError", message: "expected 1 to be 2" },
      { name: "unnamed", outcome: "failed-error", type: undefined, message: "expected 1 to be 2" },
      { name: "both", outcome: "failed-error", type: "TypeError", message: "the error" },
      { name: "failed and skipped", outcome: "failed-assertion", type: "AssertionError", message: "the failure" },
      { name: "skipped", outcome: "skipped", type: undefined, message: "not built yet" },
    ]);
  });
});

describe("a file, class or package that did not load", () => {
  it("is vitest's case named after its file, in the suite of that file; a test that happens to share the name stays a test", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="2" failures="2" errors="0">
  <testsuite name="test/broken.test.js" tests="1" failures="1" errors="0">
    <testcase classname="test/broken.test.js" name="test/broken.test.js" time="0"><failure message="Cannot find module '../src/refunds.js'" type="Error"/></testcase>
  </testsuite>
  <testsuite name="test/other.test.js" tests="1" failures="1" errors="0">
    <testcase classname="test/cart.test.js" name="test/cart.test.js" time="0"><failure message="expected 1 to be 2" type="AssertionError"/></testcase>
  </testsuite>
</testsuites>`;
    const report = read(xml, "vitest");
    expect(report.loadErrors).toEqual([
      {
        file: "test/broken.test.js",
        message: "Cannot find module '../src/refunds.js'",
        missing: { language: "js", module: "../src/refunds.js" },
      },
    ]);
    expect(report.tests.map((t) => [t.name, t.outcome])).toEqual([["test/cart.test.js", "failed-assertion"]]);
  });

  it("is jest-junit's 'Test suite failed to run' case, named by its file when it has no file attribute", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="1" failures="0" errors="1" time="1.878">
  <testsuite name="test/broken.test.cjs" errors="1" failures="0" skipped="0" timestamp="1970-01-01T00:00:00" time="0" tests="0">
    <testcase classname="Test suite failed to run" name="test/broken.test.cjs" time="0">
      <error>  ● Test suite failed to run

    Cannot find module &apos;../src/refunds.cjs&apos; from &apos;test/broken.test.cjs&apos;
</error>
    </testcase>
    <testcase classname="Test suite failed to run" name="test/empty.test.cjs" time="0">
      <error>  ● Test suite failed to run
</error>
    </testcase>
  </testsuite>
</testsuites>`;
    expect(read(xml, "jest")).toMatchObject({
      tests: [],
      loadErrors: [
        {
          file: "test/broken.test.cjs",
          message: "Cannot find module '../src/refunds.cjs' from 'test/broken.test.cjs'",
        },
        { file: "test/empty.test.cjs", message: "● Test suite failed to run" },
      ],
    });
  });

  it("is node's top-level case named by a script's path; a top-level test or one in a suite stays a test", () => {
    const failing = (name: string, attrs = "") =>
      `<testcase name="${name}" time="0.4" classname="test"${attrs} failure="test failed"><failure type="testCodeFailure" message="test failed">
[Error: test failed] { code: 'ERR_TEST_FAILURE', failureType: 'testCodeFailure', cause: 'test failed', exitCode: 1, signal: null }
</failure></testcase>`;
    const xml = `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
${["/repo/test/a.test.js", "test/b.test.mjs", "test/c.test.cjs", "test\\d.test.ts", "test/e.test.tsx", "test/f.spec.jsx"].map((n) => failing(n)).join("\n")}
${failing("test/g.test.mts", ' file="/repo/test/g.test.mts"')}
${failing("cart totals")}
${failing("test/h.test.json")}
${failing("a.test.js")}
	<testsuite name="cart" time="0.01" disabled="0" errors="0" tests="1" failures="1" skipped="0" hostname="vm">
${failing("test/i.test.js")}
	</testsuite>
	<!-- duration_ms 1570.995204 -->
</testsuites>`;
    const report = read(xml, "node");
    const why = "test failed (the file did not run its tests: see the runner's output)";
    expect(report.loadErrors).toEqual(
      [
        "/repo/test/a.test.js",
        "test/b.test.mjs",
        "test/c.test.cjs",
        "test\\d.test.ts",
        "test/e.test.tsx",
        "test/f.spec.jsx",
        "/repo/test/g.test.mts",
      ].map((file) => ({ file, message: why })),
    );
    expect(report.tests.map((t) => [t.name, t.outcome, t.type])).toEqual([
      ["cart totals", "failed-error", "testCodeFailure"],
      ["test/h.test.json", "failed-error", "testCodeFailure"],
      ["a.test.js", "failed-error", "testCodeFailure"],
      ["test/i.test.js", "failed-error", "testCodeFailure"],
    ]);
  });

  it("is pytest's collection error, with the last 'E' line as its reason", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="3" failures="2" skipped="0" tests="5" time="0.461" timestamp="2026-11-30T06:37:05.463897" hostname="vm"><testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">tests/test_broken.py:2: in &lt;module&gt;
    from cart.refunds import refund
E   ImportError: first
E   ModuleNotFoundError: No module named 'cart.refunds'   
tests/test_broken.py:2: ModuleNotFoundError</error></testcase><testcase classname="" name="Tests" time="0.000"><error message="collection failure">no E line here</error></testcase><testcase classname="" name="tests.test_failed" file="tests/test_failed.py" time="0.000"><failure message="collection failure">E</failure></testcase><testcase name="tests.test_unnamed" time="0.000"><failure message="assert 1 == 2">E   assert 1 == 2</failure></testcase><testcase classname="tests.test_cart" name="test_x" time="0.000"><error message="failed on setup with &quot;boom&quot;">E   boom</error></testcase></testsuite></testsuites>`;
    const report = read(xml, "pytest");
    expect(report.loadErrors).toEqual([
      {
        file: "tests/test_broken.py",
        message: "ModuleNotFoundError: No module named 'cart.refunds'",
        missing: { language: "python", module: "cart.refunds" },
      },
      { file: "Tests", message: "collection failure" },
      { file: "tests/test_failed.py", message: "collection failure" },
    ]);
    expect(report.tests.map((t) => [t.name, t.outcome, t.file])).toEqual([
      ["tests.test_unnamed", "failed-assertion", undefined],
      ["test_x", "failed-error", "tests/test_cart.py"],
    ]);
  });

  it("is Surefire's case for a class whose setup failed (named after the class, initializationError or classMethod)", () => {
    const surefire = (cases: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report.xsd" name="shop.StockTest" time="0" tests="1" errors="1" skipped="0" failures="0">
${cases}
</testsuite>`;
    const xml = surefire(
      [
        `<testcase name="shop.StockTest" classname="shop.StockTest" time="0"><error message="connect ECONNREFUSED&#10;at x" type="java.lang.IllegalStateException">java.lang.IllegalStateException: connect ECONNREFUSED</error></testcase>`,
        `<testcase name="initializationError" classname="shop.OrderTest" time="0"><error type="java.lang.Exception">java.lang.Exception: No runnable methods&#10;	at x</error></testcase>`,
        `<testcase name="classMethod" classname="shop.ShelfTest" time="0"><failure message="the shelf" type="">the shelf is gone</failure></testcase>`,
        `<testcase name="initializationError" time="0"><error message="no class">x</error></testcase>`,
      ].join("\n"),
    );
    expect(read(xml, "surefire")).toMatchObject({
      tests: [],
      loadErrors: [
        { classname: "shop.StockTest", message: "java.lang.IllegalStateException: connect ECONNREFUSED" },
        { classname: "shop.OrderTest", message: "java.lang.Exception: No runnable methods" },
        { classname: "shop.ShelfTest", message: "the shelf" },
        { message: "no class" },
      ],
    });
  });

  it.each([
    ["java.lang.ExceptionInInitializerError", true],
    ["java.lang.NoClassDefFoundError", true],
    ["java.lang.ClassNotFoundException", true],
    ["java.lang.LinkageError", true],
    ["java.lang.VerifyError", true],
    ["java.lang.NoClassDefFoundErrorX", false],
    ["my.java.lang.LinkageError", false],
    ["java.lang.IllegalStateException", false],
  ])("on Surefire, a test that failed with %s is kept as failed-error; its class is a load error: %s", (type, load) => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report.xsd" name="shop.RefundTest" time="0.089" tests="1" errors="1" skipped="0" failures="0">
  <testcase name="refundsAReturnedItem" classname="shop.RefundTest" time="0.089"><error message="the refund&#10;more" type="${type}">${type}
	at shop.RefundTest.&lt;clinit&gt;(RefundTest.java:9)
</error></testcase>
</testsuite>`;
    const report = read(xml, "surefire");
    expect(verdicts(xml, "surefire")).toEqual([
      { name: "refundsAReturnedItem", outcome: "failed-error", type, message: "the refund" },
    ]);
    expect(report.loadErrors).toEqual(load ? [{ classname: "shop.RefundTest", message: `${type}: the refund` }] : []);
  });

  it("is, for a runner not recognised, a case named by a file's path", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="4" errors="0">
  <testsuite name="all" tests="4" failures="4" errors="0">
    <testcase classname="x" name="test/broken.test.js"><failure message="cannot load" type="Error"/></testcase>
    <testcase classname="x" name="src\\broken.py" file="src/broken.py"><failure type="Error">&#10;cannot import</failure></testcase>
    <testcase classname="x" name="broken.test.js"><failure message="m" type="Error"/></testcase>
    <testcase classname="x" name="a/b c.js"><failure message="m" type="Error"/></testcase>
    <testcase classname="x" name="a/b"><failure message="m" type="Error"/></testcase>
    <testcase classname="x" name="a/b.js"><failure/></testcase>
  </testsuite>
</testsuites>`;
    const report = read(xml, "unknown");
    expect(report.loadErrors).toEqual([
      { file: "test/broken.test.js", message: "cannot load" },
      { file: "src/broken.py", message: "cannot import" },
      { file: "a/b.js", message: "failed to load" },
    ]);
    expect(report.tests.map((t) => t.name)).toEqual(["broken.test.js", "a/b c.js", "a/b"]);
  });
});

describe("failures no test case carries", () => {
  it("lists a suite's own <error> or <failure> as a load error of its file, or of its name", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="0" failures="1" errors="3">
  <testsuite name="test/a.test.js" tests="0" failures="0" errors="1"><error message="&#10;  the suite broke"/></testsuite>
  <testsuite name="shop.CartTest" file="src/test/java/shop/CartTest.java" tests="0" failures="0" errors="1"><error>the class broke</error></testsuite>
  <testsuite name="the cart suite" tests="0" failures="1" errors="0"><failure/></testsuite>
  <testsuite tests="0" failures="0" errors="1"><error message="nameless"/></testsuite>
</testsuites>`;
    expect(read(xml, "unknown")).toEqual({
      flavour: "unknown",
      tests: [],
      loadErrors: [
        { file: "test/a.test.js", message: "the suite broke" },
        { file: "src/test/java/shop/CartTest.java", message: "the class broke" },
        { classname: "the cart suite", message: "the suite failed before its tests ran" },
        { message: "nameless" },
      ],
    });
  });

  const unattributed = (n: number) => ({
    message: `the report counts ${n} failure(s) or error(s) that no test case carries: a file or package probably failed to load or build (see the test command's output)`,
  });
  const cases = `<testcase classname="c" name="fails"><failure message="m" type="AssertionError"/></testcase>
    <testcase classname="c" name="errs"><error message="m" type="TypeError"/></testcase>
    <testcase classname="c" name="passes"/>`;

  it.each([
    [
      "the root's counts",
      `<testsuites failures="2" errors="2"><testsuite name="s" failures="9" errors="9">${cases}</testsuite></testsuites>`,
      [unattributed(2)],
    ],
    [
      "the root's failures alone",
      `<testsuites failures="3"><testsuite name="s" failures="0" errors="0">${cases}</testsuite></testsuites>`,
      [unattributed(1)],
    ],
    [
      "the root's errors alone",
      `<testsuites errors="3"><testsuite name="s">${cases}</testsuite></testsuites>`,
      [unattributed(1)],
    ],
    [
      "the top suites' counts, when the root has none",
      `<testsuites><testsuite name="s" failures="2" errors="1">${cases}<testsuite name="inner" failures="7"/></testsuite><testsuite name="t" errors="1"/></testsuites>`,
      [unattributed(2)],
    ],
    ["a lone suite's counts", `<testsuite name="s" failures="2" errors="2">${cases}</testsuite>`, [unattributed(2)]],
    [
      "counts that match the cases",
      `<testsuites failures="1" errors="1"><testsuite name="s">${cases}</testsuite></testsuites>`,
      [],
    ],
    [
      "fewer counted than carried",
      `<testsuites failures="0" errors="1"><testsuite name="s">${cases}</testsuite></testsuites>`,
      [],
    ],
    [
      "counts that are not numbers",
      `<testsuites failures="many" errors="3"><testsuite name="s">${cases}</testsuite></testsuites>`,
      [unattributed(1)],
    ],
    [
      "a suite's own error, counted once",
      `<testsuites failures="1" errors="2"><testsuite name="s">${cases}<error message="the suite broke"/></testsuite></testsuites>`,
      [{ classname: "s", message: "the suite broke" }],
    ],
  ])("weighs %s", (_, body, loadErrors) => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
    expect(read(xml, "unknown").loadErrors).toEqual(loadErrors);
  });
});

describe("load errors", () => {
  it("are listed once per file, class or message, in the order first seen", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="test/a.test.js" errors="1"><error message="first"/></testsuite>
  <testsuite name="test/a.test.js" errors="1"><error message="second"/></testsuite>
  <testsuite name="cart suite" errors="1"><error message="first"/></testsuite>
  <testsuite name="cart suite" errors="1"><error message="second"/></testsuite>
  <testsuite errors="1"><error message="same"/></testsuite>
  <testsuite errors="1"><error message="same"/></testsuite>
  <testsuite errors="1"><error message="other"/></testsuite>
</testsuites>`;
    expect(read(xml, "unknown").loadErrors).toEqual([
      { file: "test/a.test.js", message: "first" },
      { classname: "cart suite", message: "first" },
      { message: "same" },
      { message: "other" },
    ]);
  });
});

describe("pytest's teardown and setup errors written as a second case of the test (fixtures/pytest/report-variants.xml)", () => {
  const pytest = (cases: string) =>
    `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="0" tests="2" time="0.055" timestamp="2026-12-01T20:12:52.344336" hostname="vm">${cases}</testsuite></testsuites>`;
  const teardown = (name: string, classname = "tests.test_sizes", phase = "teardown") =>
    `<testcase classname="${classname}" name="${name}" time="0.000"><error message="failed on ${phase} with &quot;RuntimeError: the shop fixture failed to close&quot;">E       RuntimeError: the shop fixture failed to close</error></testcase>`;
  const shop = 'failed on teardown with "RuntimeError: the shop fixture failed to close"';

  it("folds each pair into one failed-error case that says both", () => {
    const xml = pytest(
      [
        `<testcase classname="tests.test_sizes" name="test_passes" time="0.004" />`,
        teardown("test_passes"),
        `<testcase classname="tests.test_sizes" name="test_skips" time="0.004"><skipped message="later">x</skipped></testcase>`,
        teardown("test_skips", "tests.test_sizes", "setup"),
        `<testcase classname="tests.test_sizes" name="test_fails" time="0.004"><failure>E   no message attribute</failure></testcase>`,
        teardown("test_fails"),
        `<testcase classname="tests.test_sizes" name="test_quiet" time="0.004"><skipped /></testcase>`,
        teardown("test_quiet"),
      ].join(""),
    );
    expect(read(xml, "pytest").tests).toEqual([
      {
        name: "test_passes",
        outcome: "failed-error",
        file: "tests/test_sizes.py",
        classname: "tests.test_sizes",
        durationMs: 4,
        type: "teardown error",
        message: `${shop}; the test itself passed`,
      },
      {
        name: "test_skips",
        outcome: "failed-error",
        file: "tests/test_sizes.py",
        classname: "tests.test_sizes",
        durationMs: 4,
        type: "setup error",
        message: `${shop.replace("teardown", "setup")}; the test itself ended skipped (later)`,
      },
      {
        name: "test_fails",
        outcome: "failed-error",
        file: "tests/test_sizes.py",
        classname: "tests.test_sizes",
        durationMs: 4,
        type: "teardown error",
        message: `${shop}; the test itself ended failed-error (E   no message attribute)`,
      },
      {
        name: "test_quiet",
        outcome: "failed-error",
        file: "tests/test_sizes.py",
        classname: "tests.test_sizes",
        durationMs: 4,
        type: "teardown error",
        message: `${shop}; the test itself ended skipped`,
      },
    ]);
  });

  it("folds only a second case of the same class and name whose error is a setup or teardown error", () => {
    const xml = pytest(
      [
        `<testcase classname="tests.test_sizes" name="test_a" time="0.004" />`,
        teardown("test_a", "tests.test_other"),
        `<testcase classname="tests.test_sizes" name="test_b" time="0.004" />`,
        `<testcase classname="tests.test_sizes" name="test_b" time="0.004"><error message="RuntimeError: not a fixture's">E   x</error></testcase>`,
        `<testcase classname="tests.test_sizes" name="test_c" time="0.004" />`,
        `<testcase classname="tests.test_sizes" name="test_c" time="0.004"><failure message="failed on teardown with &quot;x&quot;">E   x\n\ntests/test_sizes.py:9: AssertionError</failure></testcase>`,
        teardown("test_d"),
      ].join(""),
    );
    expect(read(xml, "pytest").tests.map((t) => [t.name, t.classname, t.outcome, t.type ?? null])).toEqual([
      ["test_a", "tests.test_sizes", "passed", null],
      ["test_a", "tests.test_other", "failed-error", null],
      ["test_b", "tests.test_sizes", "passed", null],
      ["test_b", "tests.test_sizes", "failed-error", "RuntimeError"],
      ["test_c", "tests.test_sizes", "passed", null],
      ["test_c", "tests.test_sizes", "failed-assertion", "AssertionError"],
      ["test_d", "tests.test_sizes", "failed-error", null],
    ]);
  });

  it("is left alone in other runners' reports", () => {
    const xml = pytest(`<testcase classname="tests.test_sizes" name="test_a" time="0.004" />${teardown("test_a")}`);
    expect(read(xml, "unknown").tests.map((t) => t.outcome)).toEqual(["passed", "failed-error"]);
  });
});

describe("vitest's describe block whose beforeAll or afterAll threw (fixtures/vitest/report.xml)", () => {
  const file = (name: string, cases: string) =>
    `<testsuite name="${name}" timestamp="2026-11-30T06:36:26.510Z" hostname="vm" tests="3" failures="1" errors="0" skipped="1" time="0.02">${cases}</testsuite>`;
  const c = (classname: string, name: string, inner = "") =>
    `<testcase classname="${classname}" name="${name}" time="0">${inner}</testcase>`;
  const hook = (message: string, type = ' type="Error"') =>
    `<failure message="${message}"${type}>Error: ${message}</failure>`;

  it("turns the tests in the block into failed-error with the outermost block's reason, and drops the blocks' own cases", () => {
    const s = "test/stock.test.js";
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="9" failures="4" errors="0">
${file(
  s,
  [
    c(s, "stock &gt; shelves &gt; files stock", "<skipped/>"),
    c(s, "stock &gt; shelves &gt; counts stock", hook("expected 1 to be 2", ' type="AssertionError"')),
    c(s, "stock &gt; shelves &gt; lists stock"),
    c(s, "stock &gt; shelves", hook("inner hook")),
    c(s, "stock", hook("connect ECONNREFUSED 127.0.0.1:5432")),
    c(s, "stocktaking &gt; counts", "<skipped/>"),
    c(s, "orders &gt; takes one", "<skipped/>"),
    c(s, "orders", `<failure message=""/>`),
  ].join(""),
)}
${file("test/other.test.js", c("test/other.test.js", "stock &gt; files stock", "<skipped/>"))}
</testsuites>`;
    expect(verdicts(xml, "vitest")).toEqual([
      {
        name: "stock > shelves > files stock",
        outcome: "failed-error",
        type: "Error",
        message: 'a beforeAll/afterAll hook of "stock" failed: connect ECONNREFUSED 127.0.0.1:5432',
      },
      {
        name: "stock > shelves > counts stock",
        outcome: "failed-assertion",
        type: "AssertionError",
        message: "expected 1 to be 2",
      },
      {
        name: "stock > shelves > lists stock",
        outcome: "failed-error",
        type: "Error",
        message: 'a beforeAll/afterAll hook of "stock" failed: connect ECONNREFUSED 127.0.0.1:5432',
      },
      { name: "stocktaking > counts", outcome: "skipped", type: undefined, message: undefined },
      {
        name: "orders > takes one",
        outcome: "failed-error",
        type: undefined,
        message: 'a beforeAll/afterAll hook of "orders" failed: no message',
      },
      { name: "stock > files stock", outcome: "skipped", type: undefined, message: undefined },
    ]);
  });

  it("keeps a failed test that no other test sits in, and is left alone in other runners' reports", () => {
    const s = "test/stock.test.js";
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="2" failures="1" errors="0">
${file(s, [c(s, "stock &gt; files stock", "<skipped/>"), c(s, "stock", hook("connect ECONNREFUSED")), c(s, "stock &gt; counts", hook("boom"))].join(""))}
</testsuites>`;
    expect(read(xml, "unknown").tests.map((t) => [t.name, t.outcome])).toEqual([
      ["stock > files stock", "skipped"],
      ["stock", "failed-error"],
      ["stock > counts", "failed-error"],
    ]);
    const lone = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="2" failures="1" errors="0">
${file(s, [c(s, "stock &gt; files stock", "<skipped/>"), c(s, "stocks", hook("boom"))].join(""))}
</testsuites>`;
    expect(read(lone, "vitest").tests.map((t) => [t.name, t.outcome])).toEqual([
      ["stock > files stock", "skipped"],
      ["stocks", "failed-error"],
    ]);
  });
});

describe("the edges of each rule", () => {
  it("reads an error name with a code in brackets written without a space before them", () => {
    const xml = vitestReport(vitestCase("t", `<failure message="AssertionError[ERR_ASSERTION]: 1 !== 2"></failure>`));
    expect(verdicts(xml, "vitest")).toEqual([
      {
        name: "t",
        outcome: "failed-assertion",
        type: "AssertionError",
        message: "AssertionError[ERR_ASSERTION]: 1 !== 2",
      },
    ]);
  });

  it("on mocha's xunit reporter, takes a stack header only at a line's start, not an error named inside a message", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Mocha Tests" tests="1" failures="0" errors="1" skipped="0" timestamp="Tue, 01 Dec 2026 20:12:51 GMT" time="0.003">
<testcase classname="cart" name="t" file="/repo/test/cart.test.js" time="0.001"><failure>the cart threw ShopError: gone
  at Context.&lt;anonymous&gt; (test/cart.test.js:16:12)</failure></testcase>
</testsuite>`;
    expect(verdicts(xml, "mocha")).toEqual([
      { name: "t", outcome: "failed-error", type: undefined, message: "the cart threw ShopError: gone" },
    ]);
  });

  it("on jest, counts only an indented 'at' line as a stack frame, not ' at ' inside the message", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="1" failures="1" errors="0" time="1.878">
  <testsuite name="cart" errors="0" failures="1" skipped="0" timestamp="2026-11-30T06:36:47" time="0.624" tests="1">
    <testcase classname="cart t" name="cart t" time="0.007"><failure>connect ECONNREFUSED at 127.0.0.1:5432</failure></testcase>
  </testsuite>
</testsuites>`;
    expect(read(xml, "jest").tests[0]?.hint).toMatch(/^jest-junit wrote this failure without its stack trace/);
  });

  it("on jest-junit with suiteNameTemplate {filepath}, takes the file from the suite's name, but not a describe title", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="2" failures="0" errors="0" time="1.878">
  <testsuite name="test/cart.test.cjs" errors="0" failures="0" skipped="0" timestamp="2026-11-30T06:36:47" time="0.624" tests="1">
    <testcase classname="cart totals" name="cart totals" time="0.001"></testcase>
  </testsuite>
  <testsuite name="cart totals" errors="0" failures="0" skipped="0" timestamp="2026-11-30T06:36:47" time="0.624" tests="1">
    <testcase classname="cart totals" name="cart totals" time="0.001"></testcase>
  </testsuite>
</testsuites>`;
    expect(read(xml, "jest").tests.map((t) => t.file)).toEqual(["test/cart.test.cjs", undefined]);
  });

  it("reads a report with every runner's rules without failing, even one whose cases sit in no suite (node's)", async () => {
    const xml = await fixtureReport("node");
    for (const flavour of ["vitest", "jest", "mocha", "pytest", "go", "surefire", "unknown"] as const) {
      expect(read(xml, flavour).tests.find((t) => t.name === "loads the cart module")?.outcome, flavour).toBe("passed");
    }
  });

  it("on pytest, reads a module path with capitals inside a segment as a module, and a nameless case as named ''", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2" time="0.314" timestamp="2026-11-30T06:37:07.953149" hostname="vm"><testcase classname="tests.test_Cart.TestCart" name="test_x" time="0.001" /><testcase classname="tests.test_cart" time="0.001" /></testsuite></testsuites>`;
    expect(read(xml, "pytest").tests.map((t) => [t.name, t.file])).toEqual([
      ["test_x", "tests/test_Cart.py"],
      ["", "tests/test_cart.py"],
    ]);
  });

  it("on pytest with a short traceback (--tb=line, --tb=short), reads the message, not a word of the last line", () => {
    const pytest = (message: string, text: string) =>
      `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="1" time="0.314" timestamp="2026-11-30T06:37:07.953149" hostname="vm"><testcase classname="tests.test_cart" name="test_x" time="0.001"><failure message="${message}">${text}</failure></testcase></testsuite></testsuites>`;
    expect(verdicts(pytest("assert 1 == 2", "/repo/tests/test_cart.py:3: assert 1 == 2"), "pytest")).toEqual([
      { name: "test_x", outcome: "failed-assertion", type: "AssertionError", message: "assert 1 == 2" },
    ]);
    expect(verdicts(pytest("the cart is empty", "tests/test_cart.py:17: in test_x"), "pytest")).toEqual([
      { name: "test_x", outcome: "failed-error", type: undefined, message: "the cart is empty" },
    ]);
    expect(verdicts(pytest("TypeError: cannot assert on None", "tests/test_cart.py:17: TypeError"), "pytest")).toEqual([
      { name: "test_x", outcome: "failed-error", type: "TypeError", message: "TypeError: cannot assert on None" },
    ]);
  });

  it("on Go, reads a panic that opens the output, and takes no message a failure does not carry", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="2" errors="0" time="1.643890">
	<testsuite tests="2" failures="2" time="0.025000" name="example.com/shop/cart" timestamp="2026-11-30T06:37:09Z">
		<properties><property name="go.version" value="go1.19.8 linux/amd64"></property></properties>
		<testcase classname="example.com/shop/cart" name="TestA" time="0.000000"><failure message="Failed" type="">panic: boom&#xA;</failure></testcase>
		<testcase classname="example.com/shop/cart" name="TestB" time="0.000000"><failure type="">=== RUN   TestB&#xA;--- FAIL: TestB (0.00s)&#xA;</failure></testcase>
		<testcase classname="example.com/shop/cart" name="TestC" time="0.000000"><failure message="Failed" type="">=== RUN   TestC&#xA;    cart_test.go:9: the log says --- FAIL: elsewhere&#xA;</failure></testcase>
	</testsuite>
</testsuites>`;
    expect(verdicts(xml, "go")).toEqual([
      { name: "TestA", outcome: "failed-error", type: "panic", message: "panic: boom" },
      { name: "TestB", outcome: "failed-assertion", type: undefined, message: undefined },
      {
        name: "TestC",
        outcome: "failed-assertion",
        type: undefined,
        message: "cart_test.go:9: the log says --- FAIL: elsewhere",
      },
    ]);
  });

  it("on the generic rules, a path a dot only inside, or written with a leading space", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="2" errors="0">
  <testsuite name="all" tests="2" failures="2" errors="0">
    <testcase classname="x" name="v1.2/cart"><failure message="m" type="Error"/></testcase>
    <testcase classname="x" name=" test/broken.test.js"><failure message="cannot load" type="Error"/></testcase>
  </testsuite>
</testsuites>`;
    const report = read(xml, "unknown");
    expect(report.tests.map((t) => t.name)).toEqual(["v1.2/cart"]);
    expect(report.loadErrors).toEqual([{ file: " test/broken.test.js", message: "cannot load" }]);
  });

  it("on pytest, folds a teardown error only by its message's prefix", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="2" time="0.055" timestamp="2026-12-01T20:12:52.344336" hostname="vm"><testcase classname="tests.test_sizes" name="test_a" time="0.004" /><testcase classname="tests.test_sizes" name="test_a" time="0.000"><error message="RuntimeError: failed on teardown with x">E   x</error></testcase></testsuite></testsuites>`;
    expect(read(xml, "pytest").tests.map((t) => t.outcome)).toEqual(["passed", "failed-error"]);
  });

  it("on vitest, folds a test into the innermost block that failed when no outer one did", () => {
    const s = "test/stock.test.js";
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="2" failures="1" errors="0">
<testsuite name="${s}" tests="2" failures="1" errors="0" skipped="1">
<testcase classname="${s}" name="stock &gt; shelves &gt; files stock" time="0"><skipped/></testcase>
<testcase classname="${s}" name="stock &gt; shelves" time="0"><failure message="inner hook" type="Error">Error: inner hook</failure></testcase>
</testsuite>
</testsuites>`;
    expect(verdicts(xml, "vitest")).toEqual([
      {
        name: "stock > shelves > files stock",
        outcome: "failed-error",
        type: "Error",
        message: 'a beforeAll/afterAll hook of "stock > shelves" failed: inner hook',
      },
    ]);
  });
});

describe("the last edges", () => {
  it("on mocha's xunit reporter, reads a stack header with a code in brackets and no space before them", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Mocha Tests" tests="1" failures="0" errors="1" skipped="0" timestamp="Tue, 01 Dec 2026 20:12:51 GMT" time="0.003">
<testcase classname="cart" name="t" file="/repo/test/cart.test.js" time="0.001"><failure>1 !== 2
AssertionError[ERR_ASSERTION]: 1 !== 2
  at Context.&lt;anonymous&gt; (test/cart.test.js:16:12)</failure></testcase>
</testsuite>`;
    expect(verdicts(xml, "mocha")).toEqual([
      { name: "t", outcome: "failed-assertion", type: "AssertionError", message: "1 !== 2" },
    ]);
  });

  it("on pytest, reads any error of a case with no class as a load error, not only a collection failure", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="1" time="0.461" timestamp="2026-11-30T06:37:05.463897" hostname="vm"><testcase classname="" name="tests.test_conf" time="0.000"><error message="internal error">E   RuntimeError: the plugin broke</error></testcase></testsuite></testsuites>`;
    expect(read(xml, "pytest")).toMatchObject({
      tests: [],
      loadErrors: [{ file: "tests/test_conf.py", message: "RuntimeError: the plugin broke" }],
    });
  });

  it("on vitest, folds tests into a block whose afterAll failed an assertion, and into a block of a short name", () => {
    const s = "test/db.test.js";
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="4" failures="2" errors="0">
<testsuite name="${s}" tests="4" failures="2" errors="0" skipped="0">
<testcase classname="${s}" name="stock &gt; counts" time="0"></testcase>
<testcase classname="${s}" name="stock" time="0"><failure message="expected 0 to be 1" type="AssertionError">AssertionError: expected 0 to be 1</failure></testcase>
<testcase classname="${s}" name="db &gt; connects" time="0"></testcase>
<testcase classname="${s}" name="db" time="0"><failure message="connect ECONNREFUSED" type="Error">Error: connect ECONNREFUSED</failure></testcase>
</testsuite>
</testsuites>`;
    expect(verdicts(xml, "vitest")).toEqual([
      {
        name: "stock > counts",
        outcome: "failed-error",
        type: "AssertionError",
        message: 'a beforeAll/afterAll hook of "stock" failed: expected 0 to be 1',
      },
      {
        name: "db > connects",
        outcome: "failed-error",
        type: "Error",
        message: 'a beforeAll/afterAll hook of "db" failed: connect ECONNREFUSED',
      },
    ]);
  });

  it("on vitest, takes only a failed case for a block: a passed or skipped test named like one is a test", () => {
    const s = "test/stock.test.js";
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="4" failures="0" errors="0">
<testsuite name="${s}" tests="4" failures="0" errors="0" skipped="1">
<testcase classname="${s}" name="stock" time="0"></testcase>
<testcase classname="${s}" name="stock &gt; counts" time="0"><skipped/></testcase>
<testcase classname="${s}" name="shelf" time="0"><skipped/></testcase>
<testcase classname="${s}" name="shelf &gt; holds" time="0"></testcase>
</testsuite>
</testsuites>`;
    expect(read(xml, "vitest").tests.map((t) => [t.name, t.outcome])).toEqual([
      ["stock", "passed"],
      ["stock > counts", "skipped"],
      ["shelf", "skipped"],
      ["shelf > holds", "passed"],
    ]);
  });
});
