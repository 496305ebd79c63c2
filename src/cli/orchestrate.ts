import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Option, type Command } from "commander";
import { formatIssue } from "../artifacts/issues.js";
import { ARTIFACT_PATHS, SCHEMAS_DIR } from "../artifacts/paths.js";
import { CHECKPOINTS } from "../artifacts/validate.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { ConfigError, readCheckoutConfig } from "../config/load.js";
import {
  describeLane,
  nextAction,
  renderLane,
  renderNextAction,
  restoreSnapshot,
  SnapshotError,
  type TrackSnapshot,
} from "../orchestrator/index.js";
import { checkStates } from "../gates/checks.js";
import {
  localLane,
  replayTrack,
  ToolError,
  CheckpointInput,
  validateCheckoutAndDatabase,
  type ReplayedTrack,
} from "../tools/index.js";
import { createProvider } from "../substrate/index.js";
import { expandStateFileFromGit, STATE_BRANCH, TrackStateFile, unsealed } from "../state/index.js";
import { consortCommand } from "./invocation.js";
import { CliError, printResult } from "./output.js";

/**
 * `consort validate`, `consort next`, `consort status`: the orchestrator's decisions on a local
 * checkout, before anything is pushed. Same schemas, same machine as the app.
 */

interface DirOptions {
  cwd?: string;
  config?: string;
  json?: boolean;
}

/**
 * A snapshot from a file: a bare snapshot, or a `consort/state` track file holding one under
 * `snapshot` (a compact one read back with its texts and records from the git directory at `cwd`).
 */
async function readSnapshotFile(path: string, cwd: string): Promise<TrackSnapshot> {
  if (!existsSync(path))
    throw new CliError(
      `state file ${path} does not exist`,
      "pass --state <file> (a track snapshot, or tracks/<id>.json from the consort/state branch)",
    );
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new CliError(`state file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  const candidate =
    json && typeof json === "object" && "snapshot" in json && !("stage" in json)
      ? await stateFileSnapshot(json, path, cwd)
      : json;
  try {
    return restoreSnapshot(candidate);
  } catch (error) {
    if (error instanceof SnapshotError) throw new CliError(`${path}: ${error.message}`, error.hint);
    throw error;
  }
}

/** The snapshot of a state file; a compact one's texts and finished units' records read from git at `cwd`. */
async function stateFileSnapshot(json: object, path: string, cwd: string): Promise<unknown> {
  const file = TrackStateFile.safeParse(json);
  if (!file.success) return (json as { snapshot: unknown }).snapshot;
  try {
    return (await expandStateFileFromGit(unsealed(file.data), cwd)).snapshot;
  } catch (error) {
    throw new CliError(
      `${path} refers to its track's texts and finished units' records, which ${cwd} does not hold: ${(error as Error).message}`,
      `run it in a clone of the repository that fetched the state branch (git fetch origin ${STATE_BRANCH}), or pass -C <that clone>`,
    );
  }
}

const STATE_OPTION =
  "a track snapshot, or a tracks/<id>.json file from the consort/state branch (its signature is not checked here); default: the branch's commits since its merge base with the default branch, replayed through the machine (gates wait for approval), or since the app's state where consort/state was fetched and verifies with CONSORT_STATE_KEY";

/** Where a replayed track's state comes from, in words (and why a fetched consort/state was not used). */
function replaySource(replayed: ReplayedTrack): string {
  const since = replayed.fromState
    ? `the app's verified state (${replayed.fromState.ref.replace(/^refs\/(remotes\/|heads\/)/, "")} at ${replayed.fromState.head.slice(0, 12)}) and ${replayed.commits} commit(s) since, replayed locally`
    : replayed.lane
      ? localLane(replayed)
      : `${replayed.commits} commit(s) since the merge base with ${replayed.defaultBranch}, replayed locally; gates show as waiting for approval`;
  const stated = replayed.stateNote ? `${since} (${replayed.stateNote})` : since;
  return `${stated}\ndefault branch: ${replayed.defaultBranch}, ${replayed.defaultBranchSource}`;
}

/**
 * What the local lane runs at the terminal where the app would act: the cycle or release its
 * machine waits for (run by `consort cycle`, which records the job's own verdict: nobody reports
 * one), or a gate a person approves. Undefined when the lane waits for nothing of the kind.
 */
function localStep(replayed: ReplayedTrack): string | undefined {
  const lane = replayed.lane;
  if (!lane) return undefined;
  const { pending } = lane;
  if (pending)
    return `locally: run ${consortCommand("cycle")} to run ${pending.workflow === "deploy" ? "the release" : `the ${pending.request.step} cycle`} (${pending.dispatchId}) on this checkout; the job's verdict moves the lane`;
  const gate = /^([a-z-]+)-gate$/.exec(replayed.snapshot.stage)?.[1];
  return gate
    ? `locally: a person who made none of the gate's commits runs ${consortCommand(`approve ${gate}`)} at a terminal (a rehearsal)`
    : undefined;
}

/** The track from --state, else derived from the checkout's commits (no token, no network). */
async function trackSnapshot(
  options: DirOptions & { state?: string },
  config: ConsortConfig,
): Promise<{ snapshot: TrackSnapshot; source: string; local?: string }> {
  const cwd = resolve(options.cwd ?? ".");
  if (options.state)
    return { snapshot: await readSnapshotFile(resolve(options.state), cwd), source: resolve(options.state) };
  try {
    const stateKey = process.env.CONSORT_STATE_KEY || undefined;
    const replayed = await replayTrack(cwd, config, new Date().toISOString(), stateKey ? { stateKey } : {});
    const local = localStep(replayed);
    return { snapshot: replayed.snapshot, source: replaySource(replayed), ...(local ? { local } : {}) };
  } catch (error) {
    if (error instanceof ToolError) throw new CliError(error.message, error.hint);
    throw error;
  }
}

function configFor(options: DirOptions): ConsortConfig {
  try {
    return readCheckoutConfig(resolve(options.cwd ?? "."), options.config).config;
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.summary, error.fix);
    throw error;
  }
}

export function registerOrchestrateCommands(program: Command): void {
  program
    .command("validate")
    .description(
      "Validate .github/consort.yml and the design artifacts in .consort/ (shape and cross-file rules); exits 1 listing every problem",
    )
    .option("-C, --cwd <dir>", "the checkout to validate", ".")
    .option("--config <file>", "the configuration file, relative to --cwd (default .github/consort.yml)")
    .option(
      "--checkpoint <checkpoint>",
      `validate as of a design step: ${CHECKPOINTS.join(", ")} (default: as far as the files go)`,
    )
    // The name before the CLI took the MCP tool's word; kept so existing scripts still run.
    .addOption(new Option("--up-to <checkpoint>").hideHelp())
    .option("--json", "print the report as JSON")
    .action(async (options: DirOptions & { checkpoint?: string; upTo?: string }) => {
      const asked = options.checkpoint ?? options.upTo;
      const upTo = CheckpointInput.safeParse(asked);
      if (!upTo.success) {
        throw new CliError(`unknown checkpoint "${asked}"`, `use one of ${CHECKPOINTS.join(", ")}`);
      }
      const dir = resolve(options.cwd ?? ".");
      if (!existsSync(dir)) throw new CliError(`${dir} does not exist`, "pass -C <checkout>");
      const asOf = { config: options.config, upTo: upTo.data };
      // Foreign keys to tables the design does not describe are looked up in the database branch.
      let opened: Awaited<ReturnType<typeof createProvider>> | undefined;
      const report = await validateCheckoutAndDatabase(dir, asOf, async () => {
        opened = await createProvider(readCheckoutConfig(dir, options.config).config.database);
        return opened;
      }).finally(() => opened?.close());
      printResult(options, report, () =>
        report.ok
          ? report.files.length === 0
            ? [
                `✓ configuration valid: ${report.config}. No design yet: nothing in .consort/ to validate.`,
                `Write the stories first: ${ARTIFACT_PATHS.spec}, the Product Owner's step, on a feature branch (\`${consortCommand("next")}\` there shows the task; formats in ${SCHEMAS_DIR}/).`,
              ].join("\n")
            : `✓ ${report.files.length} artifact file(s) valid as of ${report.checkpoint}; configuration: ${report.config}`
          : [
              `✗ ${report.issues.length} problem(s) (checked as of ${report.checkpoint}; configuration: ${report.config}):`,
              ...report.issues.map((i) => `  ${formatIssue(i)}`),
            ].join("\n"),
      );
      if (!report.ok) process.exitCode = 1;
    });

  program
    .command("next")
    .description(
      "What happens next on a track: who acts, the task, the paths they may change, the tests in turn and what will be checked",
    )
    .option("--state <file>", STATE_OPTION)
    .option("-C, --cwd <dir>", "the checkout whose .github/consort.yml applies", ".")
    .option("--config <file>", "the configuration file, relative to --cwd")
    .option("--json", "print the NextAction as JSON (what an agent receives)")
    .action(async (options: DirOptions & { state?: string }) => {
      const config = configFor(options);
      const { snapshot, source, local } = await trackSnapshot(options, config);
      const action = nextAction(snapshot, config);
      printResult(options, local ? { ...action, local } : action, () =>
        [renderNextAction(action), ...(local ? ["", local] : []), "", `(state: ${source})`].join("\n"),
      );
    });

  program
    .command("status")
    .description("The whole lane of a track (done, now, next) and the state of each Consort check")
    .option("--state <file>", STATE_OPTION)
    .option("-C, --cwd <dir>", "the checkout whose commits and .github/consort.yml apply", ".")
    .option("--config <file>", "the configuration file, relative to --cwd")
    .option("--json", "print the lane and checks as JSON")
    .action(async (options: DirOptions & { state?: string }) => {
      const { snapshot, source } = await trackSnapshot(options, configFor(options));
      const lane = describeLane(snapshot);
      const checks = checkStates(snapshot);
      const data = {
        trackId: snapshot.context.trackId,
        branch: snapshot.context.branch,
        stage: snapshot.stage,
        head: snapshot.context.head,
        lane,
        checks,
      };
      printResult(options, data, () =>
        [
          `track ${snapshot.context.trackId} (${snapshot.context.branch} → ${snapshot.context.baseBranch}) at ${snapshot.stage}, head ${snapshot.context.head.slice(0, 7)}`,
          `state: ${source}`,
          "",
          renderLane(snapshot),
          "",
          ...checks.map(
            (c) => `  ${c.status === "success" ? "✓" : c.status === "failure" ? "✗" : "…"} ${c.name}: ${c.title}`,
          ),
        ].join("\n"),
      );
    });
}
