import { z } from "zod";
import { CYCLE_STEPS, TestCycleStep } from "./cycle-request.js";
import { ReleaseSchemaDiff } from "./deploy.js";
import { GATE_NAMES } from "./gates.js";
import { REVIEW_VERDICTS } from "./review.js";
import { RoleName } from "./roles.js";
import { DESIGN_STEPS, STAGES } from "./stages.js";
import { TestListEntry } from "./test-list.js";

/**
 * The version of the persisted snapshot format. `restoreSnapshot` converts version 1 (frozen test
 * entries holding their texts) and refuses any other.
 */
export const SNAPSHOT_SCHEMA_VERSION = 2 as const;

/**
 * zod schemas for what enters the machine from outside: events (parsed at the edge by handlers and
 * the CLI), persisted snapshots (restored from the state branch or a state file), and the next
 * action an agent receives. They are the one declaration of these shapes, and their types are
 * inferred from them below: the machine, the gates and the roles all read them from here.
 */

const sha = z.string().regex(/^[0-9a-f]{7,64}$/, "a git commit sha");
const at = z.iso.datetime({ offset: true });
const gate = z.enum(GATE_NAMES);
const stage = z.enum(STAGES);

/** How a cycle ended. `valid`: the step is proven. `invalid`: it is disproven. `error`: nothing could be decided (fail closed: nothing advances). */
export const CycleOutcomeSchema = z.enum(["valid", "invalid", "error"]);
/** What the machine dispatches and waits for: a cycle step, or the promotion after the merge. */
const dispatchStep = z.enum([...CYCLE_STEPS, "promote"]);

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/** One path a commit changed, as GitHub's compare API reports it. A rename also removes `previousPath`. */
const ChangedPathSchema = z.object({
  path: z.string().min(1),
  status: z.enum(["added", "modified", "removed", "renamed", "copied", "changed"]),
  previousPath: z.string().min(1).optional(),
});

/**
 * One commit of a push, oldest first.
 *
 * `files` must hold the text AFTER this commit of every changed path the machine reads: every path
 * under `.consort/` and every path matching the configured test or code globs (`pathsToRead(changes, config)`
 * from src/orchestrator lists them); `null` when the commit removed it. A frozen file whose text is
 * missing here fails closed (the commit is rejected with that reason).
 */
const PushedCommitSchema = z.object({
  sha,
  /** The GitHub login of the commit's author; `null` when the author e-mail maps to no account. */
  authorLogin: z.string().min(1).nullable(),
  /** The full commit message; the machine reads the `Consort-Role:` trailer from it. */
  message: z.string(),
  changes: z.array(ChangedPathSchema),
  files: z.record(z.string(), z.string().nullable()),
  /**
   * The text before the commit (at its first parent) of each runner configuration file it changed
   * (`runnerPathsToRead`), null where there was none: the freezing rule compares the runner's keys
   * before and after. `files` holds the text after the commit.
   */
  before: z.record(z.string(), z.string().nullable()).optional(),
  /** A merge of the default branch into the track ("Update branch"), already verified by the app: no role's step. */
  merge: z.literal(true).optional(),
});

/** Evidence of a build cycle, as the cycle runner summarised it (kept with the cycle record). */
const CycleEvidenceSchema = z.object({
  /** One line a person reads in the check run. */
  summary: z.string(),
  /** Per test in turn (and earlier tests that had to stay green): what the runner reported. */
  tests: z
    .array(
      z.object({
        id: z.string(),
        title: z.string(),
        /** behaviour-missing: a RED failing only because a declared module (or name) is not written yet. */
        result: z.enum(["passed", "assertion-failure", "behaviour-missing", "error", "skipped", "missing"]),
      }),
    )
    .optional(),
  /** Link to the Actions run. */
  runUrl: z.string().optional(),
  /** The throwaway database branch the tests ran on. */
  databaseBranch: z.string().optional(),
  /** Caveats a person should see, e.g. "database rebuilt from the seed on a hosted runner". */
  notes: z.array(z.string()).optional(),
  /** false when the repository's commands ran as the job's own user (see src/cycle/confine.ts). */
  confined: z.boolean().optional(),
});

/** Evidence of the release cycle: the preview deploy on the track's database branch and its verification. */
const DeployEvidenceSchema = z.object({
  summary: z.string(),
  previewUrl: z.string().optional(),
  databaseBranch: z.string(),
  /** Each verification the release cycle ran. */
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string().optional() })),
  runUrl: z.string().optional(),
  /** Caveats a person should see beside the verdict, e.g. that the release ran unconfined. */
  notes: z.array(z.string()).optional(),
  /** false when the repository's commands ran as the job's own user (see src/cycle/confine.ts). */
  confined: z.boolean().optional(),
  /** The schema diff the release job computed where its databases were (src/contracts/deploy.ts). */
  schema: ReleaseSchemaDiff.optional(),
});

/** Commits were pushed to the track's branch (GitHub `push`). Classified commit by commit, oldest first. */
const PushEventSchema = z.object({
  type: z.literal("push"),
  at,
  /** Head before the push; must be the track's last accepted head unless the push resets the branch to it. */
  before: sha,
  /** Head after the push. */
  after: sha,
  forced: z.boolean(),
  commits: z.array(PushedCommitSchema),
  /**
   * The GitHub login that pushed (the webhook's `sender`: GitHub's word, which no commit can forge,
   * unlike its author); absent when the push was found later (`consort reconcile`).
   */
  pusher: z.string().min(1).optional(),
  /** Why the push cannot be taken, found by verifying it against git (the parent chain, a merge, a commit too big to list). */
  problems: z.array(z.string()).optional(),
  /** Blob id at `after` of every path under `.consort/` and every test file: the frozen files are checked at the head. */
  headBlobs: z.record(z.string(), z.string()).optional(),
  /** The git trees of `before` and `after`: a branch whose tree is the last accepted commit's is back there. */
  trees: z.object({ before: sha, after: sha }).optional(),
  /** Migrations of the track that conflict with ones a merged-in default branch brought (same version, or out of order). */
  migrationConflicts: z.array(z.string()).optional(),
  /**
   * A force-push the app verified as a rebase onto the default branch's head `onto`: each accepted
   * commit of the track (`from`) and its replay (`to`), nothing else changed.
   */
  rebased: z
    .object({ onto: sha, commits: z.array(z.object({ from: sha, to: sha }).strict()) })
    .strict()
    .optional(),
});

/**
 * A PR review approved a gate (src/gates/approval.ts has already checked the reviewer: approver,
 * write access, not an author). `manifestHash` is the gate's manifest at the reviewed commit; the
 * machine accepts it only when it equals the pending one (`snapshot.context.gates[gate].pendingHash`).
 */
const GateApprovedEventSchema = z.object({
  type: z.literal("gate.approved"),
  at,
  gate,
  manifestHash: z.string().regex(/^[0-9a-f]{64}$/),
  approver: z.string().min(1),
  reviewId: z.number().int(),
  commit: sha,
});

/** An approval stopped counting (review dismissed, approver lost access). Withdrawal cascades down the lane. */
const GateWithdrawnEventSchema = z.object({
  type: z.literal("gate.withdrawn"),
  at,
  gate,
  reason: z.string().min(1),
  reviewId: z.number().int().optional(),
});

/** What every report of a dispatched workflow run carries. */
const reportedRun = {
  at,
  dispatchId: z.string().min(1),
  runId: z.number().int(),
  commit: sha,
  outcome: CycleOutcomeSchema,
  /** Why the outcome is what it is (every reason, for the check run and the agent). */
  reasons: z.array(z.string()),
};

/**
 * A dispatched red/green/refactor cycle reported (after the app verified provenance: a run it
 * dispatched, of the expected workflow on the default branch). Must name the pending dispatch.
 */
const CycleReportedEventSchema = z.object({
  type: z.literal("cycle.reported"),
  ...reportedRun,
  step: TestCycleStep,
  evidence: CycleEvidenceSchema,
});

/** The release cycle (preview deploy + verification) reported. Must name the pending dispatch. */
const DeployReportedEventSchema = z.object({
  type: z.literal("deploy.reported"),
  ...reportedRun,
  evidence: DeployEvidenceSchema,
});

/** Migrating the parent's database branch after the merge finished (the snapshot is kept until `valid`). */
const PromotionReportedEventSchema = z.object({
  type: z.literal("promotion.reported"),
  at,
  dispatchId: z.string().min(1),
  outcome: CycleOutcomeSchema,
  reasons: z.array(z.string()),
});

/**
 * A person reopens part of the design: `test-list` (from `blocked`, or while the test-list gate is
 * open) or `design` (reopens the given design step). Gates that depended on it are withdrawn; build
 * evidence for tests that stay unchanged in the re-approved list is kept.
 */
const RenegotiateEventSchema = z.object({
  type: z.literal("renegotiate"),
  at,
  by: z.string().min(1),
  scope: z.enum(["test-list", "design"]),
  /** For scope `design`: the step to reopen (default `spec`). */
  from: z.enum(DESIGN_STEPS).optional(),
  reason: z.string().min(1),
});

/** A person asks to try the current step again: re-dispatch a cycle that errored, or grant another round from `blocked`. */
const RetryEventSchema = z.object({
  type: z.literal("retry"),
  at,
  by: z.string().min(1),
  reason: z.string().optional(),
});

/** The PR was merged. Only after the promote gate is this the path to `promoting`. */
const MergedEventSchema = z.object({ type: z.literal("merged"), at, commit: sha, by: z.string().optional() });

/** The PR was closed without merging: the track is abandoned and its database branch deleted. */
const ClosedEventSchema = z.object({ type: z.literal("closed"), at, by: z.string().optional() });

/** A person abandons the track, from any stage. */
const AbandonEventSchema = z.object({
  type: z.literal("abandon"),
  at,
  by: z.string().min(1),
  reason: z.string().min(1),
});

/** Every `TrackEvent`, discriminated by `type`. */
export const TrackEventSchema = z.discriminatedUnion("type", [
  PushEventSchema,
  GateApprovedEventSchema,
  GateWithdrawnEventSchema,
  CycleReportedEventSchema,
  DeployReportedEventSchema,
  PromotionReportedEventSchema,
  RenegotiateEventSchema,
  RetryEventSchema,
  MergedEventSchema,
  ClosedEventSchema,
  AbandonEventSchema,
]);

// ---------------------------------------------------------------------------------------------
// Snapshot
// ---------------------------------------------------------------------------------------------

/** One approval that counted: who, which review, which commit, which manifest, when. */
export const ApprovalRecordSchema = z
  .object({
    approver: z.string(),
    reviewId: z.number(),
    commit: z.string(),
    manifestHash: z.string(),
    at: z.string(),
  })
  .strict();

/**
 * A gate's record. `pending`: open, waiting for an approval at `pendingHash`. `approved`: approved at
 * `approvedHash`. `withdrawn`: it was approved, then a frozen file changed or the approval was
 * withdrawn (or something it depended on was); it needs approving again. `closed`: not reached.
 */
export const GateRecordSchema = z
  .object({
    status: z.enum(["closed", "pending", "approved", "withdrawn"]),
    /** The manifest an approval must be on (set while pending or withdrawn). */
    pendingHash: z.string().nullable(),
    approvedHash: z.string().nullable(),
    /** path → sha256 of each file the gate froze (design and test-list gates). */
    files: z.record(z.string(), z.string()),
    /** GitHub logins that authored the commits under this gate: none of them may approve it. */
    authors: z.array(z.string()),
    approvals: z.array(ApprovalRecordSchema),
    /** Why it was last withdrawn. */
    withdrawnReason: z.string().nullable(),
  })
  .strict();

/** One build cycle per test, or per acceptance criterion. */
export const Granularity = z.enum(["test", "ac"]);

/** A build unit: one test (granularity `test`) or one acceptance criterion's tests (granularity `ac`). */
const BuildUnitSchema = z.object({ id: z.string(), tests: z.array(TestListEntry) }).strict();

/** When a cycle proved a step of a unit: which dispatch, on which commit. */
const stamp = z.object({ dispatchId: z.string(), commit: z.string(), at: z.string() }).strict().nullable();

/** What a unit has proven so far. Evidence is kept across re-approval of an unchanged test list. */
const UnitEvidenceSchema = z
  .object({
    /** The tests the evidence was for; evidence for a changed entry does not carry over. */
    tests: z.array(TestListEntry),
    red: stamp,
    green: stamp,
    review: z.object({ verdict: REVIEW_VERDICTS, commit: z.string(), at: z.string() }).strict().nullable(),
    refactor: stamp,
    /** True once review accepted (or refactor verified): the unit is done. */
    complete: z.boolean(),
  })
  .strict();

/**
 * A test file frozen when a RED including this test was verified, at that RED commit. Its text is
 * `frozenTexts[hash]`: every RED freezes every test file again, mostly unchanged, so each distinct
 * text is held once.
 */
const FrozenTestFileSchema = z
  .object({
    file: z.string(),
    hash: z.string(),
    /** The test whose verified RED froze this text. */
    test: z.string(),
    commit: z.string(),
  })
  .strict();

/**
 * A frozen text, or a prefix of another (`of`, its hash, holding the whole text): frozen test
 * files grow by appending, so most older texts are the first `length` characters of the latest.
 */
const FrozenTextSchema = z.union([z.string(), z.object({ of: z.string(), length: z.number().int().min(0) }).strict()]);

/** Snapshot version 1's entry, which held its text: read only to convert it (`restoreSnapshot`). */
const FrozenTestFileV1Schema = FrozenTestFileSchema.extend({ text: z.string() }).strict();

/** A cycle (or release/promotion) the machine dispatched and what came back. */
const CycleRecordSchema = z
  .object({
    dispatchId: z.string(),
    step: dispatchStep,
    unit: z.string(),
    commit: z.string(),
    dispatchedAt: z.string(),
    runId: z.number().nullable(),
    outcome: CycleOutcomeSchema.nullable(),
    reasons: z.array(z.string()),
    reportedAt: z.string().nullable(),
    evidence: z.union([DeployEvidenceSchema, CycleEvidenceSchema]).nullable(),
  })
  .strict();

/** Everything the machine knows about a track. JSON only: no Dates, no Maps, no functions. */
const TrackContextSchema = z
  .object({
    trackId: z.string().min(1),
    /** The git branch of the track. */
    branch: z.string().min(1),
    /** The branch the track's PR targets. */
    baseBranch: z.string().min(1),
    databaseBranch: z.string().min(1),
    parentDatabaseBranch: z.string().min(1),
    /** The last accepted commit: every cycle runs on it. */
    head: z.string().min(1),
    /** Set when the branch holds a commit the machine rejected: nothing advances until the branch is reset to `head`. */
    rejectedHead: z
      .object({
        sha: z.string(),
        reasons: z.array(z.string()),
        at: z.string(),
        /** The tree of the last accepted commit, when known: a later commit with this tree reverts the rejected ones. */
        acceptedTree: z.string().optional(),
      })
      .strict()
      .nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    /** Counter for dispatch ids (`<trackId>#<n>`): deterministic, no randomness. */
    sequence: z.number().int().min(0),
    /** Latest accepted text of each `.consort/**` file (design artifacts, test list, reviews). */
    artifacts: z.record(z.string(), z.string()),
    /** Latest accepted text of each test file the track changed (what a verified RED freezes). */
    testFiles: z.record(z.string(), z.string()),
    /** Settings in force, refreshed from the configuration on every transition. */
    settings: z.object({ repairBound: z.number().int().min(1), granularity: Granularity }).strict(),
    /** Every gate's record (a record keyed by an enum requires each gate and no other key). */
    gates: z.record(gate, GateRecordSchema),
    /** The build units from the test list as last approved (empty before the test-list gate). */
    units: z.array(BuildUnitSchema),
    /** Index into `units` of the unit in turn (`units.length` once every unit is complete). */
    unitIndex: z.number().int().min(0),
    evidence: z.record(z.string(), UnitEvidenceSchema),
    /** Failed verifications in the current step (RED, GREEN/repair, refactor), against `repairBound`. */
    attempts: z.number().int().min(0),
    /** Frozen test texts, per test id. The effective frozen text of a file is its latest entry. */
    frozenTests: z.record(z.string(), FrozenTestFileSchema),
    /**
     * The text of each frozen test entry, by its hash (`hashFrozenText`): each distinct text once,
     * and a text another one starts with (a test file before a RED appended to it) as that prefix.
     */
    frozenTexts: z.record(z.string(), FrozenTextSchema),
    /** The cycle the machine waits for, if any. */
    pendingDispatch: z
      .object({ dispatchId: z.string(), step: dispatchStep, commit: z.string(), unit: z.string() })
      .strict()
      .nullable(),
    cycles: z.array(CycleRecordSchema),
    /** Deploy evidence of the last valid release cycle (what the deploy gate approves). */
    deployEvidence: z
      .object({ dispatchId: z.string(), commit: z.string(), hash: z.string(), evidence: DeployEvidenceSchema })
      .strict()
      .nullable(),
    /** Why the track is blocked, and the stage a retry returns to. */
    blocked: z.object({ reason: z.string(), resume: stage }).strict().nullable(),
    mergedCommit: z.string().nullable(),
    ended: z.object({ reason: z.string(), by: z.string().nullable(), at: z.string() }).strict().nullable(),
    /** Last failure a person or agent should see (cycle reasons, validation problems), cleared on progress. */
    lastProblem: z.array(z.string()),
    /** The track's migrations that conflict with the default branch's, found when it was last merged in. */
    migrationConflicts: z.array(z.string()).optional(),
    /**
     * The merges of the default branch Consort verified and took ("Update branch"): each changes
     * nothing the default branch did not, so whoever made one wrote nothing under approval.
     */
    updateMerges: z.array(z.string()).optional(),
  })
  .strict();

/**
 * The persisted state of one track (stored by src/state inside `tracks/<id>.json`). Restore it with
 * `restoreSnapshot`, which refuses unknown versions and malformed content.
 */
export const TrackSnapshotSchema = z
  .object({
    schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
    stage,
    context: TrackContextSchema,
  })
  .strict()
  .superRefine(({ context }, ctx) => {
    // Fail closed: an entry whose text is missing cannot be compared with what a push changes.
    const texts = context.frozenTexts;
    for (const [key, entry] of Object.entries(context.frozenTests)) {
      if (Object.hasOwn(texts, entry.hash)) continue;
      ctx.addIssue({
        code: "custom",
        path: ["context", "frozenTests", key, "hash"],
        message: `the frozen text of ${entry.file} (frozen by ${entry.test}) is missing: no frozenTexts entry for hash ${entry.hash}`,
      });
    }
    for (const [hash, stored] of Object.entries(texts)) {
      if (typeof stored === "string") continue;
      const base = Object.hasOwn(texts, stored.of) ? texts[stored.of] : undefined;
      if (typeof base === "string" && stored.length <= base.length) continue;
      ctx.addIssue({
        code: "custom",
        path: ["context", "frozenTexts", hash],
        message: `the frozen text ${hash} is missing: it is the first ${stored.length} characters of ${stored.of}, which holds no text that long`,
      });
    }
  });

/**
 * A version-1 snapshot, in which each frozen test entry held its text: `restoreSnapshot` converts
 * it (`snapshotFromV1`), so a track in flight when Consort moved to version 2 carries on.
 */
export const TrackSnapshotV1Schema = z
  .object({
    schemaVersion: z.literal(1),
    stage,
    context: TrackContextSchema.omit({ frozenTests: true, frozenTexts: true })
      .extend({ frozenTests: z.record(z.string(), FrozenTestFileV1Schema) })
      .strict(),
  })
  .strict();

/** What `createTrack` needs, checked before a track exists: the branch pairing and where the track starts. */
export const CreateTrackInputSchema = TrackContextSchema.pick({
  trackId: true,
  branch: true,
  baseBranch: true,
  databaseBranch: true,
  parentDatabaseBranch: true,
})
  .extend({
    /** The commit the branch starts at (the first accepted head). */
    head: sha,
    at,
  })
  .strict();

// ---------------------------------------------------------------------------------------------
// Next action
// ---------------------------------------------------------------------------------------------

/**
 * What happens next on a track, for an agent (as JSON with its role prompt, and as the output of
 * the MCP tools) or a person (as text).
 */
export const NextActionSchema = z.object({
  trackId: z.string(),
  stage,
  actor: z
    .enum(["agent", "person", "orchestrator", "nobody"])
    .describe(
      "Who acts now: an agent playing `role`, a person (a gate), the orchestrator (a cycle runs), or nobody (ended).",
    ),
  role: RoleName.nullable(),
  task: z.string().describe("The task in plain words."),
  allowedPaths: z
    .array(z.string())
    .describe("Globs the role may touch in this step; a commit touching anything else is rejected."),
  /** Frozen files inside the allowed globs, with what may be done to them. */
  frozenPaths: z.array(z.object({ path: z.string(), rule: z.enum(["append-only", "unchanged"]) })),
  /** The build unit in turn (null outside the build lane). */
  unit: z.string().nullable(),
  /** The tests of the unit in turn (empty outside the build lane). */
  testsInTurn: z.array(TestListEntry),
  checks: z.array(z.string()).describe("What will be checked when the step is pushed."),
  /** When a person must approve a gate: which, and the manifest hash the review must be on. */
  gate: z.object({ name: gate, manifestHash: z.string() }).nullable(),
  head: z.string().describe("The track's last accepted commit: work starts from it."),
  trailer: z.string().nullable().describe("The commit trailer the role must add, e.g. `Consort-Role: navigator`."),
});

// ---------------------------------------------------------------------------------------------
// The types, each inferred from its schema above, where its fields are documented
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

/** The build unit in turn: `null` before the test list is approved and once every unit is complete. */
export function currentUnit(context: TrackContext): BuildUnit | null {
  return context.units[context.unitIndex] ?? null;
}
