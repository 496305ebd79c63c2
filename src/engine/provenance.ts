import { WORKFLOWS, type WorkflowKind } from "../github/dispatch.js";

/** What the `workflow_run` webhook says about a run (already zod-parsed by the handler). */
export interface ReportedRun {
  id: number;
  /** `.github/workflows/<file>`; GitHub may append `@<ref>`. */
  path: string;
  event: string;
  headBranch: string | null;
  /** The repository the run's code came from; a fork's run is never ours. */
  headRepositoryId: number | undefined;
  repositoryId: number;
  conclusion: string | null;
  htmlUrl: string;
  /** The dispatch id the run's `run-name` names, if it names one. */
  dispatchId: string | undefined;
  /** Who started the run (`actor`), and who started this attempt of it (`triggering_actor`, differs on a re-run). */
  actor: string | undefined;
  triggeringActor: string | undefined;
}

/** A run the app recorded when it dispatched it (kept in the track's state). */
export interface RecordedRun {
  runId: number;
  /** The machine's id for the dispatch the run answers. */
  dispatchId: string;
  workflow: WorkflowKind;
  /** The commit the cycle was asked to test. */
  commit: string;
  /** requestDigest of the request dispatched; absent for a dispatch recorded before it was kept. */
  requestSha256: string | undefined;
}

export type Provenance =
  { trusted: true; workflow: WorkflowKind; recorded: RecordedRun } | { trusted: false; reason: string };

/**
 * Decide whether a finished run may move a track (docs/ARCHITECTURE.md, Cycles): only a run the app dispatched
 * (its run-name names a dispatch id a track recorded, and the app's bot started it), of the expected workflow file, run from the default branch of this very
 * repository, for the commit the app asked about. Everything else is ignored and reported.
 */
export function judgeRunProvenance({
  run,
  defaultBranch,
  recorded,
  appLogin,
}: {
  run: ReportedRun;
  defaultBranch: string;
  recorded: RecordedRun | undefined;
  /** The app's bot login (`<slug>[bot]`); given, a run someone else started or re-ran is not the app's. */
  appLogin?: string | undefined;
}): Provenance {
  const kind = workflowOfPath(run.path);
  if (!kind) return { trusted: false, reason: `run ${run.id} is of ${run.path}, not a Consort workflow` };
  const ref = run.path.split("@")[1];
  if (ref !== undefined && ref !== `refs/heads/${defaultBranch}`)
    return {
      trusted: false,
      reason: `run ${run.id} ran ${run.path}, not the workflow file of the default branch ${defaultBranch}`,
    };
  if (!recorded)
    return {
      trusted: false,
      reason: `run ${run.id} of ${run.path} was not dispatched by Consort for any open track (its run-name names ${run.dispatchId ? `dispatch ${run.dispatchId}, which no track recorded` : "no dispatch id"})`,
    };
  if (run.dispatchId !== recorded.dispatchId)
    return {
      trusted: false,
      reason: `run ${run.id} names dispatch ${run.dispatchId ?? "none"} in its run-name, but Consort dispatched ${recorded.dispatchId}`,
    };
  if (recorded.workflow !== kind)
    return {
      trusted: false,
      reason: `run ${run.id} is of ${run.path}, but Consort dispatched ${WORKFLOWS[recorded.workflow].path} as that run`,
    };
  if (run.event !== "workflow_dispatch")
    return {
      trusted: false,
      reason: `run ${run.id} was triggered by "${run.event}", not by Consort's workflow_dispatch`,
    };
  if (run.headBranch !== defaultBranch) {
    return {
      trusted: false,
      reason: `run ${run.id} ran ${run.path} from "${run.headBranch ?? "no branch"}", not from the default branch ${defaultBranch}`,
    };
  }
  if (run.headRepositoryId !== undefined && run.headRepositoryId !== run.repositoryId) {
    return { trusted: false, reason: `run ${run.id} ran code from another repository (a fork)` };
  }
  const starter = appLogin === undefined ? undefined : notStartedBy(run, appLogin);
  if (starter) return { trusted: false, reason: starter };
  return { trusted: true, workflow: kind, recorded };
}

/**
 * Why `run` is not one the app started, or undefined when it is. Anyone with write access can run
 * a Consort workflow by hand with a run-name that borrows a dispatch id in flight; only the app's
 * own dispatch makes its bot the run's actor, and a re-run by a person names them as triggering actor.
 */
function notStartedBy(run: ReportedRun, appLogin: string): string | undefined {
  const ours = (login: string | undefined) => login !== undefined && login.toLowerCase() === appLogin.toLowerCase();
  if (!ours(run.actor))
    return `run ${run.id} was started by ${run.actor ?? "an unknown actor"}, not by Consort (${appLogin}): its run-name borrows dispatch ${run.dispatchId ?? "none"}, so it is ignored`;
  if (run.triggeringActor !== undefined && !ours(run.triggeringActor))
    return `run ${run.id} was re-run by ${run.triggeringActor}, not by Consort (${appLogin}), so it is ignored`;
  return undefined;
}

/** The result inside the artifact must be about the commit the app asked to test. */
export function judgeResultCommit(recorded: RecordedRun, resultCommit: string): Provenance | undefined {
  if (resultCommit !== recorded.commit) {
    return {
      trusted: false,
      reason: `run ${recorded.runId} reports on commit ${resultCommit.slice(0, 12)}, but Consort asked it to test ${recorded.commit.slice(0, 12)}`,
    };
  }
  return undefined;
}

function workflowOfPath(path: string): WorkflowKind | undefined {
  const bare = path.split("@")[0];
  return (Object.keys(WORKFLOWS) as WorkflowKind[]).find((kind) => WORKFLOWS[kind].path === bare);
}
