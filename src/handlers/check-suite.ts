import { movesAlongALane } from "../config/branch-kind.js";
import type { HandlerInput } from "../app/services.js";
import { advanceAndShow } from "../engine/engine.js";
import { canWrite } from "../gates/permissions.js";
import { collaboratorPermission } from "../github/permissions.js";
import { transition, type TrackEvent } from "../orchestrator/index.js";
import { branchOf, engineDeps, trackIdOf } from "../engine/delivery.js";
import type { CheckSuitePayload } from "./payloads.js";

/**
 * `check_suite.rerequested` ("Re-run all checks" on Consort's suite of a head), by a user with
 * write access: a cycle the track may retry (one that errored, or a dispatch that failed) is
 * dispatched again, as the Re-run cycle button does, and every check of the head is written again
 * from the state as it stands, which also repairs a check whose write was lost. Anything else the
 * machine would refuse is not attempted. A reader's click changes nothing and is logged.
 */
export async function handleCheckSuite(input: HandlerInput<CheckSuitePayload>): Promise<void> {
  const { payload, octokit, services, log } = input;
  const suite = payload.check_suite;
  // GitHub sends every app the rerequest of its own suite only; another app's suite is not ours.
  if (suite.app?.id !== services.appId || !suite.head_branch) return;
  const deps = engineDeps(input);
  const trackId = trackIdOf(suite.head_branch, deps.repo);
  if (!trackId) return;
  const sender = payload.sender.login;
  const permission = await collaboratorPermission(octokit, deps.repo.owner, deps.repo.repo, sender);
  if (!canWrite(permission)) {
    log.warn({ trackId, sender, permission }, `${sender} has ${permission} permission and may not re-run ${trackId}`);
    return;
  }
  const found = await branchOf(deps, suite.head_branch, suite.head_sha);
  if (!movesAlongALane(found?.kind)) return;
  const { config } = found;
  const retry: TrackEvent = {
    type: "retry",
    at: services.clock().toISOString(),
    by: sender,
    reason: `${sender} asked to re-run all checks`,
  };
  await advanceAndShow(deps, {
    trackId,
    branch: suite.head_branch,
    headSha: suite.head_sha,
    config,
    // Only a retry the machine accepts is applied; otherwise the checks are shown again as they stand.
    decide: (snapshot) => (transition(snapshot, retry, config).rejection ? [] : [retry]),
  });
}
