import { createReadStream } from "node:fs";
import { lstat, readdir, readFile, rm, stat } from "node:fs/promises";
import { basename, join, relative, resolve, sep } from "node:path";
import picomatch from "picomatch";
import { combineReports, parseJUnitStream, type ParseJUnitOptions } from "./parse.js";
import { JUnitError, type JUnitReport } from "./types.js";

/**
 * Where a run's JUnit reports are: the `junit` setting names one file ("junit.xml"), a folder
 * ("target/surefire-reports/": Surefire writes TEST-<class>.xml per class), or a glob
 * ("packages/*\/junit.xml": one report per package of a monorepo). All the reports found are read
 * as one run. Before the run, `clearReports` removes what an earlier run left there, so an old
 * report can never pass for this run's; after it, a report older than the run is still refused.
 */

export interface ReadJUnitOptions extends ParseJUnitOptions {
  /** The folder a relative setting is relative to (the checkout); the process's by default. */
  cwd?: string;
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
  /** Files in a report folder or glob that an earlier run left behind, and were not read. */
  staleFiles: string[];
}

type Place =
  | { kind: "file"; path: string }
  | { kind: "folder"; path: string }
  | { kind: "glob"; base: string; matches: (relativePath: string) => boolean };

/** Folders never searched for reports: they hold other people's files, not this run's. */
const NEVER_SEARCHED = new Set(["node_modules", ".git"]);
const MAX_DEPTH = 12;

const isFresh = (modifiedMs: number, notBefore: number | undefined) =>
  notBefore === undefined || Math.floor(modifiedMs / 1000) >= Math.floor(notBefore / 1000);

async function placeOf(setting: string, cwd: string): Promise<Place> {
  const scan = picomatch.scan(setting);
  if (scan.isGlob) {
    const base = resolve(cwd, scan.base || ".");
    const matcher = picomatch(scan.glob, { dot: false });
    return { kind: "glob", base, matches: (path) => matcher(path) };
  }
  const path = resolve(cwd, setting);
  if (/[\\/]$/.test(setting)) return { kind: "folder", path };
  const info = await stat(path).catch(() => undefined);
  return info?.isDirectory() ? { kind: "folder", path } : { kind: "file", path };
}

/** The .xml files a folder or glob names now (regular files or links, never folders). */
async function candidates(place: Exclude<Place, { kind: "file" }>): Promise<string[]> {
  if (place.kind === "folder") {
    const entries = await readdir(place.path, { withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith(".xml"))
      .map((e) => join(place.path, e.name))
      .sort();
  }
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!NEVER_SEARCHED.has(entry.name)) await walk(path, depth + 1);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(".xml")) {
        if (place.matches(relative(place.base, path).split(sep).join("/"))) found.push(path);
      }
    }
  };
  await walk(place.base, 0);
  return found.sort();
}

/**
 * Removes the reports an earlier run left where this run will write its own: the file itself, or
 * the .xml files in the folder or matching the glob. Nothing else is touched (no folder, no other
 * file, nothing a link points to). Returns what was removed.
 */
export async function clearReports(setting: string, cwd: string = process.cwd()): Promise<string[]> {
  const place = await placeOf(setting, cwd);
  const files = place.kind === "file" ? [place.path] : await candidates(place);
  const removed: string[] = [];
  for (const file of files) {
    const info = await lstat(file).catch(() => undefined);
    if (!info || info.isDirectory()) continue;
    await rm(file, { force: true });
    removed.push(file);
  }
  return removed;
}

/**
 * Reads the JUnit reports the `junit` setting names (see the top of this file). Files an earlier
 * run left in a folder or glob are skipped and listed; a run that wrote nothing there, or a lone
 * file older than the run, is a JUnitError, never an empty pass. Each file is read as a stream.
 */
export async function readJUnitReports(setting: string, options: ReadJUnitOptions = {}): Promise<ReadJUnitResult> {
  const { notBefore, cwd = process.cwd(), ...parseOptions } = options;
  const place = await placeOf(setting, cwd);
  if (place.kind === "file") {
    const info = await stat(place.path).catch(() => undefined);
    if (!info?.isFile()) {
      throw new JUnitError(
        "no-report",
        `no JUnit report at ${setting}: the test command wrote none there (check its reporter settings and output path)`,
      );
    }
    if (!isFresh(info.mtimeMs, notBefore)) {
      throw new JUnitError(
        "stale-report",
        `the JUnit report ${setting} is older than this test run: an earlier run left it, so it proves nothing`,
      );
    }
    const report = await withGoModule(await parseFile(place.path, parseOptions), cwd);
    return { report, files: [place.path], staleFiles: [] };
  }
  const files: string[] = [];
  const staleFiles: string[] = [];
  for (const file of await candidates(place)) {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) continue;
    (isFresh(info.mtimeMs, notBefore) ? files : staleFiles).push(file);
  }
  if (files.length === 0) {
    const what = place.kind === "folder" ? `folder ${setting}` : `files matching ${setting}`;
    const why = staleFiles.length ? `only ${staleFiles.length} report(s) an earlier run left behind` : "no .xml report";
    throw new JUnitError("no-report", `the JUnit report ${what} has ${why}: this test run wrote none there`);
  }
  const reports: JUnitReport[] = [];
  // One at a time: a run's reports may be many and big, and memory is the limit, not the disk.
  for (const file of files) reports.push(await parseFile(file, parseOptions));
  return { report: await withGoModule(combineReports(reports), cwd), files, staleFiles };
}

/**
 * A Go report's packages are import paths: the module's own path, which only go.mod says, is the
 * root package's, so a test file at the root can be told from a same-named test in another package.
 */
async function withGoModule(report: JUnitReport, cwd: string): Promise<JUnitReport> {
  if (report.flavour !== "go") return report;
  const goMod = await readFile(join(cwd, "go.mod"), "utf8").catch(() => undefined);
  const goModule = goMod?.match(/^\s*module\s+"?([^\s"]+)"?/m)?.[1];
  return goModule ? { ...report, goModule } : report;
}

/**
 * Surefire names each report file after its class (TEST-shop.CartTest.xml): that name still says
 * the package when the report writes classes by their display names (no package), so a test is
 * tied to its file by the report file it is in.
 */
function withReportClass(report: JUnitReport, file: string): JUnitReport {
  const reportClass = /^TEST-(.+)\.xml$/.exec(basename(file))?.[1];
  if (report.flavour !== "surefire" || reportClass === undefined) return report;
  return { ...report, tests: report.tests.map((test) => ({ ...test, reportClass })) };
}

async function parseFile(file: string, options: ParseJUnitOptions): Promise<JUnitReport> {
  try {
    const report = await parseJUnitStream(
      createReadStream(file, { encoding: "utf8", highWaterMark: 256 * 1024 }),
      options,
    );
    return withReportClass(report, file);
  } catch (error) {
    if (error instanceof JUnitError) throw new JUnitError(error.code, `${file}: ${error.message}`);
    throw error;
  }
}
