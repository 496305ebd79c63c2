import { CONFIG_PATH } from "../config/load.js";
import { readGitHubConfig, type ConfigResult } from "../github/config.js";
import type { Handler, HandlerInput } from "../app/services.js";
import { runEffects } from "./effects.js";
import { failAllChecks } from "../app/checks.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { restoreSnapshot, type Effect } from "../orchestrator/index.js";
import { advanceAndShow, reportingFailures } from "./engine.js";
import { isTracksBranch, stateStoreFor, targetOf, type AdvanceOutcome, type EngineDeps } from "./track.js";
import type { RepoContext } from "../app/github.js";
import { STATE_BRANCH, trackIdForBranch } from "../state/index.js";
import { MERGE_QUEUE_BRANCH_PREFIX } from "../contracts/branches.js";
import type { Repository } from "../handlers/payloads.js";

/** The repository an event is about, from its payload. */
function repoContext(repository: Repository): RepoContext {
  return {
    owner: repository.owner.login,
    repo: repository.name,
    fullName: repository.full_name,
    defaultBranch: repository.default_branch,
  };
}

export function engineDeps<P extends { repository: Repository }>(input: HandlerInput<P>): EngineDeps {
  return {
    octokit: input.octokit,
    log: input.log,
    services: input.services,
    deliveryId: input.deliveryId,
    repo: repoContext(input.payload.repository),
  };
}

/** The track a git branch is, or undefined for branches Consort never tracks (trunk, the state branch, a merge queue's). */
export function trackOf(branch: string, repo: RepoContext): string | undefined {
  if (branch === repo.defaultBranch || branch === STATE_BRANCH || branch.startsWith(MERGE_QUEUE_BRANCH_PREFIX))
    return undefined;
  return trackIdForBranch(branch);
}

/** `refs/heads/x` → `x`; undefined for tags and other refs. */
export function branchOfRef(ref: string): string | undefined {
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : undefined;
}

/**
 * The repository's configuration from the default branch. When it is invalid every Consort check
 * on `headSha` fails naming the problems, and the caller stops: nothing is decided on a config
 * Consort cannot read.
 */
export async function configOrFail(
  deps: EngineDeps,
  headSha: string | undefined,
  trackId: string,
): Promise<Extract<ConfigResult, { ok: true }> | undefined> {
  const result = await readGitHubConfig({
    octokit: deps.octokit,
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    defaultBranch: deps.repo.defaultBranch,
    ...(deps.services.configReads ? { kept: deps.services.configReads } : {}),
  });
  if (result.ok) return result;
  deps.log.warn({ repository: deps.repo.fullName }, result.message);
  if (headSha) await failAllChecks(targetOf(deps, headSha, trackId), `Invalid ${CONFIG_PATH}`, result.message);
  return undefined;
}

/** The parts of a pull request that say which track it is: its head, and the branch it goes into. */
interface PullHead {
  head: { ref: string; sha: string; repo: { id: number } | null };
  base: { ref: string };
}

/**
 * The track a pull request's head is, with the engine deps and the configuration; undefined, and
 * the handler stops, for a PR from a fork (never a track of this repository), a PR into any branch
 * but the default one (its reviews approve nothing and its close ends nothing: a PR into a scratch
 * branch at an older commit lists fewer commits under approval), a branch Consort does not track,
 * or a configuration it cannot read (then every check on the head fails).
 */
export async function trackOfPull<P extends { repository: Repository; pull_request: PullHead }>(
  input: HandlerInput<P>,
): Promise<{ deps: EngineDeps; trackId: string; config: ConsortConfig } | undefined> {
  const { head, base } = input.payload.pull_request;
  if (head.repo?.id !== input.payload.repository.id) return undefined;
  if (base.ref !== input.payload.repository.default_branch) {
    input.log.info(
      { pull: head.ref, base: base.ref, delivery: input.deliveryId },
      `a pull request from ${head.ref} into ${base.ref}, not the default branch ${input.payload.repository.default_branch}: Consort acts only on the track's pull request into the default branch`,
    );
    return undefined;
  }
  const deps = engineDeps(input);
  const trackId = trackOf(head.ref, deps.repo);
  if (!trackId) return undefined;
  const loaded = await configOrFail(deps, head.sha, trackId);
  return loaded && { deps, trackId, config: loaded.config };
}

/**
 * Re-show a track as its state stands (no event of its own): the checks on `headSha` and the
 * sticky comment. Used when a PR opens or moves and after a re-seal.
 */
export async function refreshTrack(
  deps: EngineDeps,
  trackId: string,
  branch: string,
  headSha: string,
  config: ConsortConfig,
): Promise<AdvanceOutcome["kind"]> {
  return (await advanceAndShow(deps, { trackId, branch, headSha, config, decide: () => [] })).kind;
}

/**
 * The Retry button of a failed database branch step: bring the database branch in line with the
 * track (created while the track lives, deleted once it ended), then show the checks again. Both
 * steps are idempotent; a failure fails consort/discipline again with the reason and the button.
 */
export async function retryDatabaseBranch(
  deps: EngineDeps,
  trackId: string,
  branch: string,
  headSha: string,
  config: ConsortConfig,
): Promise<void> {
  const state = await stateStoreFor(deps).read(trackId);
  // A branch whose name maps to another branch's track id is not that track.
  if (!state || !isTracksBranch(state, branch)) return;
  const snapshot = restoreSnapshot(state.snapshot);
  const ctx = snapshot.context;
  const ended = snapshot.stage === "done" || snapshot.stage === "abandoned";
  const step: Effect = ended
    ? { type: "deleteDatabase", branch: ctx.databaseBranch }
    : { type: "forkDatabase", branch: ctx.databaseBranch, parent: ctx.parentDatabaseBranch };
  await runEffects(deps, {
    trackId,
    state,
    snapshot,
    config,
    effects: [step, { type: "updateChecks", commit: headSha }],
  });
}

/**
 * `handler`, with any failure it meets before its effects could report (GitHub unreachable, a
 * read refused) failing every check on the head `headOf` names, with the reason, before the
 * delivery fails. Past GitHub's ten-second webhook timeout nobody sees the delivery fail.
 */
export function reportingFailuresOf<P extends { repository: Repository }>(
  handler: Handler<P>,
  headOf: (payload: P) => { branch: string | undefined; headSha: string } | undefined,
): Handler<P> {
  return async (input) => {
    const head = headOf(input.payload);
    const deps = engineDeps(input);
    const trackId = head?.branch ? trackOf(head.branch, deps.repo) : undefined;
    await reportingFailures(trackId && head ? targetOf(deps, head.headSha, trackId) : undefined, () => handler(input));
  };
}
