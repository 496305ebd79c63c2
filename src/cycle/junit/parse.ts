import { z } from "zod";
import { formatZodError } from "../../contracts/zod-error.js";
import { classifyReport } from "./classify.js";
import { detectFlavour, MARKS_HEAD, MARKS_TAIL } from "./flavour.js";
import { FlavourSchema, JUnitError, type Flavour, type JUnitReport } from "./types.js";
import { readJUnitStream, readJUnitXml, type RawReport } from "./xml.js";

const ParseOptionsSchema = z.object({ flavour: FlavourSchema.optional() }).strict();
export type ParseJUnitOptions = z.infer<typeof ParseOptionsSchema>;

/**
 * Reads one JUnit report: every test case with its outcome (an assertion failure told apart from
 * an error by the rules of the runner that wrote it), and every file, class or package that
 * failed to load. The runner is detected unless `flavour` says. Throws JUnitError for XML that
 * is malformed or not JUnit at all.
 */
export function parseJUnit(xml: string, options: ParseJUnitOptions = {}): JUnitReport {
  const { flavour } = readOptions(options);
  return judge(readJUnitXml(xml), flavour ?? detectFlavour(xml));
}

/** The options, or a JUnitError that says what is wrong with them. */
function readOptions(options: ParseJUnitOptions): ParseJUnitOptions {
  const parsed = ParseOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new JUnitError("bad-option", formatZodError(parsed.error, "parseJUnit options", { inline: true }));
  }
  return parsed.data;
}

/** The same from a stream of text (a report file read in chunks): a big report is never held whole. */
export async function parseJUnitStream(
  chunks: AsyncIterable<string>,
  options: ParseJUnitOptions = {},
): Promise<JUnitReport> {
  const { flavour } = readOptions(options);
  // The runner's marks sit in the report's head, and node's counters at its very end.
  let head = "";
  let tail = "";
  async function* sampled(): AsyncIterable<string> {
    for await (const chunk of chunks) {
      if (head.length < MARKS_HEAD) head += chunk.slice(0, MARKS_HEAD - head.length);
      // A chunk as long as the tail is the tail: never copy a whole chunk to keep its end.
      tail = chunk.length >= MARKS_TAIL ? chunk.slice(-MARKS_TAIL) : (tail + chunk).slice(-MARKS_TAIL);
      yield chunk;
    }
  }
  const raw = await readJUnitStream(sampled());
  return judge(raw, flavour ?? detectFlavour(head + tail));
}

function judge(raw: RawReport, flavour: Flavour): JUnitReport {
  const { tests, loadErrors } = classifyReport(flavour, raw);
  const timestamp = latestTimestamp(raw);
  return { flavour, tests, loadErrors, ...(timestamp ? { timestamp } : {}) };
}

/**
 * One report from several files of one run, e.g. Surefire's TEST-<class>.xml per test class.
 * The flavour is the one they share, or "unknown" when they disagree.
 */
export function combineReports(reports: JUnitReport[]): JUnitReport {
  const flavours = new Set(reports.map((r) => r.flavour));
  const [only] = flavours;
  const flavour: Flavour = flavours.size === 1 && only ? only : "unknown";
  const timestamps = reports.map((r) => r.timestamp).filter((t): t is string => t !== undefined);
  const timestamp = latestOf(timestamps);
  return {
    flavour,
    tests: reports.flatMap((r) => r.tests),
    loadErrors: reports.flatMap((r) => r.loadErrors),
    ...(timestamp ? { timestamp } : {}),
  };
}

function latestTimestamp(raw: RawReport): string | undefined {
  const stamps = [raw.rootAttrs.timestamp, ...raw.suites.map((s) => s.attrs.timestamp)].filter(
    (t): t is string => typeof t === "string" && t.trim() !== "",
  );
  return latestOf(stamps);
}

/**
 * The latest of some timestamps, as written. jest-junit stamps a suite that failed to run with
 * 1970, so the latest is the honest time of the run.
 */
function latestOf(stamps: string[]): string | undefined {
  let best: { stamp: string; at: number } | undefined;
  for (const stamp of stamps) {
    const at = Date.parse(stamp);
    if (Number.isNaN(at)) continue;
    if (!best || at > best.at) best = { stamp, at };
  }
  return best?.stamp;
}
