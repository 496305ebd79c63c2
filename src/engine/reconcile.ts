import { createHash } from "node:crypto";
import type { ConsortConfig } from "../config/consort-config.js";
import { approvalEvents, standingReviews } from "../gates/approval.js";
import { listGateReviews } from "../github/reviews.js";
import { restoreSnapshot, type TrackEvent, type TrackSnapshot } from "../orchestrator/index.js";
import { STATE_BRANCH, TamperedStateError, type TrackState } from "../state/index.js";
import { decideApprovals, pendingGates } from "./approvals.js";
import { failTampered } from "../app/checks.js";
import { branchDeletedEvent, completedPush, pushEvent, verifiedPush } from "../push/read.js";
import { githubSource } from "../push/github.js";
import { readGitHubConfig } from "../github/config.js";
import { advanceAndShow } from "./engine.js";
import { dispatchIdOfRunName, WORKFLOWS } from "../github/dispatch.js";
import { httpStatus, type GitHub, type Log, type RepoRef } from "../app/github.js";
import { recordedRunOf, reportedEvent, reportedRun, trustedReport } from "./ingest.js";
import { openPullRequestFor } from "../github/pull-request.js";
import type { AppServices } from "../app/services.js";
import type { RepoContext } from "../app/github.js";
import { stateStoreFor, targetOf, type EngineDeps } from "./track.js";
import { sweepExperiments } from "./experiment.js";

/** What reconcile did for one track. */
interface TrackReconciliation {
  trackId: string;
  outcome: "repaired" | "in-sync" | "ended" | "tampered" | "conflict" | "failed";
  /** The facts it found that the state had missed (pushes, runs, reviews, a deleted branch, a timeout). */
  found: string[];
  error?: string;
}

export interface RepositoryReconciliation {
  repository: string;
  config: "file" | "defaults" | "invalid";
  tracks: TrackReconciliation[];
  /** Experiments whose database branch this run dropped: idle longer than experiments.ttlDays. */
  expiredExperiments: string[];
}

/**
 * `consort reconcile`: GitHub does not redeliver a failed webhook by itself, so re-derive every
 * open track from GitHub (branch head and its commits, finished runs, PR reviews, timeouts) and
 * repair its state and checks, through the same engine and the same facts-to-events functions as
 * the webhook handlers; and drop the database branches of experiments idle past experiments.ttlDays. Idempotent: the delivery id is a hash of the facts applied, and a track
 * whose state already holds them is only re-shown, so it can run on a schedule.
 */
export async function reconcileRepository({
  octokit,
  owner,
  repo,
  services,
  log,
  onProgress = () => {},
}: RepoRef & {
  octokit: GitHub;
  services: AppServices;
  log: Log;
  onProgress?: (message: string) => void;
}): Promise<RepositoryReconciliation> {
  const { data: repository } = await octokit.request("GET /repos/{owner}/{repo}", { owner, repo });
  const ctx: RepoContext = { owner, repo, fullName: repository.full_name, defaultBranch: repository.default_branch };
  const base = { octokit, log, services, repo: ctx };
  const config = await readGitHubConfig({ octokit, owner, repo, defaultBranch: ctx.defaultBranch });
  const store = stateStoreFor(base);
  const trackIds = await store.list();
  const result: RepositoryReconciliation = {
    repository: ctx.fullName,
    config: config.ok ? config.source : "invalid",
    tracks: [],
    expiredExperiments: config.ok ? await sweepExperiments({ ...base, deliveryId: "" }, config.config) : [],
  };
  for (const trackId of trackIds) {
    onProgress(`${ctx.fullName}: ${trackId}`);
    try {
      result.tracks.push(
        await reconcileTrack(
          { ...base, deliveryId: "" },
          trackId,
          config.ok ? config.config : undefined,
          config.ok ? undefined : config.message,
        ),
      );
    } catch (error) {
      log.error({ trackId }, `reconcile failed: ${(error as Error).message}`);
      result.tracks.push({ trackId, outcome: "failed", found: [], error: (error as Error).message });
    }
  }
  return result;
}

async function reconcileTrack(
  deps: EngineDeps,
  trackId: string,
  config: ConsortConfig | undefined,
  configProblem: string | undefined,
): Promise<TrackReconciliation> {
  const { repo } = deps;
  let state: TrackState | undefined;
  try {
    state = await stateStoreFor(deps).read(trackId);
  } catch (error) {
    if (!(error instanceof TamperedStateError)) throw error;
    const head = await branchHead(deps, trackId);
    if (head) await failTampered(targetOf(deps, head.sha, trackId), error, repo.fullName, head.branch);
    return { trackId, outcome: "tampered", found: [error.message] };
  }
  if (!state) return { trackId, outcome: "failed", found: [], error: "the state file disappeared" };
  const snapshot = restoreSnapshot(state.snapshot);
  if (snapshot.stage === "done" || snapshot.stage === "abandoned") return { trackId, outcome: "ended", found: [] };
  if (!config) return { trackId, outcome: "failed", found: [], error: configProblem };

  const at = deps.services.clock().toISOString();
  const found: string[] = [];
  const events: TrackEvent[] = [];
  const head = await headOf(deps, state.branch);
  if (!head) {
    found.push(`branch ${state.branch} no longer exists`);
    const deleted = branchDeletedEvent(
      snapshot,
      { branch: state.branch, by: "consort-reconcile", noticed: "noticed by consort reconcile" },
      at,
    );
    if (deleted) events.push(deleted);
  } else {
    const push = await missedPush(deps, snapshot, head, config, at);
    if (push) {
      found.push(`${push.commits.length} commit(s) up to ${head.slice(0, 7)} were never classified`);
      events.push(push);
    }
    const run = await missedRun(deps, snapshot, state, at);
    if (run) {
      found.push(run.note);
      events.push(run.event);
    }
    events.push(...(await missedApprovals(deps, snapshot, state.branch, config, at, found)));
  }

  // The delivery id is the facts themselves: running again with nothing new is a no-op.
  const facts = JSON.stringify(events.map((e) => ({ ...e, at: undefined })));
  const deliveryId = `reconcile-${createHash("sha256").update(`${trackId}\n${facts}`).digest("hex").slice(0, 32)}`;
  // Nothing new: the checks and the comment are shown again in case those writes were what got lost.
  const outcome = await advanceAndShow(
    { ...deps, deliveryId },
    { trackId, branch: state.branch, headSha: head, config, decide: () => events },
  );
  if (outcome.kind === "advanced") {
    if (found.length === 0) found.push("a cycle outlived its timeout");
    return { trackId, outcome: "repaired", found };
  }
  if (outcome.kind === "tampered" || outcome.kind === "conflict")
    return { trackId, outcome: outcome.kind, found: [outcome.error.message] };
  return { trackId, outcome: "in-sync", found };
}

async function headOf(deps: EngineDeps, branch: string): Promise<string | undefined> {
  try {
    const { data } = await deps.octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
      owner: deps.repo.owner,
      repo: deps.repo.repo,
      ref: `heads/${branch}`,
    });
    return data.object.sha;
  } catch (error) {
    if (httpStatus(error) === 404) return undefined;
    throw error;
  }
}

async function branchHead(deps: EngineDeps, trackId: string): Promise<{ branch: string; sha: string } | undefined> {
  // A tampered file cannot be trusted for its branch name; the track id is the branch when it is a plain name.
  const sha = trackId === STATE_BRANCH ? undefined : await headOf(deps, trackId);
  return sha ? { branch: trackId, sha } : undefined;
}

/** The commits on the branch after the track's last known head, as the push webhook would have carried them. */
async function missedPush(
  deps: EngineDeps,
  snapshot: TrackSnapshot,
  head: string,
  config: ConsortConfig,
  at: string,
): Promise<Extract<TrackEvent, { type: "push" }> | undefined> {
  const known = snapshot.context.rejectedHead?.sha ?? snapshot.context.head;
  if (head === known) return undefined;
  const { octokit, repo } = deps;
  const source = githubSource({ octokit, owner: repo.owner, repo: repo.repo });
  const ref = { source, repository: `${repo.owner}/${repo.repo}` };
  const read = await verifiedPush({
    source,
    before: known,
    after: head,
    payload: undefined,
    defaultBranch: repo.defaultBranch,
    config,
  });
  const filled = await completedPush(
    { ...ref, before: known, after: head, config, snapshot, texts: deps.services.commitTexts },
    read,
  );
  return pushEvent(snapshot, { before: known, after: head, ...filled }, at);
}

/** A finished run of the pending dispatch whose `workflow_run` webhook never arrived. */
async function missedRun(
  deps: EngineDeps,
  snapshot: TrackSnapshot,
  state: TrackState,
  at: string,
): Promise<{ event: TrackEvent; note: string } | undefined> {
  const pending = snapshot.context.pendingDispatch;
  if (!pending) return undefined;
  const cycle = state.cycles.find((c) => c.dispatchId === pending.dispatchId);
  if (!cycle) return undefined;
  const { octokit, repo } = deps;
  const recordedKind = recordedRunOf(cycle, 0).workflow;
  // The run is found by the dispatch id its run-name carries: the app records no run id when it dispatches.
  const { data: listing } = await octokit.request("GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", {
    owner: repo.owner,
    repo: repo.repo,
    workflow_id: WORKFLOWS[recordedKind].file,
    event: "workflow_dispatch",
    branch: repo.defaultBranch,
    ...(cycle.dispatchedAt ? { created: `>=${cycle.dispatchedAt.slice(0, 19)}Z` } : {}),
    per_page: 100,
  });
  // A run that borrowed the dispatch id (someone ran the workflow by hand) is passed over for the app's own.
  const runs = listing.workflow_runs.filter(
    (r) =>
      dispatchIdOfRunName(r.display_title) === pending.dispatchId &&
      (cycle.runId === null || r.id === cycle.runId) &&
      r.status === "completed",
  );
  for (const run of runs) {
    const reported = reportedRun(run, run.repository.id);
    const recorded = recordedRunOf(cycle, Number(run.id));
    const ingested = await trustedReport(deps, reported, recorded);
    if (!ingested.trusted) {
      deps.log.warn({ runId: run.id }, `reconcile ignored run: ${ingested.reason}`);
      continue;
    }
    const event = reportedEvent(snapshot, recorded, reported, ingested.report, at);
    return event
      ? { event, note: `run ${run.id} finished (${ingested.report.outcome}) but its result was never ingested` }
      : undefined;
  }
  return undefined;
}

/** Approvals standing on the PR that the state never counted (their webhook was lost). */
async function missedApprovals(
  deps: EngineDeps,
  snapshot: TrackSnapshot,
  branch: string,
  config: ConsortConfig,
  at: string,
  found: string[],
): Promise<TrackEvent[]> {
  if (pendingGates(snapshot).length === 0) return [];
  const { octokit, repo } = deps;
  const pull = await openPullRequestFor(deps, branch);
  if (!pull) return [];
  const reviews = standingReviews(await listGateReviews(octokit, repo, pull.number));
  if (!reviews.some((r) => r.state === "APPROVED")) return [];
  const events = approvalEvents(snapshot, await decideApprovals(deps, config, pull.number, reviews, snapshot), at);
  for (const event of events)
    found.push(`@${event.approver}'s approval of the ${event.gate} gate (review ${event.reviewId}) was never counted`);
  return events;
}
