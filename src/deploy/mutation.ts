import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chown, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, isAbsolute, join, relative } from "node:path";
import { promisify } from "node:util";
import picomatch from "picomatch";
import { z } from "zod";
import type { ConsortConfig } from "../config/consort-config.js";
import {
  againstDatabase,
  closeJail,
  confinementRecord,
  openJail,
  passThroughAbove,
  projectCommandEnvironment,
  runShellCommand,
  type CommandRunner,
  type Confinement,
  type Jail,
} from "../cycle/index.js";
import type { MutationReport } from "../contracts/mutation.js";
import { notMeasured, SURVIVORS_SHOWN, type MutationCounts, type SurvivingMutant } from "../contracts/mutation.js";
import { consortHome } from "../substrate/index.js";

/**
 * The mutation score of the track's tests over the lines the track changed against its merge base
 * (docs/ARCHITECTURE.md, Test strength): StrykerJS mutates those lines alone and runs the track's
 * tests against each mutant, confined like every command of the track (its throwaway user, its
 * copy of the checkout, the environment allow-list). What Stryker reports comes from the confined
 * side, so it is read as untrusted input: parsed, and counted only on the lines git says changed.
 */

const git = promisify(execFile);

/** The StrykerJS release the action installs into its own tool folder (never the project's). */
const STRYKER_VERSION = "9.6.1";

/** Files StrykerJS mutates; Python files go to the Python tool. */
const JAVASCRIPT = /\.(?:[cm]?[jt]sx?)$/;

/** The Stryker test-runner plugin for each runner the configuration may name; others run the test command. */
const STRYKER_RUNNERS: Record<string, string> = {
  vitest: "@stryker-mutator/vitest-runner",
  jest: "@stryker-mutator/jest-runner",
  mocha: "@stryker-mutator/mocha-runner",
};

export interface MutationDeps {
  config: ConsortConfig;
  /** The checkout at the release's commit. */
  cwd: string;
  confinement: Confinement;
  runCommand?: CommandRunner;
  progress?: (message: string) => void;
  /** Where the tool folder and the kept incremental files are found (CONSORT_MUTATION_TOOLS, CONSORT_MUTATION_STATE). */
  env?: NodeJS.ProcessEnv;
}

export interface MutationTarget {
  track: string;
  /** The track's merge base: its changed lines are measured. */
  base: string | undefined;
  /** The database the tests run against (a throwaway fork). */
  databaseUrl: string;
}

/** Lines added or changed by the track, per file: `git diff --unified=0 base HEAD`. */
export async function changedLines(cwd: string, base: string, config: ConsortConfig): Promise<Map<string, number[]>> {
  const isCode = picomatch(config.paths.code);
  const isTest = picomatch(config.paths.tests);
  const isMigration = picomatch(config.paths.migrations);
  const { stdout } = await git(
    "git",
    ["diff", "--unified=0", "--no-color", "--no-ext-diff", "--diff-filter=AM", base, "HEAD"],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  );
  const changed = new Map<string, number[]>();
  let file: string | undefined;
  for (const line of stdout.split("\n")) {
    if (line.startsWith("+++ ")) {
      const path = line.slice(4).replace(/^b\//, "");
      file = path !== "/dev/null" && isCode(path) && !isTest(path) && !isMigration(path) ? path : undefined;
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (!hunk || !file) continue;
    const start = Number(hunk[1]);
    const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
    const lines = changed.get(file) ?? [];
    for (let n = start; n < start + count; n++) lines.push(n);
    if (lines.length > 0) changed.set(file, lines);
  }
  return changed;
}

/** Contiguous runs of line numbers as StrykerJS's `file:start-end` ranges. */
export function mutateRanges(changed: Map<string, number[]>): string[] {
  const ranges: string[] = [];
  for (const [file, lines] of changed) {
    const sorted = [...new Set(lines)].sort((a, b) => a - b);
    let start = sorted[0]!;
    for (let i = 1; i <= sorted.length; i++)
      if (i === sorted.length || sorted[i] !== sorted[i - 1]! + 1) {
        ranges.push(`${file}:${start}-${sorted[i - 1]}`);
        start = sorted[i]!;
      }
  }
  return ranges;
}

/** The Stryker runner for the configuration: the declared runner, else the one the test command names, else `command`. */
function strykerRunnerOf(config: ConsortConfig): string {
  const declared = config.runner ?? /\b(vitest|jest|mocha)\b/.exec(config.commands.test)?.[1];
  return declared && declared in STRYKER_RUNNERS ? declared : "command";
}

/** The action's own tool folder: CONSORT_MUTATION_TOOLS, else CONSORT_HOME's tools folder (never the project). */
const toolFolderOf = (env: NodeJS.ProcessEnv): string =>
  env.CONSORT_MUTATION_TOOLS?.trim() || join(consortHome(env), "tools", `stryker-${STRYKER_VERSION}`);

/** Where the track's incremental file is kept between releases (outside any checkout, the job's alone). */
export function incrementalFileOf(env: NodeJS.ProcessEnv, track: string): string {
  const folder = env.CONSORT_MUTATION_STATE?.trim() || join(consortHome(env), "mutation");
  return join(folder, `${track.replace(/[^A-Za-z0-9._-]/g, "_")}.stryker-incremental.json`);
}

/**
 * StrykerJS and the runner's plugin in the tool folder: there already (a cache, or a folder a
 * test points at), else installed there with npm, never into the project's package.json or lockfile.
 */
async function strykerIn(folder: string, runner: string, progress: (m: string) => void): Promise<string> {
  const core = join(folder, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js");
  const plugin = STRYKER_RUNNERS[runner];
  const missing = [
    ...(existsSync(core) ? [] : [`@stryker-mutator/core@${STRYKER_VERSION}`]),
    ...(plugin && !existsSync(join(folder, "node_modules", plugin)) ? [`${plugin}@${STRYKER_VERSION}`] : []),
  ];
  if (missing.length > 0) {
    progress(`installing ${missing.join(" ")} into the action's tool folder ${folder}`);
    await mkdir(folder, { recursive: true, mode: 0o755 });
    try {
      await git(
        "npm",
        ["install", "--prefix", folder, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", ...missing],
        { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      throw new Error(
        `StrykerJS could not be installed into the action's tool folder ${folder} (${(error as Error).message.split("\n")[0]}); point CONSORT_MUTATION_TOOLS at a folder whose node_modules holds @stryker-mutator/core ${STRYKER_VERSION}`,
      );
    }
  }
  return core;
}

/** One mutant as StrykerJS reports it (its mutation-testing-report-schema), the fields used here. */
const ReportedMutant = z.object({
  id: z.string(),
  mutatorName: z.string(),
  replacement: z.string().optional(),
  status: z.string(),
  location: z.object({
    start: z.object({ line: z.number().int(), column: z.number().int() }),
    end: z.object({ line: z.number().int(), column: z.number().int() }),
  }),
  fileName: z.string().optional(),
});
type ReportedMutant = z.infer<typeof ReportedMutant> & { file: string };

const FinalReport = z.object({ files: z.record(z.string(), z.object({ mutants: z.array(ReportedMutant) })) });
const Plan = z.object({ mutantPlans: z.array(z.object({ plan: z.string() })) });

/** What the event recorder left: the final report's mutants, else those tested before the run stopped. */
async function readEvents(
  dir: string,
  projectRoot: string,
): Promise<{ mutants: ReportedMutant[]; planned?: number; reused: number; complete: boolean }> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return { mutants: [], reused: 0, complete: false };
  }
  const read = async (name: string): Promise<unknown> => {
    const path = join(dir, name);
    // The confined side wrote these: a file too large to be a report of a handful of lines is not read.
    if ((await stat(path)).size > 64 * 1024 * 1024) return undefined;
    try {
      return JSON.parse(await readFile(path, "utf8"));
    } catch {
      return undefined;
    }
  };
  let planned: number | undefined;
  let reused = 0;
  const tested: ReportedMutant[] = [];
  const inProject = (fileName: string) => (isAbsolute(fileName) ? relative(projectRoot, fileName) : fileName);
  for (const name of names) {
    if (name.endsWith("-onMutationTestingPlanReady.json")) {
      const plan = Plan.safeParse(await read(name));
      if (plan.success) {
        planned = plan.data.mutantPlans.length;
        reused = plan.data.mutantPlans.filter((p) => p.plan === "EarlyResult").length;
      }
    } else if (name.endsWith("-onMutationTestReportReady.json")) {
      const report = FinalReport.safeParse(await read(name));
      if (report.success) {
        const mutants = Object.entries(report.data.files).flatMap(([file, entry]) =>
          entry.mutants.map((m) => ({ ...m, file: inProject(file) })),
        );
        return { mutants, ...(planned !== undefined ? { planned } : {}), reused, complete: true };
      }
    } else if (name.endsWith("-onMutantTested.json")) {
      const mutant = ReportedMutant.safeParse(await read(name));
      if (mutant.success && mutant.data.fileName)
        tested.push({ ...mutant.data, file: inProject(mutant.data.fileName) });
    }
  }
  return { mutants: tested, ...(planned !== undefined ? { planned } : {}), reused, complete: false };
}

const STATUS: Record<string, keyof MutationCounts | undefined> = {
  Killed: "killed",
  Survived: "survived",
  Timeout: "timedOut",
  NoCoverage: "notCovered",
  CompileError: "errors",
  RuntimeError: "errors",
};

const cut = (text: string, width: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
};

/** The one-line diff of a mutant: what its range held, then what the mutant put there. */
function diffOf(mutant: ReportedMutant, source: string[] | undefined): string {
  const { start, end } = mutant.location;
  const replacement = cut(mutant.replacement ?? "", 100);
  const line = source?.[start.line - 1];
  if (line === undefined || start.line !== end.line) return `${mutant.mutatorName}: ${replacement}`;
  return `${cut(line.slice(start.column - 1, end.column - 1), 100)} → ${replacement}`;
}

/**
 * Count the mutants on the changed lines (a mutant elsewhere, reused from an older incremental
 * file or claimed by the confined side, counts for nothing) and name the survivors, most telling
 * first: survived before not covered, the lines with most of them first.
 */
async function scoreOf(
  mutants: ReportedMutant[],
  changed: Map<string, number[]>,
  cwd: string,
): Promise<Pick<MutationReport, "score" | "counts" | "survivors" | "moreSurvivors">> {
  const lines = new Map([...changed].map(([file, numbers]) => [file, new Set(numbers)]));
  const counts: MutationCounts = { killed: 0, survived: 0, timedOut: 0, notCovered: 0, errors: 0 };
  const missed: ReportedMutant[] = [];
  const seen = new Set<string>();
  for (const mutant of mutants) {
    const key = STATUS[mutant.status];
    if (!key || !lines.get(mutant.file)?.has(mutant.location.start.line)) continue;
    const at = `${mutant.file}:${JSON.stringify(mutant.location)}:${mutant.mutatorName}:${mutant.replacement ?? ""}`;
    if (seen.has(at)) continue;
    seen.add(at);
    counts[key]++;
    if (key === "survived" || key === "notCovered") missed.push(mutant);
  }
  const perLine = new Map<string, number>();
  for (const m of missed)
    perLine.set(`${m.file}:${m.location.start.line}`, (perLine.get(`${m.file}:${m.location.start.line}`) ?? 0) + 1);
  const rank = (m: ReportedMutant) => (m.status === "Survived" ? 0 : 1);
  missed.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      perLine.get(`${b.file}:${b.location.start.line}`)! - perLine.get(`${a.file}:${a.location.start.line}`)! ||
      a.file.localeCompare(b.file) ||
      a.location.start.line - b.location.start.line ||
      a.location.start.column - b.location.start.column,
  );
  const sources = new Map<string, string[] | undefined>();
  const survivors: SurvivingMutant[] = [];
  for (const m of missed.slice(0, SURVIVORS_SHOWN)) {
    if (!sources.has(m.file)) sources.set(m.file, await committedLines(cwd, m.file));
    survivors.push({
      file: m.file,
      line: m.location.start.line,
      status: m.status === "Survived" ? "survived" : "not-covered",
      mutator: cut(m.mutatorName, 100),
      diff: cut(diffOf(m, sources.get(m.file)), 300),
    });
  }
  const detected = counts.killed + counts.timedOut;
  const valid = detected + counts.survived + counts.notCovered;
  return {
    score: valid === 0 ? null : Math.round((detected / valid) * 1000) / 10,
    counts,
    survivors,
    moreSurvivors: missed.length - survivors.length,
  };
}

/** The file as the commit holds it (git's word, not the copy the confined commands could change). */
async function committedLines(cwd: string, file: string): Promise<string[] | undefined> {
  try {
    const { stdout } = await git("git", ["show", `HEAD:${file}`], { cwd, maxBuffer: 64 * 1024 * 1024 });
    return stdout.split("\n");
  } catch {
    return undefined;
  }
}

/** The Python lines: no tool is installed for them here, so they are not measured, and the report says why. */
function pythonNotMeasured(files: string[]): string {
  return `${files.length} changed Python file(s) (${files.slice(0, 3).join(", ")}${files.length > 3 ? ", …" : ""}) were not measured: the action's Python mutation tool (cosmic-ray, whose git filter restricts mutation to the lines changed against the merge base) is not installed in its tool folder`;
}

/**
 * Measure the mutation score of the track's tests over its changed lines. Never throws: what
 * cannot be measured is reported as not measured, with the reason.
 */
export async function measureMutation(target: MutationTarget, deps: MutationDeps): Promise<MutationReport> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const floor = deps.config.gates.deploy.mutation.minScore;
  const withFloor = (report: MutationReport): MutationReport => ({
    ...report,
    ...(floor !== undefined ? { floor } : {}),
    durationMs: elapsed(),
  });
  try {
    return withFloor(await measure(target, deps));
  } catch (error) {
    return withFloor(notMeasured((error as Error).message));
  }
}

async function measure(target: MutationTarget, deps: MutationDeps): Promise<MutationReport> {
  const { config, cwd } = deps;
  const env = deps.env ?? process.env;
  const progress = deps.progress ?? (() => {});
  if (!target.base)
    return notMeasured(
      "the track's merge base is unknown (the request names no parent commit and no base branch the checkout has), so its changed lines are unknown",
    );
  const changed = await changedLines(cwd, target.base, config);
  const javascript = new Map([...changed].filter(([file]) => JAVASCRIPT.test(file)));
  const python = [...changed.keys()].filter((file) => extname(file) === ".py");
  const base = { base: target.base };
  if (javascript.size === 0 && python.length > 0)
    return notMeasured(pythonNotMeasured(python), { ...base, tool: "cosmic-ray", runner: "pytest" });
  if (javascript.size === 0)
    return notMeasured(
      "the track changed no line of code a mutation tool reads (JavaScript, TypeScript or Python under paths.code, tests and migrations aside)",
      base,
    );
  const runner = strykerRunnerOf(config);
  const stryker = await strykerIn(toolFolderOf(env), runner, progress);
  const report = await runStryker(target, deps, { stryker, runner, changed: javascript, env, progress });
  const result = { ...report, ...base, tool: "stryker" as const, runner };
  if (python.length === 0) return result;
  return {
    ...result,
    outcome: result.outcome === "not-measured" ? result.outcome : "partial",
    reason: [result.reason, pythonNotMeasured(python)].filter(Boolean).join("; "),
  };
}

interface StrykerRun {
  stryker: string;
  runner: string;
  changed: Map<string, number[]>;
  env: NodeJS.ProcessEnv;
  progress: (message: string) => void;
}

/** The folder StrykerJS reads its configuration from and writes its events to: the confined user's, in its copy. */
async function ioFolder(jail: Jail | undefined): Promise<string> {
  if (!jail) return mkdtemp(join(tmpdir(), "consort-mutation-"));
  const dir = join(jail.work, ".consort-mutation");
  await mkdir(dir, { mode: 0o700 });
  await chown(dir, jail.uid, jail.gid);
  return dir;
}

async function runStryker(target: MutationTarget, deps: MutationDeps, run: StrykerRun): Promise<MutationReport> {
  const { config, cwd, confinement } = deps;
  const budgetMinutes = config.gates.deploy.mutation.timeoutMinutes;
  const jail = confinement.confined ? await openJail(confinement, cwd) : undefined;
  let io: string | undefined;
  try {
    // The tool folder is the job's: the throwaway user may pass through to it, to read and run it.
    if (jail) await passThroughAbove(jail.via, run.stryker);
    io = await ioFolder(jail);
    const kept = incrementalFileOf(run.env, target.track);
    const incremental = join(io, "incremental.json");
    if (await usableIncremental(kept)) {
      await copyFile(kept, incremental);
      if (jail) await chown(incremental, jail.uid, jail.gid);
    }
    const strykerConfig = {
      testRunner: run.runner,
      ...(run.runner === "command" ? { commandRunner: { command: config.commands.test } } : {}),
      coverageAnalysis: run.runner === "command" ? "off" : "perTest",
      mutate: mutateRanges(run.changed),
      concurrency: 1,
      reporters: ["event-recorder"],
      eventReporter: { baseDir: join(io, "events") },
      incremental: true,
      incrementalFile: incremental,
      tempDirName: ".stryker-tmp",
      cleanTempDir: "always",
      allowConsoleColors: false,
      ignorePatterns: ["/.consort-mutation", "/reports"],
    };
    const configFile = join(io, "stryker.config.json");
    await writeFile(configFile, `${JSON.stringify(strykerConfig, null, 2)}\n`);
    if (jail) await chown(configFile, jail.uid, jail.gid);
    const project = projectCommandEnvironment(config);
    run.progress(`measuring the mutation score (${run.runner}) over ${strykerConfig.mutate.join(", ")}`);
    const runCommand = deps.runCommand ?? runShellCommand;
    const record = await runCommand(`node ${JSON.stringify(run.stryker)} run ${JSON.stringify(configFile)}`, {
      cwd,
      ...againstDatabase(project, target.databaseUrl),
      timeoutMs: budgetMinutes * 60_000,
      tailLines: 30,
      ...(jail ? { jail } : {}),
    });
    const ran = confinementRecord(confinement, jail);
    const events = await readEvents(join(io, "events"), jail ? jail.work : cwd);
    const scored = await scoreOf(events.mutants, run.changed, cwd);
    const measuredAll = record.exitCode === 0 && events.complete;
    if (measuredAll) {
      // Kept for the next release of this track; a partial run's file is not.
      await mkdir(join(kept, ".."), { recursive: true, mode: 0o755 });
      if (existsSync(incremental) && (await stat(incremental)).size < 64 * 1024 * 1024)
        await copyFile(incremental, kept);
      const { reason: _none, ...empty } = notMeasured("");
      return { ...empty, ...scored, outcome: "measured", reused: events.reused, confinement: ran };
    }
    const why =
      record.exitCode === null && record.signal?.startsWith("timeout")
        ? `the measurement stopped at its budget of ${budgetMinutes} min (gates.deploy.mutation.timeoutMinutes)`
        : `StrykerJS ${record.exitCode === null ? `was killed (${record.signal ?? "signal"})` : `exited ${record.exitCode}`}: ${lastLines(record.outputTail)}`;
    const measured = Object.values(scored.counts).reduce((a, b) => a + b, 0);
    const of = events.planned !== undefined ? ` of ${events.planned}` : "";
    return {
      ...notMeasured(why),
      ...scored,
      outcome: measured > 0 ? "partial" : "not-measured",
      reason: `${why}; ${measured}${of} mutant(s) measured`,
      reused: events.reused,
      confinement: ran,
    };
  } finally {
    if (jail) await closeJail(jail);
    else if (io) await rm(io, { recursive: true, force: true });
  }
}

/** A kept incremental file StrykerJS can read (a broken one would stop the run): else the run starts afresh. */
async function usableIncremental(path: string): Promise<boolean> {
  try {
    if ((await stat(path)).size > 64 * 1024 * 1024) return false;
    const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
    return typeof parsed === "object" && parsed !== null && "files" in parsed;
  } catch {
    return false;
  }
}

/** The last lines of what StrykerJS printed: where it says why it stopped. */
const lastLines = (tail: string) =>
  cut(
    tail
      .split("\n")
      .filter((l) => /ERROR|WARN|Error/.test(l))
      .slice(-2)
      .join(" ") || tail.split("\n").slice(-2).join(" "),
    400,
  );
