import type { ConsortConfig } from "../config/consort-config.js";
import {
  eventProblems,
  restoreSnapshot,
  transition,
  type Effect,
  type TrackEvent,
  type TrackSnapshot,
  type TransitionResult,
} from "../orchestrator/index.js";
import {
  createStateStore,
  StateConflictError,
  TamperedStateError,
  type StateStore,
  type TrackState,
} from "../state/index.js";
import { failAllChecks, failTampered } from "../app/checks.js";
import type { Log, RepoContext, GitHub } from "../app/github.js";
import { projectState } from "./projection.js";
import { guardStateStore, sequencesOfDelivery } from "./state-guard.js";
import { recordRequestDigests } from "./requests.js";
import { overdueEvent } from "./timeout.js";
import type { AppServices } from "../app/services.js";

/** What the track engine needs for one delivery. */
export interface EngineDeps {
  octokit: GitHub;
  log: Log;
  services: AppServices;
  deliveryId: string;
  repo: RepoContext;
}

export type AdvanceOutcome =
  /** The branch has no state file: it is not a Consort track. */
  | { kind: "no-track" }
  /** This delivery was applied before: nothing changed (redelivery). */
  | { kind: "duplicate"; state: TrackState }
  /** Nothing to do for this event. */
  | { kind: "unchanged"; state: TrackState }
  | { kind: "advanced"; state: TrackState; before: TrackState; result: TransitionResult }
  /** The state file failed its schema or signature: every check fails, nothing advances. */
  | { kind: "tampered"; error: TamperedStateError }
  /** Every compare-and-swap retry lost: the event was not applied and the checks say so. */
  | { kind: "conflict"; error: StateConflictError };

/** Decide the events for a delivery from the track's current state (pure: no I/O in here). */
export type Decide = (snapshot: TrackSnapshot, state: TrackState) => TrackEvent[] | undefined;

export function stateStoreFor(deps: Pick<EngineDeps, "octokit" | "services" | "repo">): StateStore {
  // With the app's database to remember versions in, a delivery's stores start from it (see state-guard.ts).
  const sequences = deps.services.seenSequences ? sequencesOfDelivery(deps.octokit) : deps.services.stateSequences;
  const store = guardStateStore(
    createStateStore({
      octokit: deps.octokit,
      owner: deps.repo.owner,
      repo: deps.repo.repo,
      key: deps.services.stateKey,
      ...(deps.services.previousStateKeys ? { previousKeys: deps.services.previousStateKeys } : {}),
      clock: deps.services.clock,
      ...(sequences ? { sequences } : {}),
      ...(deps.services.appLogin ? { writer: deps.services.appLogin } : {}),
      ...(deps.services.stateBlobs ? { blobTexts: deps.services.stateBlobs } : {}),
    }),
    deps,
    sequences,
  );
  const written = deps.services.onStateWritten;
  if (!written) return store;
  const repository = `${deps.repo.owner}/${deps.repo.repo}`;
  const told = <T extends { outcome: string }>(outcome: T): T => {
    if (outcome.outcome === "written") written(repository);
    return outcome;
  };
  return {
    ...store,
    update: async (...args) => told(await store.update(...args)),
    reseal: async (...args) => told(await store.reseal(...args)),
  };
}

/**
 * The one way a handler moves a track: read the signed state, restore the snapshot, apply the
 * events with the pure `transition`, write the next state with a compare-and-swap (re-deciding on
 * a lost race), at most once per delivery id. Tampered state and lost races end as failed checks
 * on `headSha` saying so; they never advance anything.
 */
export async function advanceTrack(
  deps: EngineDeps,
  {
    trackId,
    branch,
    headSha,
    config,
    decide,
    amend,
  }: {
    trackId: string;
    branch: string;
    headSha: string | undefined;
    config: ConsortConfig;
    decide: Decide;
    amend?: (state: TrackState) => TrackState;
  },
): Promise<AdvanceOutcome> {
  const store = stateStoreFor(deps);
  let result: TransitionResult | undefined;
  let before: TrackState | undefined;
  let foreign: string | undefined;
  let outcome;
  try {
    outcome = await store.update(trackId, deps.deliveryId, (current) => {
      result = undefined;
      before = current;
      foreign = undefined;
      if (!current) return undefined;
      // A branch whose name maps to another branch's track id is not that track.
      if (!isTracksBranch(current, branch)) {
        foreign = current.branch;
        return undefined;
      }
      const snapshot = restoreSnapshot(current.snapshot);
      // A cycle that never reported ends here, on whatever event notices it first.
      const overdue = overdueEvent(snapshot, current, deps.services.clock(), config.cycle.timeoutMinutes);
      const events = [...(overdue ? [overdue] : []), ...(decide(snapshot, current) ?? [])];
      const base = amend ? amend(current) : current;
      if (events.length === 0) return base === current ? undefined : base;
      result = applyEvents(snapshot, events, config);
      // The dispatches this step asks for are recorded in the same write (their requests' hashes).
      return recordRequestDigests(projectState(base, result.snapshot), result.effects, result.snapshot);
    });
  } catch (error) {
    if (error instanceof TamperedStateError) {
      deps.log.warn({ trackId, delivery: deps.deliveryId }, `tampered state: ${error.message}`);
      if (headSha) await failTampered({ ...targetOf(deps, headSha, trackId) }, error, deps.repo.fullName, branch);
      return { kind: "tampered", error };
    }
    if (error instanceof StateConflictError) {
      deps.log.warn({ trackId, delivery: deps.deliveryId }, error.message);
      if (headSha)
        await failAllChecks(
          targetOf(deps, headSha, trackId),
          "Consort could not record this event",
          error.message,
          true,
        );
      return { kind: "conflict", error };
    }
    throw error;
  }
  if (foreign !== undefined) {
    deps.log.warn(
      { trackId, delivery: deps.deliveryId },
      `track ${trackId} is the track of branch ${foreign}, not of ${branch}: this event is not about it`,
    );
    return { kind: "no-track" };
  }
  if (outcome.outcome === "duplicate-delivery") return { kind: "duplicate", state: outcome.state };
  if (!outcome.state) return { kind: "no-track" };
  if (outcome.outcome === "unchanged" || !result || !before) return { kind: "unchanged", state: outcome.state };
  return { kind: "advanced", state: outcome.state, before, result };
}

/** Whether `branch` is the git branch this state belongs to (exactly: git names are case-sensitive). */
export function isTracksBranch(state: Pick<TrackState, "branch">, branch: string): boolean {
  return state.branch === branch;
}

/**
 * Fold several events through the machine; effects are concatenated, rejections kept. This is
 * where a delivery's events enter the machine, so each is checked against its schema here (an
 * event that fails is refused with every problem; `transition` itself trusts its typed event).
 */
function applyEvents(snapshot: TrackSnapshot, events: TrackEvent[], config: ConsortConfig): TransitionResult {
  let current: TransitionResult = { snapshot, effects: [] };
  const effects: Effect[] = [];
  const reasons: string[] = [];
  for (const event of events) {
    const problems = eventProblems(event);
    current =
      problems.length > 0
        ? { snapshot: current.snapshot, effects: [], rejection: { reasons: problems } }
        : transition(current.snapshot, event, config);
    effects.push(...current.effects);
    if (current.rejection) reasons.push(...current.rejection.reasons);
  }
  return { snapshot: current.snapshot, effects, ...(reasons.length > 0 ? { rejection: { reasons } } : {}) };
}

/** Where a handler's check runs go. */
export function targetOf(deps: Pick<EngineDeps, "octokit" | "services" | "repo">, headSha: string, trackId: string) {
  return {
    octokit: deps.octokit,
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    appId: deps.services.appId,
    headSha,
    trackId,
  };
}
