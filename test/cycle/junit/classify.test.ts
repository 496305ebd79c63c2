import { describe, expect, it } from "vitest";
import { detectFlavour, parseJUnit, type Flavour } from "../../../src/cycle/junit/index.js";

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
