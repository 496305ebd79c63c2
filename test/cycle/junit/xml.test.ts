import { describe, expect, it } from "vitest";
import { JUnitError } from "../../../src/cycle/junit/index.js";
import { readJUnitStream, readJUnitXml } from "../../../src/cycle/junit/xml.js";

/**
 * The raw read of a report (xml.ts): which elements are a suite, a case, a failure, an error or a
 * skip, where each sits, how much of a huge text is kept, and what is refused.
 */

const refusal = (xml: unknown) => {
  try {
    readJUnitXml(xml as string);
  } catch (error) {
    return error instanceof JUnitError ? { code: error.code, message: error.message } : error;
  }
  return undefined;
};

describe("the elements of a report", () => {
  it("reads suites, nested suites, cases and their problems, each in its place", () => {
    const raw = readJUnitXml(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="all" failures="2">
  <testsuite name="outer" file="a.js">
    <properties><property name="p" value="v"/><testcase name="not a case"/></properties>
    <testcase name="one" classname="c"><failure message="m1" type="T1">text one</failure><failure message="m2"/></testcase>
    <testsuite name="inner">
      <testcase name="two"><error type="E">&lt;boom&gt;<![CDATA[ <raw> ]]></error><skipped message="first"/><skipped message="second"/></testcase>
      <testcase name="three"><system-out>out</system-out><skipped/></testcase>
    </testsuite>
    <failure message="the suite broke">suite text</failure>
    <skipped message="a suite's skip is nothing"/>
    <testcase name="four"><failure><failure message="nested">x</failure></failure></testcase>
  </testsuite>
  <testcase name="loose"/>
  <other><testsuite name="not a suite"/><testcase name="not a case either"/></other>
</testsuites>`);
    const outer = {
      attrs: { name: "outer", file: "a.js" },
      problems: [{ message: "the suite broke", text: "suite text" }],
      depth: 0,
    };
    const inner = { attrs: { name: "inner" }, problems: [], depth: 1 };
    expect(raw).toEqual({
      rootAttrs: { name: "all", failures: "2" },
      wrapped: true,
      suites: [outer, inner],
      cases: [
        {
          attrs: { name: "one", classname: "c" },
          failures: [
            { message: "m1", type: "T1", text: "text one" },
            { message: "m2", text: "" },
          ],
          errors: [],
          skipped: undefined,
          suites: [outer],
        },
        {
          attrs: { name: "two" },
          failures: [],
          errors: [{ type: "E", text: "<boom> <raw> " }],
          skipped: { message: "first", text: "" },
          suites: [outer, inner],
        },
        { attrs: { name: "three" }, failures: [], errors: [], skipped: { text: "" }, suites: [outer, inner] },
        { attrs: { name: "four" }, failures: [{ text: "" }], errors: [], skipped: undefined, suites: [outer] },
        { attrs: { name: "loose" }, failures: [], errors: [], skipped: undefined, suites: [] },
      ],
    });
    // A problem carries a message or a type only when its element has that attribute.
    expect(
      raw.cases.flatMap((c) => [...c.failures, ...c.errors, ...(c.skipped ? [c.skipped] : [])]).map(Object.keys),
    ).toEqual([
      ["message", "type", "text"],
      ["message", "text"],
      ["type", "text"],
      ["message", "text"],
      ["text"],
      ["text"],
    ]);
  });

  it("takes a suite's own <error> as its problem, as its <failure>", () => {
    const raw = readJUnitXml(
      `<testsuites><testsuite name="s"><error message="boom" type="E">text</error></testsuite></testsuites>`,
    );
    expect(raw.suites[0]?.problems).toEqual([{ message: "boom", type: "E", text: "text" }]);
  });

  it("reads a lone <testsuite> as the root, unwrapped", () => {
    const raw = readJUnitXml(
      `<testsuite name="Mocha Tests" failures="1"><testcase name="t"/><testsuite name="inner"><testcase name="u"/></testsuite></testsuite>`,
    );
    expect(raw.wrapped).toBe(false);
    expect(raw.rootAttrs).toEqual({ name: "Mocha Tests", failures: "1" });
    expect(raw.suites.map((s) => [s.attrs.name, s.depth])).toEqual([
      ["Mocha Tests", 0],
      ["inner", 1],
    ]);
    expect(raw.cases.map((c) => [c.attrs.name, c.suites.map((s) => s.attrs.name)])).toEqual([
      ["t", ["Mocha Tests"]],
      ["u", ["Mocha Tests", "inner"]],
    ]);
  });

  it("reads a report of many chunks, as a string or as a stream", async () => {
    const cases = Array.from(
      { length: 3_000 },
      (_, i) => `<testcase name="case ${i}" classname="the cart's tests"/>`,
    ).join("");
    const xml = `<testsuites><testsuite name="s">${cases}</testsuite></testsuites>`;
    expect(xml.length).toBeGreaterThan(2 * 64 * 1024);
    const names = readJUnitXml(xml).cases.map((c) => c.attrs.name);
    expect(names).toHaveLength(3_000);
    expect(names[2_999]).toBe("case 2999");
    async function* chunks() {
      for (let at = 0; at < xml.length; at += 1_000) yield xml.slice(at, at + 1_000);
    }
    expect(await readJUnitStream(chunks())).toStrictEqual(readJUnitXml(xml));
  });
});

describe("what is kept of huge values", () => {
  it("keeps a failure's text whole up to its head and tail sizes", () => {
    const text = "h".repeat(64 * 1024) + "t".repeat(16 * 1024);
    const raw = readJUnitXml(`<testsuites><testcase name="t"><failure>${text}</failure></testcase></testsuites>`);
    expect(raw.cases[0]?.failures[0]?.text).toBe(text);
  });

  it("keeps the head and the tail of a longer text, and says how much was left out", () => {
    const text = "h".repeat(64 * 1024) + "m".repeat(1_000) + "t".repeat(16 * 1024);
    const raw = readJUnitXml(`<testsuites><testcase name="t"><failure>${text}</failure></testcase></testsuites>`);
    expect(raw.cases[0]?.failures[0]?.text).toBe(
      `${"h".repeat(64 * 1024)}\n[… 1000 characters of this output left out …]\n${"t".repeat(16 * 1024)}`,
    );
  });

  it("keeps the head and tail of a text that arrives in many small pieces", () => {
    const pieces = Array.from({ length: 12_000 }, (_, i) => `line ${i}\n`).join("");
    const raw = readJUnitXml(
      `<testsuites><testcase name="t"><failure>${pieces.replace(/\n/g, "&#10;")}</failure></testcase></testsuites>`,
    );
    const kept = raw.cases[0]?.failures[0]?.text ?? "";
    expect(kept.startsWith("line 0\nline 1\n")).toBe(true);
    expect(kept.endsWith("line 11998\nline 11999\n")).toBe(true);
    expect(kept).toMatch(/\n\[… \d+ characters of this output left out …\]\n/);
    expect(kept.length).toBeLessThan(pieces.length);
  });

  it("cuts an attribute longer than 16 KiB, and keeps one that long whole", () => {
    const long = "a".repeat(16 * 1024);
    const raw = readJUnitXml(
      `<testsuites><testcase name="${long}b" classname="${long}"><failure message="${long}cc"/></testcase></testsuites>`,
    );
    expect(raw.cases[0]?.attrs).toEqual({ name: `${long}…`, classname: long });
    expect(raw.cases[0]?.failures[0]?.message).toBe(`${long}…`);
  });

  it("keeps names of every length exactly", () => {
    const names = Array.from({ length: 30 }, (_, n) => "n".repeat(n));
    const raw = readJUnitXml(
      `<testsuites>${names.map((n) => `<testcase name="${n}"><failure>${n}</failure></testcase>`).join("")}</testsuites>`,
    );
    expect(raw.cases.map((c) => c.attrs.name)).toEqual(names);
    expect(raw.cases.map((c) => c.failures[0]?.text)).toEqual(names);
  });
});

describe("what is refused", () => {
  it("refuses what is not text, an empty report, and one of blanks", () => {
    expect(refusal(undefined)).toEqual({ code: "malformed-xml", message: "the JUnit report is not text" });
    for (const xml of ["", "  \n\t "])
      expect(refusal(xml)).toEqual({
        code: "malformed-xml",
        message: "the JUnit report is empty: the test command wrote no XML (check its reporter settings)",
      });
  });

  it("refuses XML whose root is not JUnit's, naming it", () => {
    expect(refusal("<project><testsuites/></project>")).toEqual({
      code: "not-junit",
      message:
        "this is not a JUnit report: its root is <project>, where JUnit has <testsuites> or <testsuite> (point the cycle's junit setting at the file the test reporter writes)",
    });
  });

  it("refuses XML cut short or broken, saying where and why", () => {
    expect(refusal("<testsuites>\n  <testcase name=")).toEqual({
      code: "malformed-xml",
      message:
        "the JUnit report is not well-formed XML at line 2, column 17: unclosed tag: testsuites (was the run cut short while writing it?)",
    });
    expect(refusal(`<testsuites>${"\n".repeat(11)}<testcase name="t"></testsuite>`)).toEqual({
      code: "malformed-xml",
      message:
        "the JUnit report is not well-formed XML at line 12, column 31: unexpected close tag. (was the run cut short while writing it?)",
    });
    expect(refusal("<testsuites></testsuite>")).toEqual({
      code: "malformed-xml",
      message:
        "the JUnit report is not well-formed XML at line 1, column 24: unexpected close tag. (was the run cut short while writing it?)",
    });
    expect(refusal("<!-- only a comment -->")).toEqual({
      code: "malformed-xml",
      message:
        "the JUnit report is not well-formed XML at line 1, column 23: document must contain a root element. (was the run cut short while writing it?)",
    });
  });

  it("refuses a report whose markup breaks in a later chunk", () => {
    const xml = `<testsuites>${'<testcase name="t"/>'.repeat(5_000)}<testcase name="x"></testsuites>`;
    expect(refusal(xml)).toMatchObject({
      code: "malformed-xml",
      message: expect.stringMatching(
        /^the JUnit report is not well-formed XML at line 1, column \d+: unexpected close tag/,
      ),
    });
  });

  it("reads on past a control character, a character reference to one, or an HTML entity", () => {
    const raw = readJUnitXml(
      `<testsuites><testcase name="t"><failure message="a&nbsp;b">\u001b[31mred&#27;[0m &amp; more</failure></testcase></testsuites>`,
    );
    expect(raw.cases.map((c) => c.attrs.name)).toEqual(["t"]);
    expect(raw.cases[0]?.failures[0]?.text).toContain("red");
  });
});
