import { branchDeletedEvent } from "../push/read.js";
import { advanceAndAct } from "../engine/engine.js";
import { judgeMergeGroup } from "../engine/merge-group.js";
import type { HandlerInput } from "../app/services.js";
import { stateStoreFor } from "../engine/track.js";
import { showGroupChecks } from "../app/checks.js";
import { trackIdForBranch } from "../state/index.js";
import { branchOfRef, configOrFail, engineDeps } from "../engine/delivery.js";
import type { MergeGroupPayload } from "./payloads.js";

/**
 * `merge_group.checks_requested`: a merge queue built a group and waits for the required checks on
 * its head. The seven Consort checks report one verdict there: success only when every PR in the
 * group is a track whose checks stand green for exactly the content the group merges
 * (src/engine/merge-group.ts); otherwise each fails naming the PR and the reason.
 */
export async function handleMergeGroup(input: HandlerInput<MergeGroupPayload>): Promise<void> {
  const deps = engineDeps(input);
  const group = input.payload.merge_group;
  const verdict = await judgeMergeGroup(deps, {
    headSha: group.head_sha,
    headRef: group.head_ref,
    baseRef: group.base_ref,
  });
  const target = {
    octokit: deps.octokit,
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    appId: deps.services.appId,
    headSha: group.head_sha,
  };
  input.log.info(
    { delivery: deps.deliveryId, group: group.head_ref, ok: verdict.ok },
    verdict.ok ? "merge group approved" : `merge group refused: ${verdict.problems.join(" ")}`,
  );
  if (verdict.ok)
    await showGroupChecks(
      target,
      "success",
      "Merge group holds approved tracks only",
      `Every pull request in this group is a track whose checks stand green for the content it merges: ${verdict.pulls.map((n) => `#${n}`).join(", ")}.`,
    );
  else
    await showGroupChecks(
      target,
      "failure",
      "Merge group holds what no gate approved",
      [
        "This group may not merge:",
        ...verdict.problems.map((p) => `- ${p}`),
        "Remove the pull request from the queue, bring its track to green on its own head, and queue it again.",
      ].join("\n"),
    );
}

/**
 * `merge_group.destroyed`: the group is gone (merged, dequeued or invalidated). Consort keeps
 * nothing for a group, but a version that took queue branches for tracks left a track and a
 * database branch behind for it: that track ends here, and its database branch is deleted.
 */
export async function handleMergeGroupDestroyed(input: HandlerInput<MergeGroupPayload>): Promise<void> {
  const deps = engineDeps(input);
  const branch = branchOfRef(input.payload.merge_group.head_ref);
  if (!branch) return;
  const trackId = trackIdForBranch(branch);
  // Nothing to end for a group Consort never took for a track (every group since queue branches are not tracks).
  if (!(await stateStoreFor(deps).read(trackId))) return;
  const loaded = await configOrFail(deps, undefined, trackId);
  if (!loaded) return;
  await advanceAndAct(deps, {
    trackId,
    branch,
    headSha: undefined,
    config: loaded.config,
    decide: (snapshot) => {
      const event = branchDeletedEvent(
        snapshot,
        { branch, by: input.payload.sender.login },
        input.services.clock().toISOString(),
      );
      return event ? [event] : undefined;
    },
  });
}
