import { laneOf, movesAlongALane } from "../config/branch-kind.js";
import { runEffects } from "../engine/effects.js";
import { projectState } from "../engine/projection.js";
import type { HandlerInput } from "../app/services.js";
import { forkPoint } from "../push/github.js";
import { stateStoreFor, type EngineDeps } from "../engine/track.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { createTrack } from "../orchestrator/index.js";
import { emptyTrackState } from "../state/index.js";
import { resolveParentBranch } from "../substrate/index.js";
import { branchOf, engineDeps, trackIdOf } from "../engine/delivery.js";
import { showExperiment } from "../engine/experiment.js";
import type { CreatePayload } from "./payloads.js";

/**
 * `create` (a branch): an experiment forks its database branch (src/engine/experiment.ts); any
 * other branch the configuration calls a track starts one. It starts where the branch leaves the default branch (its
 * fork point), so commits the branch was created with are classified by their push like any other;
 * its database branch is forked from the one paired with the default branch (a branch has no PR
 * yet when it is created), the initial state is written, and the checks appear on the head. A
 * branch that already has a track (its push came first) is left alone.
 */
export async function handleCreate(input: HandlerInput<CreatePayload>): Promise<void> {
  const { payload, octokit } = input;
  if (payload.ref_type !== "branch") return;
  const deps = engineDeps(input);
  const branch = payload.ref;
  // Trunk and the state branch cost no read of the head.
  if (!trackIdOf(branch, deps.repo)) return;
  const { owner, repo } = deps.repo;
  const head = (
    await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { owner, repo, ref: `heads/${branch}` })
  ).data.object.sha;
  const found = await branchOf(deps, branch, head);
  // The head is the commit the branch was created at, which carries the checks of where it came from.
  if (found?.kind === "experiment") return showExperiment(deps, { branch, head, config: found.config, ownHead: false });
  if (!movesAlongALane(found?.kind)) return;
  await startTrack(deps, { trackId: found.trackId, branch, head, config: found.config, lane: laneOf(found.kind) });
}

/**
 * Start the track of `branch` at the commit where it leaves the default branch, once: a track that
 * exists is left alone (a `create` after the branch's first push, or a redelivery). Returns the
 * fork point, where the track's first push is classified from.
 */
export async function startTrack(
  deps: EngineDeps,
  {
    trackId,
    branch,
    head,
    config,
    lane,
  }: { trackId: string; branch: string; head: string; config: ConsortConfig; lane?: "maintenance" | undefined },
): Promise<string> {
  const { services } = deps;
  const start = await forkPoint({ ...deps.repo, octokit: deps.octokit, head });
  const store = stateStoreFor(deps);
  // A track that exists keeps its pairing: pairing again would find its own database branch taken.
  if (await store.read(trackId)) {
    deps.log.info({ trackId }, "track already exists; nothing to start");
    return start;
  }
  const provider = await services.openProvider(config.database);
  let pairing;
  try {
    pairing = resolveParentBranch({
      branch,
      defaultBranch: deps.repo.defaultBranch,
      rootBranch: await provider.rootBranch(),
    });
  } finally {
    await provider.close();
  }
  const at = services.clock().toISOString();
  const started = createTrack(
    {
      trackId,
      branch,
      baseBranch: deps.repo.defaultBranch,
      head: start,
      databaseBranch: pairing.branch,
      parentDatabaseBranch: pairing.parent!,
      at,
      ...(lane ? { lane } : {}),
    },
    config,
  );
  const outcome = await store.update(trackId, deps.deliveryId, (current) =>
    current
      ? undefined
      : projectState(
          emptyTrackState({
            trackId,
            repository: deps.repo.fullName,
            branch,
            snapshot: started.snapshot,
            now: services.clock(),
          }),
          started.snapshot,
        ),
  );
  if (outcome.outcome !== "written") {
    deps.log.info({ trackId, outcome: outcome.outcome }, "track already exists; nothing to start");
    return start;
  }
  await runEffects(deps, {
    trackId,
    state: outcome.state,
    snapshot: started.snapshot,
    effects: started.effects,
    config,
  });
  return start;
}
