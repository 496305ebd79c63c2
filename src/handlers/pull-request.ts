import { movesAlongALane } from "../config/branch-kind.js";
import type { HandlerInput } from "../app/services.js";
import { failAllChecks } from "../app/checks.js";
import { branchOfPull, refreshTrack } from "../engine/delivery.js";
import type { PullRequestPayload } from "./payloads.js";

/**
 * `pull_request` opened, reopened or synchronize: the PR is where people read the track, so its
 * head gets the Consort checks as the track's state stands and the ONE sticky comment is brought
 * up to date. Classifying the pushed commits is the `push` handler's work (GitHub sends both), so
 * a synchronize never classifies the same commits twice.
 */
export async function handlePullRequestUpdated(input: HandlerInput<PullRequestPayload>): Promise<void> {
  const { head } = input.payload.pull_request;
  if (head.repo?.id !== input.payload.repository.id) return explainFork(input);
  const tracked = await branchOfPull(input);
  if (!movesAlongALane(tracked?.kind)) return;
  await refreshTrack(tracked.deps, tracked.trackId, head.ref, head.sha, tracked.config);
}

/** Why a fork's PR cannot pass, said on its head: otherwise the seven required checks just wait forever. */
const FORK_TITLE = "Pull request from a fork: Consort cannot gate it";

/**
 * A PR from a fork: its pushes reach the fork, not this repository, so Consort never sees its
 * steps, keeps no state for it and runs no cycle on it. Every check fails saying so, and what to do.
 */
async function explainFork(input: HandlerInput<PullRequestPayload>): Promise<void> {
  const { pull_request: pull, repository } = input.payload;
  const summary = [
    `This pull request comes from a fork (${pull.head.ref}). Consort gates a track by the pushes to its branch in ${repository.full_name}: a fork's pushes never reach this repository, so Consort cannot classify its steps, keep its signed state, fork its database branch or run its cycles, and none of these checks can pass.`,
    `**What to do**: push the branch to ${repository.full_name} (\`git push origin ${pull.head.ref}\`, by anyone with write access) and open the pull request from there; that branch is a track from its first push. Then close this pull request.`,
  ].join("\n\n");
  await failAllChecks(
    {
      octokit: input.octokit,
      owner: repository.owner.login,
      repo: repository.name,
      appId: input.services.appId,
      headSha: pull.head.sha,
      trackId: "fork",
    },
    FORK_TITLE,
    summary,
  );
}
