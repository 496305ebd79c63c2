import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { parseJUnit, type JUnitReport } from "../../../src/cycle/junit/index.js";
import type { NewModules } from "../../../src/cycle/new-modules.js";
import { CycleRequest } from "../../../src/contracts/cycle-request.js";
import { decideVerdict } from "../../../src/cycle/verdict.js";

/**
 * The reports real runners wrote for the sample projects (see generate-fixtures.sh). Tests read a
 * report in a beforeEach, not a beforeAll: a mutation run (stryker.config.mjs, perTest coverage)
 * counts what a beforeAll runs as covered by no test in particular, and runs every test for each
 * mutant there. A report is read in milliseconds.
 */

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
export const REPO_ROOT = join(FIXTURES, "..", "..", "..", "..");

export function fixtureReport(runner: string, report = "report.xml"): Promise<string> {
  return readFile(join(FIXTURES, runner, report), "utf8");
}

const RunsSchema = z.object({
  runs: z.array(
    z.object({
      report: z.string(),
      written: z.boolean(),
      version: z.string(),
      exitCode: z.number().int(),
      command: z.string(),
    }),
  ),
});
export type FixtureRun = z.infer<typeof RunsSchema>["runs"][number];

/** What generate-fixtures.sh recorded about the run that wrote `report`. */
export async function fixtureRun(runner: string, report = "report.xml"): Promise<FixtureRun> {
  const { runs } = RunsSchema.parse(JSON.parse(await readFile(join(FIXTURES, runner, "runs.json"), "utf8")));
  const run = runs.find((r) => r.report === report);
  if (!run) throw new Error(`fixtures/${runner}/runs.json records no run for ${report}: rerun generate-fixtures.sh`);
  return run;
}

export interface LiveRun {
  xml: string | undefined;
  exitCode: number;
  output: string;
}

/**
 * Runs a real runner on its sample project and returns the report it wrote to a temp folder.
 * The runner's own environment markers are removed so that a nested vitest starts clean.
 */
export async function runLive(command: string, args: (reportPath: string) => string[], cwd: string): Promise<LiveRun> {
  const dir = await mkdtemp(join(tmpdir(), "consort-junit-live-"));
  const reportPath = join(dir, "report.xml");
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(VITEST|VITE_|TINYPOOL|NODE_OPTIONS$|NODE_TEST_CONTEXT$)/.test(key)) env[key] = value;
  }
  env.CI = "true";
  try {
    const { exitCode, output } = await new Promise<{ exitCode: number; output: string }>((resolve) => {
      execFile(
        command,
        args(reportPath),
        { cwd, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code =
            error && typeof (error as { code?: unknown }).code === "number"
              ? (error as { code: number }).code
              : error
                ? -1
                : 0;
          resolve({ exitCode: code, output: `${stdout}${stderr}` });
        },
      );
    });
    const xml = await readFile(reportPath, "utf8").catch(() => undefined);
    return { xml, exitCode, output };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The harness of a runner's report checks (committed or live): loads the run once, parses its report
 * before each test (see above), and checks what every sample run must show: the runner's flavour and a
 * red exit. Returns the report each test reads.
 */
export function describeSampleRun(
  runner: string,
  flavour: JUnitReport["flavour"],
  recognised: string,
  load: () => Promise<{ xml: string | undefined; exitCode: number }>,
): () => JUnitReport {
  let report: JUnitReport;
  let exitCode: number;
  let xml: string;
  beforeAll(async () => {
    const run = await load();
    expect(run.xml, `${runner} wrote no JUnit report`).toBeDefined();
    xml = run.xml ?? "";
    exitCode = run.exitCode;
  });
  beforeEach(() => {
    report = parseJUnit(xml);
  });

  it(`is recognised as ${recognised}`, () => {
    expect(report.flavour).toBe(flavour);
  });

  it("ran red: the run that wrote it exited non-zero", () => {
    expect(exitCode).not.toBe(0);
  });

  return () => report;
}

/** The RED of one test: the report cut to that test's file, as a cycle of that file alone would see it. */
export function redOfOne(report: JUnitReport, file: string, title: string, newModules: NewModules | undefined) {
  const ofFile = (f: string | undefined) => f === undefined || f === file || f.endsWith(`/${file}`);
  const tests = report.tests.filter((t) => ofFile(t.file) && (t.file !== undefined || t.name === title));
  return decideVerdict({
    request: CycleRequest.parse({
      track: "f1",
      step: "red",
      commit: "a".repeat(40),
      tests: { inTurn: [{ id: "T1", file, title }] },
      database: { branch: "f1" },
    }),
    report: { ...report, tests, loadErrors: report.loadErrors.filter((e) => ofFile(e.file)) },
    testExitCode: 1,
    frozenFiles: [],
    ...(newModules ? { newModules } : {}),
  });
}

/**
 * The new-module samples' architecture (generate-fixtures.sh new-module): src/pricing is declared and
 * not written, src/discounts is written without its declared bulkDiscount; src/tax is declared nowhere.
 */
export const sampleNewModules = (ext: string): NewModules => ({
  ok: true,
  modules: [
    { path: `src/pricing.${ext}`, written: false, exports: ["priceFor"], unwritten: [] },
    {
      path: `src/discounts.${ext}`,
      written: true,
      exports: ["discountFor", "bulkDiscount"],
      unwritten: ["bulkDiscount"],
    },
  ],
  existing: [],
});

/** The same architecture in the pytest sample: shop/pricing.py and shop/discounts.py; shop/tax nowhere. */
export const samplePythonNewModules: NewModules = {
  ok: true,
  modules: [
    { path: "shop/pricing.py", written: false, exports: ["price_for"], unwritten: [] },
    {
      path: "shop/discounts.py",
      written: true,
      exports: ["discount_for", "bulk_discount"],
      unwritten: ["bulk_discount"],
    },
  ],
  existing: [],
};
