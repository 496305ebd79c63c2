import { laneOf, movesAlongALane } from "../config/branch-kind.js";
import {
  completedPush,
  oneStepEach,
  pushEvent,
  readsPending,
  verifiedPush,
  withRunnerPackages,
  type VerifiedPush,
} from "../push/read.js";
import { githubSource } from "../push/github.js";
import type { TrackSnapshot } from "../orchestrator/index.js";
import { advanceAndAct } from "../engine/engine.js";
import type { HandlerInput } from "../app/services.js";
import { branchOf, branchOfRef, engineDeps } from "../engine/delivery.js";
import { startTrack } from "./create.js";
import { showExperiment } from "../engine/experiment.js";
import type { PushPayload } from "./payloads.js";

/** The `before` of a push that created its branch. */
const NO_COMMIT = /^0{40}$/;

/**
 * `push` to an experiment: its database branch and checks (src/engine/experiment.ts). `push` to a track's branch: verify the push against git (the payload is GitHub's capped summary),
 * classify the new commits, oldest first, and advance. The machine refuses a commit that is not the
 * expected role's step, and a head whose frozen files changed; the checks and the comment say why.
 */
export async function handlePush(input: HandlerInput<PushPayload>): Promise<void> {
  const { payload, octokit, services } = input;
  const branch = branchOfRef(payload.ref);
  if (!branch || payload.deleted) return;
  const deps = engineDeps(input);
  const found = await branchOf(deps, branch, payload.after);
  if (found?.kind === "experiment")
    return showExperiment(deps, {
      branch,
      head: payload.after,
      config: found.config,
      ownHead: payload.head_commit?.distinct === true,
    });
  if (!movesAlongALane(found?.kind)) return;
  const { trackId, config } = found;
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
            lane: laneOf(found.kind),
          },
        )
      : payload.before;
  const source = githubSource({ octokit, owner: deps.repo.owner, repo: deps.repo.repo });
  const verify = (from: string) =>
    verifiedPush({
      source,
      before: from,
      after: payload.after,
      payload: payload.commits,
      defaultBranch: deps.repo.defaultBranch,
      config,
    });
  let verified = await verify(before);
  const at = services.clock().toISOString();
  const event = (snapshot: TrackSnapshot, from: string, push: VerifiedPush) => {
    const found = pushEvent(
      snapshot,
      {
        before: from,
        after: payload.after,
        ...push,
        forced: payload.forced || push.forced,
        pusher: payload.sender.login,
      },
      at,
    );
    return found ? [found] : undefined;
  };
  let unseen: string | undefined;
  let pending = false;
  let seen: TrackSnapshot | undefined;
  const advance = () =>
    advanceAndAct(deps, {
      trackId,
      branch,
      headSha: payload.after,
      config,
      decide: (snapshot) => {
        const { head, rejectedHead } = snapshot.context;
        // Moved from a commit the track has not seen: an earlier push's webhook is late, or lost.
        if (before !== head && before !== rejectedHead?.sha && payload.after !== head) {
          unseen = head;
          return undefined;
        }
        seen = snapshot;
        // The head's frozen files, or the package.json texts the frozen runner configuration reads:
        // only the snapshot says whether they are needed, so they are read after it, and it asked again.
        pending = readsPending(verified, before, snapshot, config);
        return pending ? undefined : event(snapshot, before, verified);
      },
    });
  let outcome = await advance();
  const ref = { source, repository: `${deps.repo.owner}/${deps.repo.repo}` };
  if (outcome.kind === "unchanged" && pending && seen) {
    verified = await completedPush(
      { ...ref, before, after: payload.after, config, snapshot: seen, texts: deps.services.commitTexts },
      verified,
    );
    outcome = await advance();
  }
  if (outcome.kind !== "unchanged" || unseen === undefined) return;
  // Read from the track's own head instead: when the branch has moved on from it, the push holds
  // the late one's commits too; when the track is already past this push, the delivery is stale.
  const from = unseen;
  const read = await verify(from);
  // The late push's commits need the package.json texts as much as this one's.
  const caughtUp = seen
    ? await withRunnerPackages({ ...ref, before: from, config, snapshot: seen, texts: deps.services.commitTexts }, read)
    : read;
  if (seen)
    verified = await withRunnerPackages(
      { ...ref, before, config, snapshot: seen, texts: deps.services.commitTexts },
      verified,
    );
  if (caughtUp.status === "behind" || caughtUp.status === "identical") {
    input.log.info({ trackId, delivery: deps.deliveryId }, `push to ${payload.after} is older than the track's head`);
    return;
  }
  await advanceAndAct(deps, {
    trackId,
    branch,
    headSha: payload.after,
    config,
    decide: (snapshot) =>
      snapshot.context.head !== from
        ? undefined
        : caughtUp.status === "ahead"
          ? oneStepEach(from, caughtUp, at, payload.sender.login)
          : event(snapshot, before, verified),
  });
}
