import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { ConfigError, readCheckoutConfig, readConfigFile } from "../config/load.js";
import { buildLocalRequest, REHEARSAL_LIMITS } from "../cycle/local-request.js";
import {
  CYCLE_STEPS,
  CycleInputError,
  parseCycleRequest,
  type CycleRequest,
  CycleStep,
} from "../contracts/cycle-request.js";
import { exitCodeFor, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE, type CycleResult } from "../contracts/cycle-result.js";
import { runCycle, throwawayBranchName } from "../cycle/run.js";
import { renderCycleSummary } from "../cycle/summary.js";
import { createProvider } from "../substrate/index.js";
import { cycleOutputMatcher, runLanePending, ToolError, type LocalRun } from "../tools/index.js";
import { consortCommand, DATA_FOLDER } from "./invocation.js";
import { CliError, printResult, progress } from "./output.js";

/** `consort cycle`: one RED/GREEN/REFACTOR/release cycle on a throwaway database branch. */

interface CycleOptions {
  request?: string;
  step?: string;
  tests?: string;
  earlierGreen?: string;
  earlier?: string;
  track?: string;
  databaseBranch?: string;
  dbBranch?: string;
  frozenAt?: string;
  designApprovedAt?: string;
  testList?: string;
  config?: string;
  cwd: string;
  outDir?: string;
  json?: boolean;
  quiet?: boolean;
}

const ids = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * What `git status` lists as changed or untracked in the checkout (empty when it cannot tell),
 * less what a cycle itself writes there (the JUnit report, a result written into the checkout).
 */
async function uncommittedPaths(cwd: string, config: ConsortConfig): Promise<string[]> {
  const status = await simpleGit(cwd)
    .raw(["status", "--porcelain", "--untracked-files=all"])
    .catch(() => "");
  const ours = cycleOutputMatcher(config);
  return status
    .split("\n")
    .filter(Boolean)
    .map((line) => line.slice(3))
    .filter((path) => !ours(path));
}

/** Where a cycle's result goes by default: under the git directory (never committed), else a temp folder. */
async function defaultOutDir(cwd: string): Promise<string> {
  const gitDir = await simpleGit(cwd)
    .raw(["rev-parse", "--absolute-git-dir"])
    .then((out) => out.trim())
    .catch(() => "");
  return gitDir ? join(gitDir, "consort", "cycle") : mkdtemp(join(tmpdir(), "consort-cycle-"));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function registerCycleCommands(program: Command): void {
  program
    .command("cycle")
    .description(
      "Run one cycle: fork a throwaway database branch, migrate, run the tests with a JUnit report, decide the verdict",
    )
    .option("--request <file>", 'the JSON cycle request the app dispatches ("-" reads stdin); replaces the flags below')
    .option("--step <step>", `the step to verify: ${CYCLE_STEPS.join(", ")}`)
    .option("--tests <ids>", "tests in turn, from .consort/test-list.json (e.g. T7 or T7,T8)")
    .option(
      "--earlier-green <ids>",
      "tests verified green earlier (default: every test before the first in turn; release: all)",
    )
    .option("--track <branch>", "the track's git branch (default: the current branch)")
    .option("--database-branch <name>", "the track's database branch (default: derived from the track)")
    // The names before the CLI took the MCP tools' words; kept so existing scripts still run.
    .addOption(new Option("--earlier <ids>").hideHelp())
    .addOption(new Option("--db-branch <name>").hideHelp())
    .option("--frozen-at <ref>", "check frozen test files against their text at this git ref (e.g. the RED commit)")
    .option(
      "--design-approved-at <ref>",
      "red: the commit the design gate approved; a declared module absent there is one the track creates (default: the merge base with the default branch)",
    )
    .option("--test-list <file>", "the test list (default: .consort/test-list.json)")
    .option("--config <file>", "the configuration (default: .github/consort.yml in the checkout)")
    .option("-C, --cwd <dir>", "the checkout to test", ".")
    .option(
      "--out-dir <dir>",
      `where to write ${CYCLE_RESULT_FILE} and ${CYCLE_SUMMARY_FILE} (default: consort/cycle in the git directory, never committed)`,
    )
    .option("--json", "print the cycle result as JSON")
    .option("--quiet", "no progress on stderr")
    .addHelpText(
      "after",
      "\nWithout --step or --request: runs the cycle or release the local lane waits for (after the commit that asks for one, as `consort next` says) and records its verdict in the lane.\n" +
        "Exit code: 0 when the step is verified, 1 when it is refused (the reasons are printed), 2 on bad options.\n" +
        "Commands run with DATABASE_URL set to the throwaway branch and node_modules/.bin on the PATH.\n" +
        `Example: ${consortCommand("cycle --step red --tests T7")}\n${DATA_FOLDER}`,
    )
    .action(async (options: CycleOptions) => {
      const cwd = resolve(options.cwd);
      const say = progress(options);
      // No step and no request: the job the local lane's machine waits for, as the app would run it.
      if (!options.request && !options.step) return runLaneJob(cwd, options, say);
      let request: CycleRequest;
      try {
        if (options.request) {
          if (options.step || options.tests)
            throw new CycleInputError("pass either --request or --step/--tests, not both");
          const text = options.request === "-" ? await readStdin() : await readFile(options.request, "utf8");
          request = parseCycleRequest(text, options.request === "-" ? "the request on stdin" : options.request);
        } else {
          const step = CycleStep.safeParse(options.step);
          if (!step.success) {
            throw new CycleInputError(
              `--step must be one of ${CYCLE_STEPS.join(", ")}${options.step ? `, not "${options.step}"` : ""}`,
            );
          }
          request = await buildLocalRequest({
            cwd,
            step: step.data,
            tests: ids(options.tests),
            ...((options.earlierGreen ?? options.earlier) !== undefined
              ? { earlier: ids(options.earlierGreen ?? options.earlier) }
              : {}),
            ...(options.track ? { track: options.track } : {}),
            ...((options.databaseBranch ?? options.dbBranch)
              ? { dbBranch: options.databaseBranch ?? options.dbBranch }
              : {}),
            ...(options.testList ? { testListPath: resolve(options.testList) } : {}),
            ...(options.frozenAt ? { frozenAt: options.frozenAt } : {}),
            ...(options.designApprovedAt ? { designApprovedAt: options.designApprovedAt } : {}),
          });
          if (!options.frozenAt && request.step !== "red" && !options.quiet) {
            process.stderr.write(
              "note: no frozen test files are checked; pass --frozen-at <the RED commit> to check them as the app does\n",
            );
          }
        }
      } catch (error) {
        if (error instanceof CycleInputError) throw new CliError(error.message, "see consort cycle --help", 2);
        throw error;
      }
      let config: ConsortConfig;
      try {
        ({ config } = options.config ? readConfigFile(resolve(options.config)) : readCheckoutConfig(cwd));
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(error.summary, error.fix, 2);
        throw error;
      }
      const dirty = await uncommittedPaths(cwd, config);
      if (dirty.length > 0)
        process.stderr.write(
          `warning: the working tree has ${dirty.length} uncommitted change(s) (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", …" : ""}); the cycle tests commit ${request.commit.slice(0, 12)} (HEAD), not them: commit them first to test them\n`,
        );
      const outDir = options.outDir ? resolve(options.outDir) : await defaultOutDir(cwd);
      const provider = await createProvider(config.database, { onProgress: say });
      // Named here so an interrupted cycle (Ctrl-C) can drop its throwaway branch instead of leaving it to its TTL.
      const cycleBranchName = throwawayBranchName(request.database.branch);
      const interrupted = async () => {
        process.stderr.write(`\ninterrupted: dropping the throwaway branch ${cycleBranchName}\n`);
        await provider.deleteBranch(cycleBranchName).catch((error: Error) => {
          process.stderr.write(`could not drop ${cycleBranchName} (${error.message}); its TTL will reap it\n`);
        });
        await provider.close().catch(() => {});
        process.exit(130);
      };
      const onSignal = () => void interrupted();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        const result = await runCycle(request, {
          provider,
          config,
          cwd,
          outDir,
          onProgress: say,
          rebuildMissingTrack: true,
          cycleBranchName,
        });
        printResult(options, result, () => renderCycleSummary(result).trimEnd());
        process.stderr.write(`wrote ${CYCLE_RESULT_FILE} and ${CYCLE_SUMMARY_FILE} to ${outDir}\n`);
        if (!options.quiet) process.stderr.write(`note: ${REHEARSAL_LIMITS}\n`);
        process.exitCode = exitCodeFor(result.verdict);
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        await provider.close();
      }
    });
}

/**
 * `consort cycle` with no step: run the job the local lane waits for and let its verdict move the
 * lane. The CLI passes nothing of the caller's but the checkout: the request is the lane's, the
 * verdict the job's.
 */
async function runLaneJob(cwd: string, options: CycleOptions, say: (message: string) => void): Promise<void> {
  if (options.tests || options.earlierGreen || options.earlier || options.frozenAt || options.designApprovedAt)
    throw new CliError(
      "--tests, --earlier-green, --frozen-at and --design-approved-at need --step: without one, the local lane's own request runs",
      "see consort cycle --help",
      2,
    );
  let config: ConsortConfig;
  try {
    ({ config } = options.config ? readConfigFile(resolve(options.config)) : readCheckoutConfig(cwd));
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.summary, error.fix, 2);
    throw error;
  }
  const outDir = options.outDir ? resolve(options.outDir) : await defaultOutDir(cwd);
  const provider = await createProvider(config.database, { onProgress: say });
  let run: LocalRun;
  try {
    run = await runLanePending(cwd, config, { provider, outDir, at: () => new Date().toISOString(), onProgress: say });
  } catch (error) {
    if (error instanceof ToolError) throw new CliError(error.message, error.hint);
    throw error;
  } finally {
    await provider.close();
  }
  const stage = run.rejection
    ? `the lane did not take it: ${run.rejection.join("; ")}`
    : `the lane is now at ${run.snapshot.stage}; ${consortCommand("next")} says what comes next`;
  const { result } = run;
  const rendered =
    run.workflow === "cycle"
      ? renderCycleSummary(result as CycleResult).trimEnd()
      : `release ${result.verdict} of ${result.commit.slice(0, 12)}${result.reasons.map((r) => `\n- ${r}`).join("")}`;
  const { snapshot, lane, ...data } = run;
  printResult(options, { ...data, lane: { path: lane, stage: snapshot.stage } }, () =>
    [rendered, "", `${run.dispatchId}: ${stage}`].join("\n"),
  );
  process.stderr.write(`wrote ${run.resultPath}\nnote: a local lane is a rehearsal, never evidence for the app\n`);
  process.exitCode = exitCodeFor(result.verdict);
}
