import { movesAlongALane } from "../config/branch-kind.js";
import { BUTTONS } from "../app/checks.js";
import { CHECK_NAMES } from "../contracts/gates.js";
import type { HandlerInput } from "../app/services.js";
import { stateStoreFor } from "../engine/track.js";
import { canWrite } from "../gates/permissions.js";
import { collaboratorPermission } from "../github/permissions.js";
import type { TrackEvent } from "../orchestrator/index.js";
import { assertCanReseal, ResealDeniedError } from "../state/index.js";
import { advanceAndAct } from "../engine/engine.js";
import { branchOf, engineDeps, refreshTrack, retryDatabaseBranch, trackIdOf } from "../engine/delivery.js";
import type { CheckRunPayload } from "./payloads.js";

/**
 * `check_run.requested_action` (the buttons on a Consort check) and `check_run.rerequested`
 * (GitHub's own re-run): re-run a cycle, renegotiate the test list, retry a failed database branch
 * step, re-seal tampered state. The clicking user's permission is asked of the API: write for a
 * re-run, a renegotiation or a retry, admin for a re-seal. A refused click changes nothing and is logged with the reason.
 */
export async function handleCheckRun(input: HandlerInput<CheckRunPayload>): Promise<void> {
  const { payload, octokit, services, log } = input;
  const run = payload.check_run;
  // Only our own runs carry our buttons; another app's run of the same name is not ours to act on.
  if (run.app?.id !== services.appId || !(CHECK_NAMES as readonly string[]).includes(run.name)) return;
  const branch = run.check_suite?.head_branch;
  if (!branch) return;
  const deps = engineDeps(input);
  const trackId = trackIdOf(branch, deps.repo);
  if (!trackId) return;
  const identifier =
    payload.action === "rerequested" ? BUTTONS.rerunCycle.identifier : payload.requested_action?.identifier;
  const sender = payload.sender.login;
  const { owner, repo } = deps.repo;

  if (identifier === BUTTONS.reseal.identifier) {
    try {
      await assertCanReseal(octokit, owner, repo, sender);
    } catch (error) {
      if (error instanceof ResealDeniedError) {
        log.warn({ trackId, sender }, error.message);
        return;
      }
      throw error;
    }
    await stateStoreFor(deps).reseal(trackId, sender, `re-sealed from the ${run.name} check`);
    const found = await branchOf(deps, branch, run.head_sha);
    if (movesAlongALane(found?.kind)) await refreshTrack(deps, trackId, branch, run.head_sha, found.config);
    return;
  }

  if (
    identifier !== BUTTONS.rerunCycle.identifier &&
    identifier !== BUTTONS.renegotiate.identifier &&
    identifier !== BUTTONS.retryDatabase.identifier
  ) {
    log.warn({ trackId, identifier }, "unknown check run action; ignored");
    return;
  }
  const permission = await collaboratorPermission(octokit, owner, repo, sender);
  if (!canWrite(permission)) {
    log.warn(
      { trackId, sender, permission },
      `${sender} has ${permission} permission and may not ${identifier} on ${trackId}`,
    );
    return;
  }
  const found = await branchOf(deps, branch, run.head_sha);
  // The buttons act on a track's state; no other kind of branch has one.
  if (!movesAlongALane(found?.kind)) return;
  const loaded = found;
  if (identifier === BUTTONS.retryDatabase.identifier) {
    await retryDatabaseBranch(deps, trackId, branch, run.head_sha, loaded.config);
    return;
  }
  const at = services.clock().toISOString();
  const event: TrackEvent =
    identifier === BUTTONS.renegotiate.identifier
      ? {
          type: "renegotiate",
          at,
          by: sender,
          scope: "test-list",
          reason: `${sender} asked to renegotiate the test list from ${run.name}`,
        }
      : { type: "retry", at, by: sender, reason: `${sender} asked to re-run from ${run.name}` };
  await advanceAndAct(deps, { trackId, branch, headSha: run.head_sha, config: loaded.config, decide: () => [event] });
}
