import { SaxesParser, type SaxesTagPlain } from "saxes";
import { JUnitError } from "./types.js";

/**
 * The JUnit XML, read into plain records and nothing decided yet. One pass of a streaming,
 * well-formedness-checking parser (saxes): a report of 200,000 test cases is read in chunks, never
 * held whole, and a failure body of any size is kept to its head and tail.
 */

export interface RawProblem {
  message?: string;
  type?: string;
  /** The element's text (a stack trace, the runner's output), its head and tail when it is huge. */
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

/** How much of a failure's text is kept: the head (where the error is named) and the tail (pytest ends with it). */
const TEXT_HEAD_CHARS = 64 * 1024;
const TEXT_TAIL_CHARS = 16 * 1024;
/** Attribute values (a message) are cut to this many characters. */
const ATTRIBUTE_CHARS = 16 * 1024;

/** Collects an element's text up to a head and a tail, whatever its size. */
class BoundedText {
  private head = "";
  private tail = "";
  private dropped = 0;

  add(chunk: string): void {
    if (this.head.length < TEXT_HEAD_CHARS) {
      const room = TEXT_HEAD_CHARS - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
      if (chunk === "") return;
    }
    const joined = this.tail + chunk;
    if (joined.length > TEXT_TAIL_CHARS) {
      this.dropped += joined.length - TEXT_TAIL_CHARS;
      this.tail = joined.slice(-TEXT_TAIL_CHARS);
    } else {
      this.tail = joined;
    }
  }

  toString(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[… ${this.dropped} characters of this output left out …]\n${this.tail}`;
  }
}

/**
 * A copy of a string that holds nothing else alive. The parser hands out values as slices of the
 * chunk they were read from, and V8 keeps a slice's whole chunk (256 KiB of text) alive as long as
 * the slice: kept as they come, the names of 200,000 test cases would hold the whole report. Short
 * strings are always copied by V8; a longer one is copied by flattening a concatenation.
 */
const own = (value: string): string => (value.length < 13 ? value : `${value} `.slice(0, -1));

const cut = (value: string) => (value.length > ATTRIBUTE_CHARS ? `${value.slice(0, ATTRIBUTE_CHARS)}…` : value);

function attributesOf(tag: SaxesTagPlain): Record<string, string> {
  const attrs = tag.attributes;
  for (const key in attrs) {
    const value = attrs[key];
    if (value !== undefined) attrs[key] = own(cut(value));
  }
  return attrs;
}

type Open =
  | { kind: "suite"; suite: RawSuite & { depth: number } }
  | { kind: "case"; testcase: RawCase }
  | { kind: "problem"; attrs: Record<string, string>; text: BoundedText; into: (p: RawProblem) => void }
  | { kind: "other" };

const TOLERATED = /: (disallowed character|malformed character entity|undefined entity)\.$/;

const NOT_JUNIT = (root: string) =>
  new JUnitError(
    "not-junit",
    `this is not a JUnit report: its root is <${root}>, where JUnit has <testsuites> or <testsuite> (point the cycle's junit setting at the file the test reporter writes)`,
  );

/** A JUnit reader fed in chunks: `write` each, then `end` for the report. */
class JUnitXmlReader {
  private readonly parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  private readonly report: RawReport = { rootAttrs: {}, wrapped: true, suites: [], cases: [] };
  private readonly stack: Open[] = [];
  private suitePath: RawSuite[] = [];
  private sawContent = false;
  private sawRoot = false;
  private failure: Error | undefined;

  constructor() {
    this.parser.on("opentag", (tag) => this.open(tag));
    this.parser.on("closetag", () => this.close());
    this.parser.on("text", (text) => this.text(text));
    this.parser.on("cdata", (text) => this.text(text));
    this.parser.on("error", (error) => {
      // A control character (an ANSI colour code in a runner's output, raw or as a character
      // reference) or an HTML entity breaks XML 1.0's letter but not the report's structure: read
      // on, as the runners' own consumers do. Anything else about the markup is fatal.
      if (TOLERATED.test(error.message)) return;
      this.failure ??= error;
      throw error;
    });
  }

  write(chunk: string): void {
    if (!this.sawContent && chunk.trim() !== "") this.sawContent = true;
    this.guard(() => this.parser.write(chunk));
  }

  end(): RawReport {
    if (!this.sawContent) {
      throw new JUnitError(
        "malformed-xml",
        "the JUnit report is empty: the test command wrote no XML (check its reporter settings)",
      );
    }
    this.guard(() => this.parser.close());
    if (!this.sawRoot) throw new JUnitError("malformed-xml", "the JUnit report has no root element");
    return this.report;
  }

  private guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (error instanceof JUnitError) throw error;
      const { line, column } = this.parser;
      const reason = (this.failure ?? (error as Error)).message.replace(/^(?:[^:]*:)?\d+:\d+: /, "");
      throw new JUnitError(
        "malformed-xml",
        `the JUnit report is not well-formed XML at line ${line}, column ${column}: ${reason} (was the run cut short while writing it?)`,
      );
    }
  }

  private open(tag: SaxesTagPlain): void {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      this.sawRoot = true;
      if (tag.name === "testsuites") {
        this.report.rootAttrs = attributesOf(tag);
        this.stack.push({ kind: "other" });
        return;
      }
      if (tag.name !== "testsuite") throw NOT_JUNIT(tag.name);
      this.report.wrapped = false;
      this.report.rootAttrs = attributesOf(tag);
      this.openSuite(tag);
      return;
    }
    const underRoot = this.stack.length === 1 && this.report.wrapped;
    if (tag.name === "testsuite" && (parent.kind === "suite" || underRoot)) return this.openSuite(tag);
    if (tag.name === "testcase" && (parent.kind === "suite" || underRoot)) {
      const testcase: RawCase = {
        attrs: attributesOf(tag),
        failures: [],
        errors: [],
        skipped: undefined,
        suites: this.suitePath,
      };
      this.report.cases.push(testcase);
      this.stack.push({ kind: "case", testcase });
      return;
    }
    const into = this.problemSink(parent, tag.name);
    if (into) {
      this.stack.push({ kind: "problem", attrs: attributesOf(tag), text: new BoundedText(), into });
      return;
    }
    this.stack.push({ kind: "other" });
  }

  /** Where a `<failure>`, `<error>` or `<skipped>` under this parent goes, if it is one. */
  private problemSink(parent: Open, name: string): ((p: RawProblem) => void) | undefined {
    if (parent.kind === "case") {
      const testcase = parent.testcase;
      if (name === "failure") return (p) => testcase.failures.push(p);
      if (name === "error") return (p) => testcase.errors.push(p);
      if (name === "skipped") return (p) => (testcase.skipped ??= p);
    }
    if (parent.kind === "suite" && (name === "failure" || name === "error")) {
      const suite = parent.suite;
      return (p) => suite.problems.push(p);
    }
    return undefined;
  }

  private openSuite(tag: SaxesTagPlain): void {
    const suite = { attrs: attributesOf(tag), problems: [], depth: this.suitePath.length };
    this.report.suites.push(suite);
    this.suitePath = [...this.suitePath, suite];
    this.stack.push({ kind: "suite", suite });
  }

  private close(): void {
    const open = this.stack.pop();
    if (open?.kind === "suite") this.suitePath = this.suitePath.slice(0, -1);
    if (open?.kind === "problem") {
      const { message, type } = open.attrs;
      open.into({
        ...(message !== undefined ? { message } : {}),
        ...(type !== undefined ? { type } : {}),
        text: own(open.text.toString()),
      });
    }
  }

  private text(text: string): void {
    const open = this.stack[this.stack.length - 1];
    if (open?.kind === "problem") open.text.add(text);
  }
}

const CHUNK = 64 * 1024;

/** Parses JUnit XML into raw records; throws JUnitError when it is not well-formed JUnit. */
export function readJUnitXml(xml: string): RawReport {
  if (typeof xml !== "string") throw new JUnitError("malformed-xml", "the JUnit report is not text");
  const reader = new JUnitXmlReader();
  for (let at = 0; at < xml.length; at += CHUNK) reader.write(xml.slice(at, at + CHUNK));
  return reader.end();
}

/** The same, from a stream of text (a file read in chunks), so a big report is never held whole. */
export async function readJUnitStream(chunks: AsyncIterable<string>): Promise<RawReport> {
  const reader = new JUnitXmlReader();
  for await (const chunk of chunks) reader.write(chunk);
  return reader.end();
}
