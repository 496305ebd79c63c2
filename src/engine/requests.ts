import { ARTIFACT_PATHS } from "../artifacts/paths.js";
import { CycleRequest, runsOfIds } from "../contracts/cycle-request.js";
import { hashFrozenText } from "../gates/freeze.js";
import { DeployRequest, PromoteRequest } from "../contracts/deploy.js";
import {
  effectiveFrozenTests,
  type DispatchCycleEffect,
  type Effect,
  type TrackSnapshot,
} from "../orchestrator/index.js";
import type { TrackState } from "../state/index.js";
import { requestDigest, type WorkflowKind } from "../github/dispatch.js";

/**
 * The one JSON input of each workflow the app dispatches, built from the transition's effect and
 * the snapshot alone (pure), so the state write that starts a cycle can record the hash of the very
 * request the effect then sends: one state write per event, and a result counts only if it names
 * that hash.
 */

export interface WorkflowRequest {
  workflow: Exclude<WorkflowKind, "agent">;
  dispatchId: string;
  request: CycleRequest | DeployRequest | PromoteRequest;
}

/** The request an effect dispatches, or undefined for an effect that dispatches no Consort job. */
export function workflowRequestOf(
  effect: Effect,
  branch: string,
  snapshot: TrackSnapshot,
): WorkflowRequest | undefined {
  if (effect.type === "dispatchCycle")
    return effect.step === "release"
      ? { workflow: "deploy", dispatchId: effect.dispatchId, request: deployRequest(branch, effect, snapshot) }
      : { workflow: "cycle", dispatchId: effect.dispatchId, request: cycleRequest(branch, effect, snapshot) };
  if (effect.type === "promoteDatabase")
    return {
      workflow: "promote",
      dispatchId: effect.dispatchId,
      request: PromoteRequest.parse({
        version: 1,
        dispatchId: effect.dispatchId,
        track: branch,
        commit: effect.commit,
        database: { parent: effect.parent, track: effect.branch },
      }),
    };
  return undefined;
}

/** Record, on the state about to be written, the hash of every request this transition dispatches. */
export function recordRequestDigests(state: TrackState, effects: Effect[], snapshot: TrackSnapshot): TrackState {
  const digests = new Map<string, string>();
  for (const effect of effects) {
    const dispatched = workflowRequestOf(effect, state.branch, snapshot);
    if (dispatched) digests.set(dispatched.dispatchId, requestDigest(dispatched.request));
  }
  if (digests.size === 0) return state;
  return {
    ...state,
    cycles: state.cycles.map((c) =>
      digests.has(c.dispatchId) ? { ...c, requestSha256: digests.get(c.dispatchId)! } : c,
    ),
  };
}

/** The one JSON input of the release (a verified preview deploy), validated by the deploy runner's schema. */
function deployRequest(branch: string, effect: DispatchCycleEffect, snapshot: TrackSnapshot): DeployRequest {
  const cycle = cycleRequest(branch, { ...effect, step: "refactor" }, snapshot);
  return DeployRequest.parse({
    version: 1,
    dispatchId: effect.dispatchId,
    track: branch,
    commit: effect.commit,
    database: { branch: effect.databaseBranch, parent: snapshot.context.parentDatabaseBranch },
    // The trunk the track forked from: the release's migrations are those since the merge base.
    base: { branch: snapshot.context.baseBranch },
    testList: {
      ...approvedTestList(effect, snapshot),
      tests: runsOfIds([...effect.greenTests, ...effect.tests].map((t) => t.id)),
    },
    frozenTestFiles: cycle.frozenTestFiles,
  });
}

/**
 * The test list the gate approved, by path and frozen hash: the job reads the tests' files and
 * titles there, at the commit, so the request does not grow with the list.
 */
function approvedTestList(effect: DispatchCycleEffect, snapshot: TrackSnapshot): { path: string; sha256: string } {
  const path = ARTIFACT_PATHS.testList;
  const text = snapshot.context.artifacts[path];
  const sha256 = effect.frozen[path] ?? (text === undefined ? undefined : hashFrozenText(text));
  if (!sha256) throw new Error(`the track has no ${path}: a cycle names its tests by id in the approved test list`);
  return { path, sha256 };
}

/**
 * The one JSON input of a cycle, validated by the cycle runner's own schema before it leaves. It
 * carries ids, commits and hashes, never text: the tests by id in the approved test list (runs
 * such as `T1-T40`), and for each frozen test file the commit whose verified RED froze it; the job
 * reads the titles and the frozen texts from git.
 */
function cycleRequest(branch: string, effect: DispatchCycleEffect, snapshot: TrackSnapshot): CycleRequest {
  const ids = (tests: Array<{ id: string }>) => runsOfIds(tests.map((t) => t.id));
  const frozenAt = effectiveFrozenTests(snapshot.context);
  return CycleRequest.parse({
    version: 1,
    dispatchId: effect.dispatchId,
    track: branch,
    step: effect.step,
    commit: effect.commit,
    testList: {
      ...approvedTestList(effect, snapshot),
      inTurn: ids(effect.tests),
      earlierGreen: ids(effect.greenTests),
    },
    frozenTestFiles: Object.entries(effect.frozen)
      .filter(([path]) => !path.startsWith(".consort/"))
      .map(([path, sha256]) => {
        const frozen = frozenAt[path];
        return frozen && frozen.hash === sha256 && /^[0-9a-f]{40}$/.test(frozen.commit)
          ? { path, sha256, commit: frozen.commit }
          : { path, sha256 };
      }),
    ...(effect.step === "red" ? architectureOf(effect, snapshot) : {}),
    database: { branch: effect.databaseBranch },
    // The trunk the track forked from: a refactor counts only the track's own test changes since the merge base.
    base: { branch: snapshot.context.baseBranch },
  });
}

/**
 * For a RED: the approved architecture by path and frozen hash, and the commit the design gate was
 * approved on, so the job can tell from git which declared modules the track creates (those absent
 * there) without the request carrying any text. None when the track has no approved architecture.
 */
function architectureOf(
  effect: DispatchCycleEffect,
  snapshot: TrackSnapshot,
): { architecture?: { path: string; sha256: string; approvedAt: string } } {
  const path = ARTIFACT_PATHS.architecture;
  const sha256 = effect.frozen[path];
  const gate = snapshot.context.gates.design;
  const approval = gate?.approvals.findLast((a) => a.manifestHash === gate.approvedHash);
  if (!sha256 || !approval || !/^[0-9a-f]{40}$/.test(approval.commit)) return {};
  return { architecture: { path, sha256, approvedAt: approval.commit } };
}
