import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

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
