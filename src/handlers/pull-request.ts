import type { HandlerInput } from "../app/services.js";
import { configOrFail, engineDeps, refreshTrack, trackOf } from "./common.js";
import type { PullRequestPayload } from "./payloads.js";

/**
 * `pull_request` opened, reopened or synchronize: the PR is where people read the track, so its
 * head gets the Consort checks as the track's state stands and the ONE sticky comment is brought
 * up to date. Classifying the pushed commits is the `push` handler's work (GitHub sends both), so
 * a synchronize never classifies the same commits twice.
 */
export async function handlePullRequestUpdated(input: HandlerInput<PullRequestPayload>): Promise<void> {
  const { payload } = input;
  const pull = payload.pull_request;
  if (pull.head.repo?.id !== payload.repository.id) return;
  const deps = engineDeps(input);
  const trackId = trackOf(pull.head.ref, deps.repo);
  if (!trackId) return;
  const loaded = await configOrFail(deps, pull.head.sha, trackId);
  if (!loaded) return;
  await refreshTrack(deps, trackId, pull.head.ref, pull.head.sha, loaded.config);
}
