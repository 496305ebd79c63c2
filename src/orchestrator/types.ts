import type { z } from "zod";
import type { TestListEntry } from "../artifacts/test-list.js";
import type { CycleStep } from "../contracts/cycle-request.js";
import type { RoleName } from "../contracts/roles.js";
import type {
  ApprovalRecordSchema,
  BuildUnitSchema,
  ChangedPathSchema,
  CreateTrackInputSchema,
  CycleEvidenceSchema,
  CycleOutcomeSchema,
  DeployEvidenceSchema,
  FrozenTestFileSchema,
  GateRecordSchema,
  NextActionSchema,
  PushedCommitSchema,
  PushEventSchema,
  TrackContextSchema,
  TrackEventSchema,
  TrackSnapshotSchema,
  UnitEvidenceSchema,
} from "./schema.js";

/**
 * The public types of the track machine (docs/ARCHITECTURE.md, Tracks, artifacts and roles; The machine; Gates). Everything here is plain JSON data: a
 * handler parses a webhook into a `TrackEvent`, calls `transition(snapshot, event, config)`, stores
 * the returned `TrackSnapshot` and executes the returned `Effect`s. Nothing in the machine does I/O
 * or reads the clock: time arrives inside events (`at`, ISO 8601).
 */

export { SNAPSHOT_SCHEMA_VERSION } from "./schema.js";

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

// ---------------------------------------------------------------------------------------------
// Events, the snapshot, the next action: each type is inferred from its schema in ./schema.ts,
// where its fields are documented (the edge parses events with them, `restoreSnapshot` the snapshot)
// ---------------------------------------------------------------------------------------------

/** How a cycle ended. `valid`: the step is proven. `invalid`: it is disproven. `error`: nothing could be decided (fail closed: nothing advances). */
export type CycleOutcome = z.infer<typeof CycleOutcomeSchema>;

export type ChangedPath = z.infer<typeof ChangedPathSchema>;
export type PushedCommit = z.infer<typeof PushedCommitSchema>;
export type CycleEvidence = z.infer<typeof CycleEvidenceSchema>;
export type DeployEvidence = z.infer<typeof DeployEvidenceSchema>;
export type PushEvent = z.infer<typeof PushEventSchema>;

/** Everything that can happen to a track. Parse webhooks into these at the edge (see `TrackEventSchema`). */
export type TrackEvent = z.infer<typeof TrackEventSchema>;

export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;
export type GateRecord = z.infer<typeof GateRecordSchema>;
export type BuildUnit = z.infer<typeof BuildUnitSchema>;
export type UnitEvidence = z.infer<typeof UnitEvidenceSchema>;
export type FrozenTestFile = z.infer<typeof FrozenTestFileSchema>;
export type TrackContext = z.infer<typeof TrackContextSchema>;
export type TrackSnapshot = z.infer<typeof TrackSnapshotSchema>;

/** What `createTrack` needs: the branch pairing and where the track starts. */
export type CreateTrackInput = z.infer<typeof CreateTrackInputSchema>;

/**
 * What happens next on a track, for an agent (as JSON with its role prompt) or a person (as text).
 * `actor` says who: an agent playing `role`, a person (a gate, a decision), the orchestrator
 * (a cycle is running), or nobody (the track has ended).
 */
export type NextAction = z.infer<typeof NextActionSchema>;

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
