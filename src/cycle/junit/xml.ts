import { XMLParser, XMLValidator } from "fast-xml-parser";
import { JUnitError } from "./types.js";

/** The JUnit XML, read into plain records and nothing decided yet. */

export interface RawProblem {
  message?: string;
  type?: string;
  /** The element's text (a stack trace, the runner's output). */
  text: string;
}

interface RawSuite {
  attrs: Record<string, string>;
  /** `<failure>`/`<error>` directly under the suite: runners use it for a suite that broke. */
  problems: RawProblem[];
}

export interface RawCase {
  attrs: Record<string, string>;
  failures: RawProblem[];
  errors: RawProblem[];
  skipped: RawProblem | undefined;
  /** Enclosing suites, outermost first. */
  suites: RawSuite[];
}

export interface RawReport {
  rootAttrs: Record<string, string>;
  /** True when the root is `<testsuites>`, false for a lone `<testsuite>`. */
  wrapped: boolean;
  suites: Array<RawSuite & { depth: number }>;
  cases: RawCase[];
}

const ATTR = "@_";
const ARRAYS = new Set(["testsuite", "testcase", "failure", "error", "skipped", "property"]);

const parser = new XMLParser({
  ignoreAttributes: false,
  // Node writes a `failure` attribute beside a <failure> child: keep the two apart.
  attributeNamePrefix: ATTR,
  textNodeName: "#text",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: true,
  isArray: (name) => ARRAYS.has(name),
});

type Node = Record<string, unknown>;

/** An element is a string when it has only text, an object when it has attributes or children. */
function asNode(value: unknown): Node {
  if (value && typeof value === "object") return value as Node;
  return typeof value === "string" ? { "#text": value } : {};
}

function attributes(node: Node): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const [key, value] of Object.entries(node)) {
    if (typeof value === "string" && key.startsWith(ATTR)) attrs[key.slice(ATTR.length)] = value;
  }
  return attrs;
}

function children(node: Node, name: string): Node[] {
  const value = node[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(asNode);
}

function problem(node: Node): RawProblem {
  const attrs = attributes(node);
  const text = typeof node["#text"] === "string" ? node["#text"] : "";
  return {
    ...(attrs.message !== undefined ? { message: attrs.message } : {}),
    ...(attrs.type !== undefined ? { type: attrs.type } : {}),
    text,
  };
}

function rawCase(node: Node, suites: RawSuite[]): RawCase {
  const skipped = children(node, "skipped")[0];
  return {
    attrs: attributes(node),
    failures: children(node, "failure").map(problem),
    errors: children(node, "error").map(problem),
    skipped: skipped ? problem(skipped) : undefined,
    suites,
  };
}

function walkSuite(node: Node, ancestors: RawSuite[], report: RawReport): void {
  const suite: RawSuite = {
    attrs: attributes(node),
    problems: [...children(node, "failure"), ...children(node, "error")].map(problem),
  };
  const path = [...ancestors, suite];
  report.suites.push({ ...suite, depth: ancestors.length });
  for (const testcase of children(node, "testcase")) report.cases.push(rawCase(testcase, path));
  for (const child of children(node, "testsuite")) walkSuite(child, path, report);
}

function lineAndColumn(err: { line?: number; col?: number }): string {
  return err.line !== undefined ? ` at line ${err.line}, column ${err.col ?? 0}` : "";
}

/** Parses JUnit XML into raw records; throws JUnitError when it is not well-formed JUnit. */
export function readJUnitXml(xml: string): RawReport {
  if (typeof xml !== "string" || xml.trim() === "") {
    throw new JUnitError(
      "malformed-xml",
      "the JUnit report is empty: the test command wrote no XML (check its reporter settings)",
    );
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new JUnitError(
      "malformed-xml",
      `the JUnit report is not well-formed XML${lineAndColumn(valid.err)}: ${valid.err.msg} (was the run cut short while writing it?)`,
    );
  }
  let document: Node;
  try {
    document = parser.parse(xml) as Node;
  } catch (error) {
    throw new JUnitError("malformed-xml", `the JUnit report could not be parsed: ${(error as Error).message}`);
  }
  const roots = Object.keys(document).filter((key) => !key.startsWith("?") && key !== "#text");
  const report: RawReport = { rootAttrs: {}, wrapped: true, suites: [], cases: [] };
  if (roots.length === 1 && roots[0] === "testsuites") {
    // <testsuites/> parses to "", which is a report with no suites.
    const root = asNode(document.testsuites);
    report.rootAttrs = attributes(root);
    for (const testcase of children(root, "testcase")) report.cases.push(rawCase(testcase, []));
    for (const suite of children(root, "testsuite")) walkSuite(suite, [], report);
    return report;
  }
  if (roots.length === 1 && roots[0] === "testsuite") {
    const [suite] = children(document, "testsuite");
    report.wrapped = false;
    report.rootAttrs = attributes(suite ?? {});
    if (suite) walkSuite(suite, [], report);
    return report;
  }
  const found = roots.length ? roots.map((r) => `<${r}>`).join(", ") : "no element";
  throw new JUnitError(
    "not-junit",
    `this is not a JUnit report: its root is ${found}, where JUnit has <testsuites> or <testsuite> (point the cycle's junit setting at the file the test reporter writes)`,
  );
}
