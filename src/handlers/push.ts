import { pushEvent, verifiedPush } from "../app/commits.js";
import { advanceAndAct } from "../app/engine.js";
import type { HandlerInput } from "../app/services.js";
import { branchOfRef, configOrFail, engineDeps, trackOf } from "./common.js";
import { startTrack } from "./create.js";
import type { PushPayload } from "./payloads.js";

/** The `before` of a push that created its branch. */
const NO_COMMIT = /^0{40}$/;

/**
 * `push` to a track's branch: verify the push against git (the payload is GitHub's capped summary),
 * classify the new commits, oldest first, and advance. The machine refuses a commit that is not the
 * expected role's step, and a head whose frozen files changed; the checks and the comment say why.
 */
export async function handlePush(input: HandlerInput<PushPayload>): Promise<void> {
  const { payload, octokit, services } = input;
  const branch = branchOfRef(payload.ref);
  if (!branch || payload.deleted) return;
  const deps = engineDeps(input);
  const trackId = trackOf(branch, deps.repo);
  if (!trackId) return;
  const loaded = await configOrFail(deps, payload.after, trackId);
  if (!loaded) return;
  const { config } = loaded;
  // A push that creates the branch may come before its `create`: it starts the track (once; the
  // start has a delivery id of its own), and its commits are classified from the fork point.
  const before =
    payload.created || NO_COMMIT.test(payload.before)
      ? await startTrack(
          { ...deps, deliveryId: `${deps.deliveryId}:start` },
          {
            trackId,
            branch,
            head: payload.after,
            config,
          },
        )
      : payload.before;
  const verified = await verifiedPush({
    octokit,
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    before,
    after: payload.after,
    payload: payload.commits,
    defaultBranch: deps.repo.defaultBranch,
    config,
  });
  const at = services.clock().toISOString();
  await advanceAndAct(deps, {
    trackId,
    branch,
    headSha: payload.after,
    config,
    decide: (snapshot) => {
      const event = pushEvent(
        snapshot,
        {
          before,
          after: payload.after,
          ...verified,
          forced: payload.forced || verified.forced,
          pusher: payload.sender.login,
        },
        at,
      );
      return event ? [event] : undefined;
    },
  });
}
