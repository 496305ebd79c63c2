import type { HandlerInput } from "../app/services.js";
import { refreshTrack, trackOfPull } from "../engine/delivery.js";
import type { PullRequestPayload } from "./payloads.js";

/**
 * `pull_request` opened, reopened or synchronize: the PR is where people read the track, so its
 * head gets the Consort checks as the track's state stands and the ONE sticky comment is brought
 * up to date. Classifying the pushed commits is the `push` handler's work (GitHub sends both), so
 * a synchronize never classifies the same commits twice.
 */
export async function handlePullRequestUpdated(input: HandlerInput<PullRequestPayload>): Promise<void> {
  const tracked = await trackOfPull(input);
  if (!tracked) return;
  const { head } = input.payload.pull_request;
  await refreshTrack(tracked.deps, tracked.trackId, head.ref, head.sha, tracked.config);
}
