import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { formatIssue, type ArtifactIssue } from "../artifacts/issues.js";
import { ARTIFACT_PATHS, REVIEWS_DIR, SCHEMAS_DIR } from "../artifacts/paths.js";
import { ReviewVerdict } from "../artifacts/review.js";
import { CHECKPOINTS, parseArtifact, validateArtifacts, type Checkpoint } from "../artifacts/validate.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { CONFIG_PATH, ConfigError, configIssues, readCheckoutConfig } from "../config/load.js";
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
import { replayTrack, ToolError, type ReplayedTrack } from "../tools/index.js";
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

/** The configuration of a checkout and where it came from, or every problem with it. */
function loadConfig(dir: string, file?: string): { config?: ConsortConfig; issues: ArtifactIssue[]; source: string } {
  try {
    const loaded = readCheckoutConfig(dir, file);
    const source = loaded.source === "defaults" ? `defaults (no ${CONFIG_PATH})` : (file ?? CONFIG_PATH);
    return { config: loaded.config, issues: [], source };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { issues: configIssues(error), source: error.file };
  }
}

/** Every artifact text under `.consort/` of a checkout, by repository path. */
function readArtifacts(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const path of Object.values(ARTIFACT_PATHS)) {
    const file = join(dir, path);
    if (existsSync(file)) files[path] = readFileSync(file, "utf8");
  }
  const reviews = join(dir, REVIEWS_DIR);
  if (existsSync(reviews)) {
    for (const name of readdirSync(reviews)
      .filter((n) => n.endsWith(".json"))
      .sort())
      files[`${REVIEWS_DIR}/${name}`] = readFileSync(join(reviews, name), "utf8");
  }
  return files;
}

/** The furthest checkpoint the files present reach (a spec with NFRs is past `stories`, and so on). */
function inferCheckpoint(files: Record<string, string>): Checkpoint {
  if (files[ARTIFACT_PATHS.testList] !== undefined) return "test-list";
  if (files[ARTIFACT_PATHS.ux] !== undefined) return "ux";
  if (files[ARTIFACT_PATHS.dbDesign] !== undefined) return "design";
  if (files[ARTIFACT_PATHS.architecture] !== undefined) return "architecture";
  if (/"nfrs"\s*:/.test(files[ARTIFACT_PATHS.spec] ?? "")) return "spec";
  return "stories";
}

export interface ValidateReport {
  ok: boolean;
  checkpoint: Checkpoint;
  config: string;
  files: string[];
  issues: ArtifactIssue[];
}

/** Validate a checkout's configuration and artifacts; every problem, not the first. */
export function validateCheckout(dir: string, options: { config?: string; upTo?: Checkpoint } = {}): ValidateReport {
  const loaded = loadConfig(dir, options.config);
  const files = readArtifacts(dir);
  const checkpoint = options.upTo ?? inferCheckpoint(files);
  // A repository with no design yet has nothing to validate but its configuration.
  const nothingYet = Object.keys(files).length === 0 && !options.upTo;
  const result = nothingYet
    ? { issues: [] }
    : validateArtifacts(files, checkpoint, { testGlobs: loaded.config?.paths.tests });
  const issues = [...loaded.issues, ...result.issues];
  for (const [path, text] of Object.entries(files)) {
    if (!path.startsWith(`${REVIEWS_DIR}/`)) continue;
    const review = parseArtifact(path, text, ReviewVerdict);
    issues.push(...review.issues);
    const unit = path.slice(REVIEWS_DIR.length + 1, -".json".length);
    if (review.value && review.value.unit !== unit)
      issues.push({
        file: path,
        path: "$.unit",
        message: `the review names ${review.value.unit} but is filed as ${unit}`,
        fix: `set "unit": "${unit}" or rename the file`,
      });
  }
  return { ok: issues.length === 0, checkpoint, config: loaded.source, files: Object.keys(files).sort(), issues };
}

/** A snapshot from a file: a bare snapshot, or a `consort/state` track file holding one under `snapshot`. */
function readSnapshotFile(path: string): TrackSnapshot {
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
      ? (json as { snapshot: unknown }).snapshot
      : json;
  try {
    return restoreSnapshot(candidate);
  } catch (error) {
    if (error instanceof SnapshotError) throw new CliError(`${path}: ${error.message}`, error.hint);
    throw error;
  }
}

const STATE_OPTION =
  "a track snapshot, or a tracks/<id>.json file from the consort/state branch (its signature is not checked here); default: the branch's commits since its merge base with the default branch, replayed through the machine (gates wait for approval), or since the app's state where consort/state was fetched and verifies with CONSORT_STATE_KEY";

/** Where a replayed track's state comes from, in words (and why a fetched consort/state was not used). */
function replaySource(replayed: ReplayedTrack): string {
  const since = replayed.fromState
    ? `the app's verified state (${replayed.fromState.ref.replace(/^refs\/(remotes\/|heads\/)/, "")} at ${replayed.fromState.head.slice(0, 12)}) and ${replayed.commits} commit(s) since, replayed locally`
    : `${replayed.commits} commit(s) since the merge base with ${replayed.defaultBranch}, replayed locally; gates show as waiting for approval`;
  return replayed.stateNote ? `${since} (${replayed.stateNote})` : since;
}

/** The track from --state, else derived from the checkout's commits (no token, no network). */
async function trackSnapshot(
  options: DirOptions & { state?: string },
  config: ConsortConfig,
): Promise<{ snapshot: TrackSnapshot; source: string }> {
  if (options.state) return { snapshot: readSnapshotFile(resolve(options.state)), source: resolve(options.state) };
  const cwd = resolve(options.cwd ?? ".");
  try {
    const stateKey = process.env.CONSORT_STATE_KEY || undefined;
    const replayed = await replayTrack(cwd, config, new Date().toISOString(), stateKey ? { stateKey } : {});
    return { snapshot: replayed.snapshot, source: replaySource(replayed) };
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
      "--up-to <checkpoint>",
      `validate as of a design step: ${CHECKPOINTS.join(", ")} (default: as far as the files go)`,
    )
    .option("--json", "print the report as JSON")
    .action((options: DirOptions & { upTo?: string }) => {
      const upTo = z.enum(CHECKPOINTS).optional().safeParse(options.upTo);
      if (!upTo.success) {
        throw new CliError(`unknown checkpoint "${options.upTo}"`, `use one of ${CHECKPOINTS.join(", ")}`);
      }
      const dir = resolve(options.cwd ?? ".");
      if (!existsSync(dir)) throw new CliError(`${dir} does not exist`, "pass -C <checkout>");
      const report = validateCheckout(dir, { config: options.config, upTo: upTo.data });
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
      const { snapshot, source } = await trackSnapshot(options, config);
      const action = nextAction(snapshot, config);
      printResult(options, action, () => `${renderNextAction(action)}\n\n(state: ${source})`);
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
