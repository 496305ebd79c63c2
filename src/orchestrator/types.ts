import type { TestListEntry } from "../contracts/test-list.js";
import type { CycleStep } from "../contracts/cycle-request.js";
import type { RoleName } from "../contracts/roles.js";
import type { NextAction, TrackSnapshot } from "../contracts/track.js";

/**
 * The public types of the track machine (docs/ARCHITECTURE.md, Tracks, artifacts and roles; The machine; Gates). Everything here is plain JSON data: a
 * handler parses a webhook into a `TrackEvent`, calls `transition(snapshot, event, config)`, stores
 * the returned `TrackSnapshot` and executes the returned `Effect`s. Nothing in the machine does I/O
 * or reads the clock: time arrives inside events (`at`, ISO 8601).
 */

/** The stages and the gates are the contracts' vocabulary (src/contracts); the machine's face shows them too. */
export {
  DESIGN_STEPS,
  STAGES,
  gateAtStage,
  gateStage,
  isBuildStage,
  isCycleStage,
  type DesignStep,
  type Stage,
} from "../contracts/stages.js";
export { GATE_NAMES, type GateName } from "../contracts/gates.js";

/** What a dispatched cycle proves: a valid RED, a valid GREEN, a refactor that stays green, a verified preview deploy. */
export type { CycleStep };

/**
 * The events, the snapshot and the next action are the contracts' too (src/contracts/track.ts,
 * where each type is inferred from its schema and its fields are documented).
 */
export {
  SNAPSHOT_SCHEMA_VERSION,
  type ApprovalRecord,
  type BuildUnit,
  type ChangedPath,
  type CreateTrackInput,
  type CycleEvidence,
  type CycleOutcome,
  type DeployEvidence,
  type FrozenTestFile,
  type GateRecord,
  type NextAction,
  type PushEvent,
  type PushedCommit,
  type TrackContext,
  type TrackEvent,
  type TrackSnapshot,
  type UnitEvidence,
} from "../contracts/track.js";

// ---------------------------------------------------------------------------------------------
// Effects and the result of a transition (data only; handlers execute the effects in order)
// ---------------------------------------------------------------------------------------------

/**
 * Run `.github/workflows/consort-cycle.yml` at the default branch for `commit`. The cycle must
 * report back with `dispatchId`; a report naming any other id is ignored.
 */
export interface DispatchCycleEffect {
  type: "dispatchCycle";
  dispatchId: string;
  step: CycleStep;
  commit: string;
  /** The build unit (`T3`, or an AC id such as `S1-AC2` with granularity `ac`); `release` for the release cycle. */
  unit: string;
  /** The tests in turn: RED must show each failing by an assertion, GREEN each passing. */
  tests: TestListEntry[];
  /** Tests already green, which must still pass. */
  greenTests: TestListEntry[];
  /** path → sha256 of every frozen file (design artifacts, test list, frozen test files). */
  frozen: Record<string, string>;
  /** The track's database branch, to fork the throwaway branch from. */
  databaseBranch: string;
}

/** Ask the configured agent to play `role` for the next action (emitted only when `agents.enabled`). */
export interface DispatchAgentEffect {
  type: "dispatchAgent";
  role: RoleName;
  nextAction: NextAction;
}

/** Create the track's database branch from its parent's (at track creation). */
interface ForkDatabaseEffect {
  type: "forkDatabase";
  branch: string;
  parent: string;
}

/** Delete the track's database branch (done or abandoned). */
interface DeleteDatabaseEffect {
  type: "deleteDatabase";
  branch: string;
}

/** Migrate the parent's database branch to the merged commit (snapshot kept until it succeeds); report with `promotion.reported`. */
interface PromoteDatabaseEffect {
  type: "promoteDatabase";
  dispatchId: string;
  branch: string;
  parent: string;
  commit: string;
}

/** Show the checks (as src/gates/checks.ts decides them from the snapshot) and the sticky comment on `commit`. */
interface UpdateChecksEffect {
  type: "updateChecks";
  /** The commit the checks belong to (the branch head, or the rejected commit the branch holds). */
  commit: string;
}

/** A PR timeline comment (Markdown), e.g. why a commit was rejected. */
interface CommentEffect {
  type: "comment";
  body: string;
}

export type Effect =
  | DispatchCycleEffect
  | DispatchAgentEffect
  | ForkDatabaseEffect
  | DeleteDatabaseEffect
  | PromoteDatabaseEffect
  | UpdateChecksEffect
  | CommentEffect;

/** What `transition` returns. With `rejection`, the event was refused: the stage did not advance. */
export interface TransitionResult {
  snapshot: TrackSnapshot;
  effects: Effect[];
  rejection?: { reasons: string[] };
}
