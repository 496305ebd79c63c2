import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { combineReports, parseJUnit, type ParseJUnitOptions } from "./parse.js";
import { JUnitError, type JUnitReport } from "./types.js";

export interface ReadJUnitOptions extends ParseJUnitOptions {
  /**
   * When the test run started (ms since the epoch). A report last written before it was left by
   * an earlier run and proves nothing. Compared in whole seconds: some filesystems keep coarse times.
   */
  notBefore?: number;
}

export interface ReadJUnitResult {
  report: JUnitReport;
  /** The report files read, in order. */
  files: string[];
  /** Files in a report folder that an earlier run left behind, and were not read. */
  staleFiles: string[];
}

const isFresh = (modifiedMs: number, notBefore: number | undefined) =>
  notBefore === undefined || Math.floor(modifiedMs / 1000) >= Math.floor(notBefore / 1000);

/**
 * Reads the JUnit report at `path`: one file, or a folder of them (Surefire writes
 * target/surefire-reports/TEST-<class>.xml per class). In a folder, files an earlier run left are
 * skipped and listed; a run that wrote nothing there, or a lone file older than the run, is a
 * JUnitError, never an empty pass.
 */
export async function readJUnitReports(path: string, options: ReadJUnitOptions = {}): Promise<ReadJUnitResult> {
  const { notBefore, ...parseOptions } = options;
  const info = await stat(path).catch(() => undefined);
  if (!info) {
    throw new JUnitError(
      "no-report",
      `no JUnit report at ${path}: the test command wrote none there (check its reporter settings and output path)`,
    );
  }
  if (info.isFile()) {
    if (!isFresh(info.mtimeMs, notBefore)) {
      throw new JUnitError(
        "stale-report",
        `the JUnit report ${path} is older than this test run: an earlier run left it, so it proves nothing`,
      );
    }
    return { report: parse(path, await readFile(path, "utf8"), parseOptions), files: [path], staleFiles: [] };
  }
  const names = (await readdir(path)).filter((name) => name.endsWith(".xml")).sort();
  const files: string[] = [];
  const staleFiles: string[] = [];
  for (const name of names) {
    const file = join(path, name);
    const fileInfo = await stat(file);
    if (!fileInfo.isFile()) continue;
    (isFresh(fileInfo.mtimeMs, notBefore) ? files : staleFiles).push(file);
  }
  if (files.length === 0) {
    const why = staleFiles.length ? `only ${staleFiles.length} report(s) an earlier run left behind` : "no .xml report";
    throw new JUnitError("no-report", `the JUnit report folder ${path} has ${why}: this test run wrote none there`);
  }
  const reports = await Promise.all(files.map(async (file) => parse(file, await readFile(file, "utf8"), parseOptions)));
  return { report: combineReports(reports), files, staleFiles };
}

function parse(file: string, xml: string, options: ParseJUnitOptions): JUnitReport {
  try {
    return parseJUnit(xml, options);
  } catch (error) {
    if (error instanceof JUnitError) throw new JUnitError(error.code, `${file}: ${error.message}`);
    throw error;
  }
}
