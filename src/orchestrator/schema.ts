import { z } from "zod";
import { TestListEntry } from "../artifacts/test-list.js";
import { DESIGN_STEPS, GATE_NAMES, SNAPSHOT_SCHEMA_VERSION, STAGES } from "./types.js";

/**
 * zod schemas for what enters the machine from outside: events (parsed at the edge by handlers and
 * the CLI) and persisted snapshots (restored from the state branch or a state file).
 */

const sha = z.string().regex(/^[0-9a-f]{7,64}$/, "a git commit sha");
const at = z.iso.datetime({ offset: true });
const outcome = z.enum(["valid", "invalid", "error"]);

export const ChangedPathSchema = z.object({
  path: z.string().min(1),
  status: z.enum(["added", "modified", "removed", "renamed", "copied", "changed"]),
  previousPath: z.string().min(1).optional(),
});

export const PushedCommitSchema = z.object({
  sha,
  authorLogin: z.string().min(1).nullable(),
  message: z.string(),
  changes: z.array(ChangedPathSchema),
  files: z.record(z.string(), z.string().nullable()),
});

const CycleEvidenceSchema = z.object({
  summary: z.string(),
  tests: z
    .array(
      z.object({
        id: z.string(),
        title: z.string(),
        result: z.enum(["passed", "assertion-failure", "error", "skipped", "missing"]),
      }),
    )
    .optional(),
  runUrl: z.string().optional(),
  databaseBranch: z.string().optional(),
  notes: z.array(z.string()).optional(),
});

const DeployEvidenceSchema = z.object({
  summary: z.string(),
  previewUrl: z.string().optional(),
  databaseBranch: z.string(),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string().optional() })),
  runUrl: z.string().optional(),
});

const gate = z.enum(GATE_NAMES);

/** Every `TrackEvent`, discriminated by `type`. */
export const TrackEventSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("push"),
    at,
    before: sha,
    after: sha,
    forced: z.boolean(),
    commits: z.array(PushedCommitSchema),
  }),
  z.object({
    type: z.literal("gate.approved"),
    at,
    gate,
    manifestHash: z.string().regex(/^[0-9a-f]{64}$/),
    approver: z.string().min(1),
    reviewId: z.number().int(),
    commit: sha,
  }),
  z.object({
    type: z.literal("gate.withdrawn"),
    at,
    gate,
    reason: z.string().min(1),
    reviewId: z.number().int().optional(),
  }),
  z.object({
    type: z.literal("cycle.reported"),
    at,
    dispatchId: z.string().min(1),
    runId: z.number().int(),
    step: z.enum(["red", "green", "refactor"]),
    commit: sha,
    outcome,
    reasons: z.array(z.string()),
    evidence: CycleEvidenceSchema,
  }),
  z.object({
    type: z.literal("deploy.reported"),
    at,
    dispatchId: z.string().min(1),
    runId: z.number().int(),
    commit: sha,
    outcome,
    reasons: z.array(z.string()),
    evidence: DeployEvidenceSchema,
  }),
  z.object({
    type: z.literal("promotion.reported"),
    at,
    dispatchId: z.string().min(1),
    outcome,
    reasons: z.array(z.string()),
  }),
  z.object({
    type: z.literal("renegotiate"),
    at,
    by: z.string().min(1),
    scope: z.enum(["test-list", "design"]),
    from: z.enum(DESIGN_STEPS).optional(),
    reason: z.string().min(1),
  }),
  z.object({ type: z.literal("retry"), at, by: z.string().min(1), reason: z.string().optional() }),
  z.object({ type: z.literal("merged"), at, commit: sha, by: z.string().optional() }),
  z.object({ type: z.literal("closed"), at, by: z.string().optional() }),
  z.object({ type: z.literal("abandon"), at, by: z.string().min(1), reason: z.string().min(1) }),
]);

const GateRecordSchema = z
  .object({
    status: z.enum(["closed", "pending", "approved", "withdrawn"]),
    pendingHash: z.string().nullable(),
    approvedHash: z.string().nullable(),
    files: z.record(z.string(), z.string()),
    authors: z.array(z.string()),
    approvals: z.array(
      z
        .object({
          approver: z.string(),
          reviewId: z.number(),
          commit: z.string(),
          manifestHash: z.string(),
          at: z.string(),
        })
        .strict(),
    ),
    withdrawnReason: z.string().nullable(),
  })
  .strict();

const stamp = z.object({ dispatchId: z.string(), commit: z.string(), at: z.string() }).strict().nullable();

const TrackContextSchema = z
  .object({
    trackId: z.string().min(1),
    branch: z.string().min(1),
    baseBranch: z.string().min(1),
    databaseBranch: z.string().min(1),
    parentDatabaseBranch: z.string().min(1),
    head: z.string().min(1),
    rejectedHead: z
      .object({ sha: z.string(), reasons: z.array(z.string()), at: z.string() })
      .strict()
      .nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    sequence: z.number().int().min(0),
    artifacts: z.record(z.string(), z.string()),
    testFiles: z.record(z.string(), z.string()),
    settings: z.object({ repairBound: z.number().int().min(1), granularity: z.enum(["test", "ac"]) }).strict(),
    gates: z
      .object({
        design: GateRecordSchema,
        "test-list": GateRecordSchema,
        deploy: GateRecordSchema,
        promote: GateRecordSchema,
      })
      .strict(),
    units: z.array(z.object({ id: z.string(), tests: z.array(TestListEntry) }).strict()),
    unitIndex: z.number().int().min(0),
    evidence: z.record(
      z.string(),
      z
        .object({
          tests: z.array(TestListEntry),
          red: stamp,
          green: stamp,
          review: z
            .object({ verdict: z.enum(["accept", "refactor"]), commit: z.string(), at: z.string() })
            .strict()
            .nullable(),
          refactor: stamp,
          complete: z.boolean(),
        })
        .strict(),
    ),
    attempts: z.number().int().min(0),
    frozenTests: z.record(
      z.string(),
      z.object({ file: z.string(), text: z.string(), hash: z.string(), test: z.string(), commit: z.string() }).strict(),
    ),
    pendingDispatch: z
      .object({
        dispatchId: z.string(),
        step: z.enum(["red", "green", "refactor", "release", "promote"]),
        commit: z.string(),
        unit: z.string(),
      })
      .strict()
      .nullable(),
    cycles: z.array(
      z
        .object({
          dispatchId: z.string(),
          step: z.enum(["red", "green", "refactor", "release", "promote"]),
          unit: z.string(),
          commit: z.string(),
          dispatchedAt: z.string(),
          runId: z.number().nullable(),
          outcome: outcome.nullable(),
          reasons: z.array(z.string()),
          reportedAt: z.string().nullable(),
          evidence: z.union([DeployEvidenceSchema, CycleEvidenceSchema]).nullable(),
        })
        .strict(),
    ),
    deployEvidence: z
      .object({ dispatchId: z.string(), commit: z.string(), hash: z.string(), evidence: DeployEvidenceSchema })
      .strict()
      .nullable(),
    blocked: z
      .object({ reason: z.string(), resume: z.enum(STAGES) })
      .strict()
      .nullable(),
    mergedCommit: z.string().nullable(),
    ended: z.object({ reason: z.string(), by: z.string().nullable(), at: z.string() }).strict().nullable(),
    lastProblem: z.array(z.string()),
  })
  .strict();

export const TrackSnapshotSchema = z
  .object({
    schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
    stage: z.enum(STAGES),
    context: TrackContextSchema,
  })
  .strict();

/** What `createTrack` needs, checked before a track exists. */
export const CreateTrackInputSchema = z
  .object({
    trackId: z.string().min(1),
    branch: z.string().min(1),
    baseBranch: z.string().min(1),
    head: sha,
    databaseBranch: z.string().min(1),
    parentDatabaseBranch: z.string().min(1),
    at,
  })
  .strict();
