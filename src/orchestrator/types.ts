import type { RoleName } from "../roles/roles.js";
import type { TestListEntry } from "../artifacts/test-list.js";

/**
 * The public types of the track machine (design §2–§4). Everything here is plain JSON data: a
 * handler parses a webhook into a `TrackEvent`, calls `transition(snapshot, event, config)`, stores
 * the returned `TrackSnapshot` and executes the returned `Effect`s. Nothing in the machine does I/O
 * or reads the clock: time arrives inside events (`at`, ISO 8601).
 */

/** The version of the persisted snapshot format. `restoreSnapshot` refuses any other. */
export const SNAPSHOT_SCHEMA_VERSION = 1 as const;

/**
 * Where a track stands. Design lane, gates, build lane (one unit at a time), release, end states.
 * `ux` is visited only when the spec marks a story as user-facing.
 */
export const STAGES = [
  "stories",
  "spec",
  "architecture",
  "db-design",
  "ux",
  "design-gate",
  "test-list",
  "test-list-gate",
  "red",
  "red-verify",
  "green",
  "green-verify",
  "repair",
  "review",
  "refactor",
  "refactor-verify",
  "blocked",
  "deploying",
  "deploy-gate",
  "promote-gate",
  "merging",
  "promoting",
  "done",
  "abandoned",
] as const;
export type Stage = (typeof STAGES)[number];

/** The design-lane steps a person may reopen with `renegotiate` (scope `design`). */
export const DESIGN_STEPS = ["stories", "spec", "architecture", "db-design", "ux"] as const;
export type DesignStep = (typeof DESIGN_STEPS)[number];

/** The four gates a person approves with a PR review. */
export const GATE_NAMES = ["design", "test-list", "deploy", "promote"] as const;
export type GateName = (typeof GATE_NAMES)[number];

/** The check runs Consort owns (contract names, design §4). `consort/schema` is written by src/report, not derived here. */
export const CHECK_NAMES = [
  "consort/design",
  "consort/test-list",
  "consort/build",
  "consort/deploy",
  "consort/promote",
  "consort/discipline",
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** What a dispatched cycle proves: a valid RED, a valid GREEN, a refactor that stays green, a verified preview deploy. */
export type CycleStep = "red" | "green" | "refactor" | "release";

/** How a cycle ended. `valid`: the step is proven. `invalid`: it is disproven. `error`: nothing could be decided (fail closed: nothing advances). */
export type CycleOutcome = "valid" | "invalid" | "error";

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/** One path a commit changed, as GitHub's compare API reports it. A rename also removes `previousPath`. */
export interface ChangedPath {
  path: string;
  status: "added" | "modified" | "removed" | "renamed" | "copied" | "changed";
  previousPath?: string;
}

/**
 * One commit of a push, oldest first.
 *
 * `files` must hold the text AFTER this commit of every changed path the machine reads: every path
 * under `.consort/` and every path matching the configured test globs (`pathsToRead(changes, config)`
 * from src/orchestrator lists them); `null` when the commit removed it. A frozen file whose text is
 * missing here fails closed (the commit is rejected with that reason).
 */
export interface PushedCommit {
  sha: string;
  /** The GitHub login of the commit's author; `null` when the author e-mail maps to no account. */
  authorLogin: string | null;
  /** The full commit message; the machine reads the `Consort-Role:` trailer from it. */
  message: string;
  changes: ChangedPath[];
  files: Record<string, string | null>;
}

/** Evidence of a build cycle, as the cycle runner summarised it (kept with the cycle record). */
export interface CycleEvidence {
  /** One line a person reads in the check run. */
  summary: string;
  /** Per test in turn (and earlier tests that had to stay green): what the runner reported. */
  tests?: Array<{
    id: string;
    title: string;
    result: "passed" | "assertion-failure" | "error" | "skipped" | "missing";
  }>;
  /** Link to the Actions run. */
  runUrl?: string;
  /** The throwaway database branch the tests ran on. */
  databaseBranch?: string;
  /** Caveats a person should see, e.g. "database rebuilt from the seed on a hosted runner". */
  notes?: string[];
}

/** Evidence of the release cycle: the preview deploy on the track's database branch and its verification. */
export interface DeployEvidence {
  summary: string;
  previewUrl?: string;
  databaseBranch: string;
  /** Each verification the release cycle ran. */
  checks: Array<{ name: string; ok: boolean; detail?: string }>;
  runUrl?: string;
}

/** Commits were pushed to the track's branch (GitHub `push`). Classified commit by commit, oldest first. */
export interface PushEvent {
  type: "push";
  at: string;
  /** Head before the push; must be the track's last accepted head unless the push resets the branch to it. */
  before: string;
  /** Head after the push. */
  after: string;
  forced: boolean;
  commits: PushedCommit[];
}

/**
 * A PR review approved a gate (src/gates/approval.ts has already checked the reviewer: approver,
 * write access, not an author). `manifestHash` is the gate's manifest at the reviewed commit; the
 * machine accepts it only when it equals the pending one (`snapshot.context.gates[gate].pendingHash`).
 */
export interface GateApprovedEvent {
  type: "gate.approved";
  at: string;
  gate: GateName;
  manifestHash: string;
  approver: string;
  reviewId: number;
  commit: string;
}

/** An approval stopped counting (review dismissed, approver lost access). Withdrawal cascades down the lane. */
export interface GateWithdrawnEvent {
  type: "gate.withdrawn";
  at: string;
  gate: GateName;
  reason: string;
  reviewId?: number;
}

/**
 * A dispatched red/green/refactor cycle reported (after the app verified provenance: a run it
 * dispatched, of the expected workflow on the default branch). Must name the pending dispatch.
 */
export interface CycleReportedEvent {
  type: "cycle.reported";
  at: string;
  dispatchId: string;
  runId: number;
  step: "red" | "green" | "refactor";
  commit: string;
  outcome: CycleOutcome;
  /** Why the outcome is what it is (every reason, for the check run and the agent). */
  reasons: string[];
  evidence: CycleEvidence;
}

/** The release cycle (preview deploy + verification) reported. Must name the pending dispatch. */
export interface DeployReportedEvent {
  type: "deploy.reported";
  at: string;
  dispatchId: string;
  runId: number;
  commit: string;
  outcome: CycleOutcome;
  reasons: string[];
  evidence: DeployEvidence;
}

/** Migrating the parent's database branch after the merge finished (the snapshot is kept until `valid`). */
export interface PromotionReportedEvent {
  type: "promotion.reported";
  at: string;
  dispatchId: string;
  outcome: CycleOutcome;
  reasons: string[];
}

/**
 * A person reopens part of the design: `test-list` (from `blocked`, or while the test-list gate is
 * open) or `design` (reopens the given design step). Gates that depended on it are withdrawn; build
 * evidence for tests that stay unchanged in the re-approved list is kept.
 */
export interface RenegotiateEvent {
  type: "renegotiate";
  at: string;
  by: string;
  scope: "test-list" | "design";
  /** For scope `design`: the step to reopen (default `spec`). */
  from?: DesignStep;
  reason: string;
}

/** A person asks to try the current step again: re-dispatch a cycle that errored, or grant another round from `blocked`. */
export interface RetryEvent {
  type: "retry";
  at: string;
  by: string;
  reason?: string;
}

/** The PR was merged. Only after the promote gate is this the path to `promoting`. */
export interface MergedEvent {
  type: "merged";
  at: string;
  commit: string;
  by?: string;
}

/** The PR was closed without merging: the track is abandoned and its database branch deleted. */
export interface ClosedEvent {
  type: "closed";
  at: string;
  by?: string;
}

/** A person abandons the track, from any stage. */
export interface AbandonEvent {
  type: "abandon";
  at: string;
  by: string;
  reason: string;
}

/** Everything that can happen to a track. Parse webhooks into these at the edge (see `TrackEventSchema`). */
export type TrackEvent =
  | PushEvent
  | GateApprovedEvent
  | GateWithdrawnEvent
  | CycleReportedEvent
  | DeployReportedEvent
  | PromotionReportedEvent
  | RenegotiateEvent
  | RetryEvent
  | MergedEvent
  | ClosedEvent
  | AbandonEvent;

// ---------------------------------------------------------------------------------------------
// Effects (data only; handlers execute them in order)
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
export interface ForkDatabaseEffect {
  type: "forkDatabase";
  branch: string;
  parent: string;
}

/** Delete the track's database branch (done or abandoned). */
export interface DeleteDatabaseEffect {
  type: "deleteDatabase";
  branch: string;
}

/** Migrate the parent's database branch to the merged commit (snapshot kept until it succeeds); report with `promotion.reported`. */
export interface PromoteDatabaseEffect {
  type: "promoteDatabase";
  dispatchId: string;
  branch: string;
  parent: string;
  commit: string;
}

/** The state each Consort check should show now (the writer skips checks whose content did not change). */
export interface CheckState {
  name: CheckName;
  /** `pending` is an in-progress check: it never satisfies branch protection. There is no neutral or skipped. */
  status: "pending" | "success" | "failure";
  title: string;
  /** Every reason, for the check run's summary. */
  details: string[];
}

export interface UpdateChecksEffect {
  type: "updateChecks";
  /** The commit the checks belong to (the branch head). */
  commit: string;
  checks: CheckState[];
}

/** A PR timeline comment (Markdown), e.g. why a commit was rejected. */
export interface CommentEffect {
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

// ---------------------------------------------------------------------------------------------
// Next action
// ---------------------------------------------------------------------------------------------

/**
 * What happens next on a track, for an agent (as JSON with its role prompt) or a person (as text).
 * `actor` says who: an agent playing `role`, a person (a gate, a decision), the orchestrator
 * (a cycle is running), or nobody (the track has ended).
 */
export interface NextAction {
  trackId: string;
  stage: Stage;
  actor: "agent" | "person" | "orchestrator" | "nobody";
  role: RoleName | null;
  /** The task in plain words. */
  task: string;
  /** Globs the role may touch in this step; everything else is rejected. */
  allowedPaths: string[];
  /** Frozen files inside the allowed globs, with what may be done to them. */
  frozenPaths: Array<{ path: string; rule: "append-only" | "unchanged" }>;
  /** The build unit in turn and its tests (empty outside the build lane). */
  unit: string | null;
  testsInTurn: TestListEntry[];
  /** What will be checked when the step is pushed. */
  checks: string[];
  /** When a person must approve a gate: which, and the manifest hash the review must be on. */
  gate: { name: GateName; manifestHash: string } | null;
  /** The commit the action starts from (the track's last accepted head). */
  head: string;
  /** Commit trailer the role must add, e.g. `Consort-Role: navigator` (null when no commit is expected). */
  trailer: string | null;
}

// ---------------------------------------------------------------------------------------------
// Snapshot
// ---------------------------------------------------------------------------------------------

/** One approval that counted: who, which review, which commit, which manifest, when. */
export interface ApprovalRecord {
  approver: string;
  reviewId: number;
  commit: string;
  manifestHash: string;
  at: string;
}

/**
 * A gate's record. `pending`: open, waiting for an approval at `pendingHash`. `approved`: approved at
 * `approvedHash`. `withdrawn`: it was approved, then a frozen file changed or the approval was
 * withdrawn (or something it depended on was); it needs approving again. `closed`: not reached.
 */
export interface GateRecord {
  status: "closed" | "pending" | "approved" | "withdrawn";
  /** The manifest an approval must be on (set while pending or withdrawn). */
  pendingHash: string | null;
  approvedHash: string | null;
  /** path → sha256 of each file the gate froze (design and test-list gates). */
  files: Record<string, string>;
  /** GitHub logins that authored the commits under this gate: none of them may approve it. */
  authors: string[];
  approvals: ApprovalRecord[];
  /** Why it was last withdrawn. */
  withdrawnReason: string | null;
}

/** A build unit: one test (granularity `test`) or one acceptance criterion's tests (granularity `ac`). */
export interface BuildUnit {
  id: string;
  tests: TestListEntry[];
}

/** What a unit has proven so far. Evidence is kept across re-approval of an unchanged test list. */
export interface UnitEvidence {
  /** The tests the evidence was for; evidence for a changed entry does not carry over. */
  tests: TestListEntry[];
  red: { dispatchId: string; commit: string; at: string } | null;
  green: { dispatchId: string; commit: string; at: string } | null;
  review: { verdict: "accept" | "refactor"; commit: string; at: string } | null;
  refactor: { dispatchId: string; commit: string; at: string } | null;
  /** True once review accepted (or refactor verified): the unit is done. */
  complete: boolean;
}

/** A test file frozen when a RED including this test was verified: its text at that RED commit. */
export interface FrozenTestFile {
  file: string;
  text: string;
  hash: string;
  /** The test whose verified RED froze this text. */
  test: string;
  commit: string;
}

/** A cycle (or release/promotion) the machine dispatched and what came back. */
export interface CycleRecord {
  dispatchId: string;
  step: CycleStep | "promote";
  unit: string;
  commit: string;
  dispatchedAt: string;
  runId: number | null;
  outcome: CycleOutcome | null;
  reasons: string[];
  reportedAt: string | null;
  evidence: CycleEvidence | DeployEvidence | null;
}

/** Everything the machine knows about a track. JSON only: no Dates, no Maps, no functions. */
export interface TrackContext {
  trackId: string;
  /** The git branch of the track and the branch its PR targets. */
  branch: string;
  baseBranch: string;
  databaseBranch: string;
  parentDatabaseBranch: string;
  /** The last accepted commit: every cycle runs on it. */
  head: string;
  /** Set when the branch holds a commit the machine rejected: nothing advances until the branch is reset to `head`. */
  rejectedHead: { sha: string; reasons: string[]; at: string } | null;
  createdAt: string;
  updatedAt: string;
  /** Counter for dispatch ids (`<trackId>#<n>`): deterministic, no randomness. */
  sequence: number;
  /** Latest accepted text of each `.consort/**` file (design artifacts, test list, reviews). */
  artifacts: Record<string, string>;
  /** Latest accepted text of each test file the track changed (what a verified RED freezes). */
  testFiles: Record<string, string>;
  /** Settings in force, refreshed from the configuration on every transition. */
  settings: { repairBound: number; granularity: "test" | "ac" };
  gates: Record<GateName, GateRecord>;
  /** The build units from the test list as last approved (empty before the test-list gate). */
  units: BuildUnit[];
  /** Index into `units` of the unit in turn (`units.length` once every unit is complete). */
  unitIndex: number;
  evidence: Record<string, UnitEvidence>;
  /** Failed verifications in the current step (RED, GREEN/repair, refactor), against `repairBound`. */
  attempts: number;
  /** Frozen test texts, per test id. The effective frozen text of a file is its latest entry. */
  frozenTests: Record<string, FrozenTestFile>;
  /** The cycle the machine waits for, if any. */
  pendingDispatch: { dispatchId: string; step: CycleStep | "promote"; commit: string; unit: string } | null;
  cycles: CycleRecord[];
  /** Deploy evidence of the last valid release cycle (what the deploy gate approves). */
  deployEvidence: { dispatchId: string; commit: string; hash: string; evidence: DeployEvidence } | null;
  /** Why the track is blocked, and the stage a retry returns to. */
  blocked: { reason: string; resume: Stage } | null;
  mergedCommit: string | null;
  ended: { reason: string; by: string | null; at: string } | null;
  /** Last failure a person or agent should see (cycle reasons, validation problems), cleared on progress. */
  lastProblem: string[];
}

/**
 * The persisted state of one track (stored by src/state inside `tracks/<id>.json`). Restore it with
 * `restoreSnapshot`, which refuses unknown versions and malformed content.
 */
export interface TrackSnapshot {
  schemaVersion: typeof SNAPSHOT_SCHEMA_VERSION;
  stage: Stage;
  context: TrackContext;
}

/** What `transition` returns. With `rejection`, the event was refused: the stage did not advance. */
export interface TransitionResult {
  snapshot: TrackSnapshot;
  effects: Effect[];
  rejection?: { reasons: string[] };
}

/** What `createTrack` needs: the branch pairing and where the track starts. */
export interface CreateTrackInput {
  trackId: string;
  branch: string;
  baseBranch: string;
  /** The commit the branch starts at (the first accepted head). */
  head: string;
  databaseBranch: string;
  parentDatabaseBranch: string;
  at: string;
}
