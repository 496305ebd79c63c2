import { movesAlongALane } from "../config/branch-kind.js";
import { branchDeletedEvent } from "../push/read.js";
import { advanceAndAct } from "../engine/engine.js";
import type { HandlerInput } from "../app/services.js";
import { branchOf, branchOfPull, engineDeps } from "../engine/delivery.js";
import { dropExperiment } from "../engine/experiment.js";
import type { DeletePayload, PullRequestPayload } from "./payloads.js";

/** `delete` of a track's branch: the track is abandoned and its database branch deleted; an experiment's database branch is dropped. */
export async function handleDelete(input: HandlerInput<DeletePayload>): Promise<void> {
  const { payload, services } = input;
  if (payload.ref_type !== "branch") return;
  const deps = engineDeps(input);
  // The branch is gone: there is no commit left to put a failing check on.
  const found = await branchOf(deps, payload.ref, undefined);
  if (found?.kind === "experiment") return dropExperiment(deps, { branch: payload.ref, config: found.config });
  if (!movesAlongALane(found?.kind)) return;
  const { trackId, config } = found;
  await advanceAndAct(deps, {
    trackId,
    branch: payload.ref,
    headSha: undefined,
    config,
    decide: (snapshot) => {
      const event = branchDeletedEvent(
        snapshot,
        { branch: payload.ref, by: payload.sender.login },
        services.clock().toISOString(),
      );
      return event ? [event] : undefined;
    },
  });
}

/**
 * `pull_request.closed`: merged, the track promotes (the parent's migration is dispatched and the
 * track cleaned up when it reports); closed unmerged, the track is torn down.
 */
export async function handlePullRequestClosed(input: HandlerInput<PullRequestPayload>): Promise<void> {
  const { payload, services } = input;
  const tracked = await branchOfPull(input);
  if (!movesAlongALane(tracked?.kind)) return;
  const { deps, trackId, config } = tracked;
  const pull = payload.pull_request;
  const at = services.clock().toISOString();
  await advanceAndAct(deps, {
    trackId,
    branch: pull.head.ref,
    headSha: pull.head.sha,
    config,
    decide: (snapshot) => {
      if (snapshot.stage === "done" || snapshot.stage === "abandoned") return undefined;
      if (pull.merged && pull.merge_commit_sha)
        return [{ type: "merged", at, commit: pull.merge_commit_sha, by: payload.sender.login }];
      return [{ type: "closed", at, by: payload.sender.login }];
    },
  });
}
