import { pushEvent, verifiedPush } from "../app/commits.js";
import { advanceAndAct } from "../app/engine.js";
import type { HandlerInput } from "../app/services.js";
import { branchOfRef, configOrFail, engineDeps, trackOf } from "./common.js";
import type { PushPayload } from "./payloads.js";

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
  const verified = await verifiedPush({
    octokit,
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    before: payload.before,
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
        { before: payload.before, after: payload.after, ...verified, forced: payload.forced || verified.forced },
        at,
      );
      return event ? [event] : undefined;
    },
  });
}
