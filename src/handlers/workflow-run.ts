import { findRecordedRun, readReport, reportedEvent } from "../app/ingest.js";
import { judgeResultCommit, judgeRunProvenance, type ReportedRun } from "../app/provenance.js";
import type { HandlerInput } from "../app/services.js";
import { advanceAndAct, configOrFail, engineDeps } from "./common.js";
import type { WorkflowRunPayload } from "./payloads.js";

/**
 * `workflow_run.completed`: ingest a cycle's (or release's, or promotion's) result. Only a run the
 * app dispatched is trusted: its id recorded on a track, of the expected workflow file, run from
 * the default branch, reporting on the commit the app asked about. Anything else is ignored and
 * logged. A trusted run that left no readable result is an `error`: nothing advances, the check
 * fails with a re-run button.
 */
export async function handleWorkflowRun(input: HandlerInput<WorkflowRunPayload>): Promise<void> {
  const { payload, log } = input;
  if (payload.action !== "completed") return;
  const run: ReportedRun = {
    id: payload.workflow_run.id,
    path: payload.workflow_run.path ?? payload.workflow?.path ?? "",
    event: payload.workflow_run.event,
    headBranch: payload.workflow_run.head_branch,
    headRepositoryId: payload.workflow_run.head_repository?.id,
    repositoryId: payload.repository.id,
    conclusion: payload.workflow_run.conclusion,
    htmlUrl: payload.workflow_run.html_url,
  };
  if (!/consort-(cycle|deploy|promote)\.yml/.test(run.path)) return; // most runs in a repository are not ours: cost nothing
  const deps = engineDeps(input);
  const found = await findRecordedRun(deps, run.id);
  const provenance = judgeRunProvenance({ run, defaultBranch: deps.repo.defaultBranch, recorded: found?.recorded });
  if (!provenance.trusted || !found) {
    log.warn(
      { runId: run.id, path: run.path },
      `ignored workflow run: ${provenance.trusted ? "no track" : provenance.reason}`,
    );
    return;
  }
  const report = await readReport(deps, run, provenance.recorded);
  const mismatch = report.commit ? judgeResultCommit(found.recorded, report.commit) : undefined;
  if (mismatch && !mismatch.trusted) {
    log.warn({ runId: run.id, trackId: found.trackId }, `ignored workflow run: ${mismatch.reason}`);
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
      const event = reportedEvent(snapshot, found.recorded, run, report, at);
      return event ? [event] : undefined;
    },
  });
}
