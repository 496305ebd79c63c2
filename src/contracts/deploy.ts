import { z } from "zod";
import { RepoPath } from "./ids.js";
import { CommandRecord, ConfinementRecord, CycleVerdict, TestCount } from "./cycle-result.js";
import {
  answering,
  BranchId,
  CommitSha,
  CycleTest,
  FrozenTestFile,
  TestIdRun,
  TestListRef,
  dispatchedRequest,
} from "./cycle-request.js";

/** What the deploy and promote jobs take and what they leave as evidence (docs/ARCHITECTURE.md, The machine, deploy/promote). */

export const DeployRequest = z
  .object({
    ...dispatchedRequest,
    commit: CommitSha,
    /** Where the track forked from (merge base): migrations changed since then are the release's. */
    parentCommit: CommitSha.optional(),
    /** Without parentCommit: the trunk whose merge base with the commit is where the track forked. */
    base: z
      .object({ branch: z.string().trim().min(1).max(255) })
      .strict()
      .optional(),
    database: z
      .object({
        /** The track's database branch: the preview runs on it. */
        branch: BranchId,
        /** The parent's database branch: with no deploy command, migrations are replayed on a fork of it. */
        parent: BranchId,
      })
      .strict(),
    /** The whole test list, for the replay: every test must pass. Written in full by `consort` off a job. */
    tests: z.array(CycleTest).default([]),
    /** What the app dispatches instead of `tests`: the tests by id in the approved list, read from git at `commit`. */
    testList: TestListRef.extend({ tests: z.array(TestIdRun).default([]) })
      .strict()
      .optional(),
    frozenTestFiles: z.array(FrozenTestFile).default([]),
    ttlSeconds: z.number().int().min(60).max(86_400).default(3600),
  })
  .strict();
export type DeployRequest = z.infer<typeof DeployRequest>;

/**
 * The schema diff the release job computed where its databases are (src/deploy/rebuild.ts), as the
 * deploy evidence carries it and the track's snapshot keeps it (src/contracts/track.ts).
 */
export const ReleaseSchemaDiff = z.object({
  computedOn: z.enum(["shared", "rebuilt"]),
  branch: z.string(),
  parent: z.string(),
  diffMarkdown: z.string(),
  breaking: z.array(z.string()),
  note: z.string(),
});
export type ReleaseSchemaDiff = z.infer<typeof ReleaseSchemaDiff>;

export const DeployEvidence = z
  .object({
    ...answering(DeployRequest),
    commit: CommitSha,
    /** preview: the configured deploy and verify commands; replay: migrations replayed on a fork of the parent and the whole suite run. */
    mode: z.enum(["preview", "replay"]),
    database: z
      .object({
        provider: z.string(),
        /** The branch the release ran against (the track's for a preview, a throwaway fork of the parent for a replay). */
        branch: z.string(),
        parent: z.string(),
      })
      .strict(),
    /** Migration files (by the configured globs) this release brings, relative to the parent commit when known. */
    migrationsApplied: z.array(RepoPath),
    deploy: CommandRecord.optional(),
    verify: z
      .object({
        outcome: z.enum(["passed", "failed", "not-run"]),
        command: z.string().nullable(),
        record: CommandRecord.optional(),
        /** For a replay: the release cycle's verdict and counts. */
        cycle: z
          .object({
            verdict: CycleVerdict,
            total: TestCount,
            passed: TestCount,
            reasons: z.array(z.string()),
          })
          .strict()
          .optional(),
      })
      .strict(),
    previewUrl: z.string().url().nullable(),
    /**
     * The track's schema against its parent's, computed by this job where the databases are:
     * `shared` on the app's own branches, `rebuilt` on databases the job rebuilt because it cannot
     * see the app's (src/contracts/placement.ts). Absent when the release did not get that far.
     */
    schema: ReleaseSchemaDiff.strict().optional(),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
    /** How the deploy, verify and test commands ran; absent from actions older than this record (read as unconfined). */
    confinement: ConfinementRecord.optional(),
    verdict: CycleVerdict,
    reasons: z.array(z.string()),
    warnings: z.array(z.string()),
  })
  .strict();
export type DeployEvidence = z.infer<typeof DeployEvidence>;

export const DEPLOY_EVIDENCE_FILE = "deploy-evidence.json";

export const PromoteRequest = z
  .object({
    ...dispatchedRequest,
    /** The merged commit on the parent branch whose migrations are promoted. */
    commit: CommitSha,
    database: z.object({ parent: BranchId, track: BranchId.optional() }).strict(),
  })
  .strict();
export type PromoteRequest = z.infer<typeof PromoteRequest>;

export const PromoteResult = z
  .object({
    ...answering(PromoteRequest),
    commit: CommitSha,
    database: z
      .object({
        provider: z.string(),
        parent: z.string(),
        /** The pre-migration snapshot: deleted on success, kept (for a restore) on failure. */
        snapshot: z.string().nullable(),
        snapshotKept: z.boolean(),
        /** False when the job has no persistent parent to migrate (jobs apart from the app's branches): the merge is the promotion. */
        migrated: z.boolean().default(true),
      })
      .strict(),
    migrate: CommandRecord.optional(),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
    /** How the migrate command ran; absent from actions older than this record (read as unconfined). */
    confinement: ConfinementRecord.optional(),
    verdict: z.enum(["promoted", "failed"]),
    reasons: z.array(z.string()),
    warnings: z.array(z.string()),
    /** What a person should know of a promotion that passed, e.g. that no persistent parent was migrated. */
    notes: z.array(z.string()).default([]),
  })
  .strict();
export type PromoteResult = z.infer<typeof PromoteResult>;

export const PROMOTE_RESULT_FILE = "promote-result.json";
