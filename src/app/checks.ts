import {
  CHECK_ACTIONS,
  CheckAction,
  renderFailingCheckRuns,
  renderExperimentCheckRuns,
  renderGroupCheckRuns,
  renderRefusedExperimentCheckRuns,
  renderTamperedCheckRuns,
  writeCheckRuns,
  type ExperimentView,
} from "../report/index.js";
import type { TamperedStateError } from "../state/index.js";
import type { GitHub, RepoRef } from "./github.js";

/** The buttons on Consort's checks; a click arrives as `check_run.requested_action` with the identifier. */
export const BUTTONS = {
  ...CHECK_ACTIONS,
  /** A database branch step (fork or delete) failed: do it again. */
  retryDatabase: CheckAction.parse({
    label: "Retry",
    description: "Redo the failed database branch step",
    identifier: "retry-database",
  }),
} as const;

export interface Target extends RepoRef {
  octokit: GitHub;
  appId: number;
  headSha: string;
  trackId: string;
}

/** Every check of a commit fails with one reason: configuration or a race Consort cannot get past. */
export async function failAllChecks(
  { octokit, owner, repo, appId, headSha, trackId }: Target,
  title: string,
  summary: string,
  withRerun = false,
): Promise<void> {
  await writeCheckRuns(
    octokit,
    { owner, repo, appId, headSha },
    renderFailingCheckRuns(title, summary, trackId, withRerun ? [CHECK_ACTIONS.rerunCycle] : []),
  );
}

/** Every check shows one verdict on a merge queue's group head (it is judged as a whole). */
export async function showGroupChecks(
  { octokit, owner, repo, appId, headSha }: Omit<Target, "trackId">,
  conclusion: "success" | "failure",
  title: string,
  summary: string,
): Promise<void> {
  await writeCheckRuns(
    octokit,
    { owner, repo, appId, headSha },
    renderGroupCheckRuns(conclusion, title, summary, "merge-queue"),
  );
}

/** Every check fails because the track's state file failed its schema or signature; each offers the re-seal button. */
export async function failTampered(
  { octokit, owner, repo, appId, headSha, trackId }: Target,
  error: TamperedStateError,
  fullName: string,
  branch: string,
): Promise<void> {
  const view = {
    repository: fullName,
    trackId,
    branch,
    headSha,
    path: error.path,
    problems: error.problems,
    ...(error.commit ? { stateCommit: error.commit } : {}),
  };
  await writeCheckRuns(octokit, { owner, repo, appId, headSha }, renderTamperedCheckRuns(view));
}

export type { ExperimentView };

/** The `external_id` of an experiment's check runs: tells them from a track's runs on the same commit. */
export const experimentRunId = (branch: string) => `experiment:${branch}`;

/**
 * An experiment's seven checks on its own head, created with the time of the push (`startedAt`:
 * the experiment's last push is read back from it) and the experiment's `external_id`.
 */
export async function showExperimentChecks(
  { octokit, owner, repo, appId, headSha }: Omit<Target, "trackId">,
  view: ExperimentView,
  startedAt: string,
): Promise<void> {
  await writeCheckRuns(
    octokit,
    { owner, repo, appId, headSha, startedAt, externalId: experimentRunId(view.branch) },
    renderExperimentCheckRuns(view),
  );
}

/** Every check on an experiment's head fails: the repository holds `max` experiments already (`holding`). */
export async function refuseExperiment(
  { octokit, owner, repo, appId, headSha }: Omit<Target, "trackId">,
  branch: string,
  max: number,
  holding: string[],
): Promise<void> {
  await writeCheckRuns(
    octokit,
    { owner, repo, appId, headSha, externalId: experimentRunId(branch) },
    renderRefusedExperimentCheckRuns(branch, max, holding),
  );
}
