import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConsortConfig } from "../config/consort-config.js";
import { requestDigest } from "../github/dispatch.js";
import type { RecordedRun, ReportedRun } from "../engine/provenance.js";
import { CYCLE_RESULT_FILE, type CycleResult } from "../contracts/cycle-result.js";
import { DEPLOY_EVIDENCE_FILE, type DeployEvidence } from "../contracts/deploy.js";
import { runCycle } from "../cycle/index.js";
import { runDeploy } from "../deploy/index.js";
import { reportedEvent, reportOfResult } from "../engine/ingest.js";
import { transition, type TrackSnapshot } from "../orchestrator/index.js";
import type { BranchProvider } from "../substrate/index.js";
import { ToolError } from "./errors.js";
import { loadLane, writeLane, type LaneRequest } from "./local-lane.js";
import { pendingRequest, replayTrack } from "./replay.js";

/**
 * The local lane runs the job its machine waits for: the cycle or release request a push
 * dispatched (kept in the lane as the app would have sent it), run on this checkout against the
 * configured database by the app's own job runners (`runCycle`, `runDeploy`), its result read into
 * the machine by the app's own mapping (`reportOfResult`, `reportedEvent`). Nobody reports a
 * verdict: the job that ran is the only source of the event, as a workflow run is for the app.
 */

export interface LocalRun {
  workflow: LaneRequest["workflow"];
  dispatchId: string;
  result: CycleResult | DeployEvidence;
  /** Where the job's result file was written (under the git directory, never committed). */
  resultPath: string;
  /** The stage the lane moved to on the job's verdict. */
  snapshot: TrackSnapshot;
  /** What the machine answered when it refused the report (a result that does not answer its request). */
  rejection?: string[];
  lane: string;
}

export interface LocalRunDeps {
  provider: BranchProvider;
  /** Where the result file goes. */
  outDir: string;
  at: () => string;
  onProgress?: (message: string) => void;
}

export async function runLanePending(repoPath: string, config: ConsortConfig, deps: LocalRunDeps): Promise<LocalRun> {
  const replayed = await replayTrack(repoPath, config, deps.at());
  const lane = replayed.lane;
  if (!lane)
    throw new ToolError(
      `Track "${replayed.trackId}" follows the app's verified state (consort/state): its cycles run in GitHub Actions.`,
      "Push; the app dispatches the cycle.",
      "NOT_LOCAL",
    );
  const pending = lane.pending;
  if (!pending)
    throw new ToolError(
      `No cycle or release is waiting to run: the track is at ${replayed.snapshot.stage}.`,
      "Run `consort next` to see whose turn it is (a cycle runs here after the commit that asks for one).",
      "NOTHING_PENDING",
    );
  const { request } = pending;
  const onProgress = deps.onProgress ?? (() => {});
  let raw: CycleResult | DeployEvidence;
  if (pending.workflow === "cycle")
    raw = await runCycle(pending.request, {
      provider: deps.provider,
      config,
      cwd: repoPath,
      outDir: deps.outDir,
      onProgress,
      // The app forks the track's database at its start; nobody did here, so the first job rebuilds it.
      rebuildMissingTrack: true,
    });
  else raw = await runDeploy(pending.request, { provider: deps.provider, config, cwd: repoPath, onProgress });
  const file = pending.workflow === "cycle" ? CYCLE_RESULT_FILE : DEPLOY_EVIDENCE_FILE;
  const resultPath = join(deps.outDir, file);
  if (pending.workflow === "deploy") {
    await mkdir(deps.outDir, { recursive: true });
    await writeFile(resultPath, `${JSON.stringify(raw, null, 2)}\n`);
  }

  // The run as the app would see it: the lane's own numbering, concluded as the job's exit code says.
  const runs = lane.runs;
  const run: ReportedRun = {
    id: runs.length + 1,
    path: `local:${pending.workflow}`,
    event: "local",
    headBranch: replayed.defaultBranch,
    headRepositoryId: undefined,
    repositoryId: 0,
    conclusion: raw.verdict === "verified" ? "success" : "failure",
    htmlUrl: `file://${resultPath}`,
    dispatchId: pending.dispatchId,
    actor: undefined,
    triggeringActor: undefined,
  };
  const recorded: RecordedRun = {
    runId: run.id,
    workflow: pending.workflow,
    commit: request.commit,
    dispatchId: pending.dispatchId,
    requestSha256: requestDigest(request),
  };
  const at = deps.at();
  const report = reportOfResult(raw, run, recorded);
  const event = reportedEvent(replayed.snapshot, recorded, run, report, at);
  if (!event)
    throw new ToolError(
      `The track no longer waits for ${pending.dispatchId}: its result was not recorded.`,
      "Run `consort next`.",
      "LANE_MOVED",
    );
  const answered = transition(replayed.snapshot, event, config);
  const next = pendingRequest(undefined, [answered], replayed.branch, answered.snapshot);
  const current = await loadLane(repoPath, replayed.trackId);
  // Only over the lane the job was run for: another consort command may have moved it meanwhile.
  const same =
    current.file !== undefined && JSON.stringify(current.file.snapshot) === JSON.stringify(replayed.snapshot);
  const { written } = same
    ? await writeLane(
        repoPath,
        {
          trackId: replayed.trackId,
          base: replayed.base,
          snapshot: answered.snapshot,
          approvals: lane.approvals,
          refusals: replayed.refusals,
          ...(next ? { pending: next } : {}),
          runs: [
            ...runs,
            {
              dispatchId: pending.dispatchId,
              workflow: pending.workflow,
              commit: request.commit,
              verdict: raw.verdict,
              at,
              result: resultPath,
            },
          ],
        },
        current.text,
      )
    : { written: false };
  if (!written)
    throw new ToolError(
      `The local lane ${lane.path} changed while ${pending.dispatchId} ran (another consort command wrote it), so its verdict was not recorded.`,
      "Run `consort cycle` again.",
      "LANE_MOVED",
    );
  // A verdict that dispatches the next job (a refactor verified → the release) leaves it pending.
  const after = await replayTrack(repoPath, config, deps.at());
  return {
    workflow: pending.workflow,
    dispatchId: pending.dispatchId,
    result: raw,
    resultPath,
    snapshot: after.snapshot,
    ...(answered.rejection ? { rejection: answered.rejection.reasons } : {}),
    lane: lane.path,
  };
}
