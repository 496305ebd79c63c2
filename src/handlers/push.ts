import { pushedCommits, pushEvent } from "../app/commits.js";
import { advanceAndAct } from "../app/engine.js";
import type { HandlerInput } from "../app/services.js";
import { branchOfRef, configOrFail, engineDeps, trackOf } from "./common.js";
import type { PushPayload } from "./payloads.js";

/**
 * `push` to a track's branch: classify the new commits, oldest first, and advance. The machine
 * refuses a commit that is not the expected role's step; the checks and the sticky comment say why.
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
  const commits = await pushedCommits({
    octokit,
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    commits: payload.commits,
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
          before: payload.before,
          after: payload.after,
          forced: payload.forced,
          commits,
          pusher: payload.sender.login,
        },
        at,
      );
      return event ? [event] : undefined;
    },
  });
}
