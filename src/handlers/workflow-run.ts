import { advanceAndAct } from "../engine/engine.js";
import { findDispatchedRun, reportedEvent, reportedRun, trustedReport } from "../engine/ingest.js";
import { runEffects } from "../engine/effects.js";
import type { EngineDeps } from "../engine/track.js";
import type { ReportedRun } from "../engine/provenance.js";
import type { HandlerInput } from "../app/services.js";
import { configOrFail, engineDeps } from "../engine/delivery.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import type { TrackState } from "../state/index.js";
import type { WorkflowRunPayload } from "./payloads.js";

/**
 * `workflow_run.completed`: ingest a cycle's (or release's, or promotion's) result. Only a run the
 * app dispatched is trusted: its run-name names a dispatch a track recorded, the app's bot started
 * it, of the expected workflow file, run from the default branch, reporting on the commit the app
 * asked about. Anything else is ignored and logged; one that names a dispatch in flight is named
 * on the track's checks, and the dispatch stays open for the run Consort started. A trusted run
 * that left no readable result is an `error`: nothing advances, the check fails with a re-run button.
 */
export async function handleWorkflowRun(input: HandlerInput<WorkflowRunPayload>): Promise<void> {
  const { payload, log } = input;
  if (payload.action !== "completed") return;
  const run = reportedRun(
    { ...payload.workflow_run, path: payload.workflow_run.path ?? payload.workflow?.path ?? "" },
    payload.repository.id,
  );
  if (!/consort-(cycle|deploy|promote)\.yml/.test(run.path)) return; // most runs in a repository are not ours: cost nothing
  const deps = engineDeps(input);
  const found = await findDispatchedRun(deps, run);
  const ingested = await trustedReport(deps, run, found?.recorded);
  if (!ingested.trusted || !found) {
    log.warn(
      { runId: run.id, path: run.path, ...(found ? { trackId: found.trackId } : {}) },
      `ignored workflow run: ${ingested.trusted ? "no track" : ingested.reason}`,
    );
    if (found && !ingested.trusted) await nameBorrowedRun(deps, found, run, ingested.reason);
    return;
  }
  const loaded = await configOrFail(deps, undefined, found.trackId);
  if (!loaded) return;
  const at = input.services.clock().toISOString();
  await advanceAndAct(deps, {
    trackId: found.trackId,
    branch: found.state.branch,
    // Where the track's checks live, so a lost race or tampering found on write still fails them.
    headSha: (found.state.snapshot as { context?: { head?: string } }).context?.head,
    config: loaded.config,
    decide: (snapshot) => {
      const event = reportedEvent(snapshot, found.recorded, run, ingested.report, at);
      return event ? [event] : undefined;
    },
  });
}

/**
 * A run that names the dispatch a track waits for but is not the app's (someone ran the workflow
 * with a borrowed run-name): nothing is recorded, so the dispatched run still answers, and the
 * track's checks and comment name the impostor and why it was ignored.
 */
async function nameBorrowedRun(
  deps: EngineDeps,
  found: { trackId: string; state: TrackState },
  run: ReportedRun,
  reason: string,
): Promise<void> {
  const snapshot = restoreSnapshot(found.state.snapshot);
  if (snapshot.context.pendingDispatch?.dispatchId !== run.dispatchId) return;
  const loaded = await configOrFail(deps, undefined, found.trackId);
  if (!loaded) return;
  await runEffects(deps, {
    trackId: found.trackId,
    state: found.state,
    snapshot,
    config: loaded.config,
    effects: [{ type: "updateChecks", commit: snapshot.context.head }],
    notes: [
      `Ignored run ${run.id} (${run.htmlUrl}): ${reason}. Consort still waits for the run it dispatched as ${run.dispatchId}.`,
    ],
  });
}
