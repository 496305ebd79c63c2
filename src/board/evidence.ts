import { z } from "zod";
import { checkStates } from "../gates/checks.js";
import { GATE_NAMES, GateName } from "../contracts/gates.js";
import { ApprovalRecordSchema } from "../contracts/track.js";
import { STAGES } from "../contracts/stages.js";
import { CycleRequest } from "../contracts/cycle-request.js";
import { PROVENANCES, stateSourceOf, type BoardTrack } from "./view.js";

/** The TTL the app's cycles fork their throwaway branches with: the request's default (the app sets none). */
const CYCLE_TTL_SECONDS = CycleRequest.shape.ttlSeconds.parse(undefined);

/**
 * The evidence of a track, for an auditor: who approved which frozen files at which hash, every
 * cycle with its run and verdict, where the database branch was forked and what was promoted. One
 * zod schema declares it; `npm run schemas` writes its JSON Schema to schemas/track-evidence.schema.json,
 * and the board serves it as a page and as a download. Built from the snapshot only, so it says no
 * more than the machine recorded.
 */

const GateEvidence = z
  .object({
    gate: GateName,
    /** The check's conclusion as src/gates/checks.ts decides it: `success` only when approved at the current hash. */
    check: z.enum(["pending", "success", "failure"]),
    checkTitle: z.string(),
    status: z.enum(["closed", "pending", "approved", "withdrawn"]),
    /** The manifest hash the gate froze (and an approval must be on). */
    manifestHash: z.string().nullable(),
    approvedHash: z.string().nullable(),
    files: z.array(z.object({ path: z.string(), sha256: z.string() }).strict()),
    /** The logins that authored what the gate froze: none of them may approve it. */
    authors: z.array(z.string()),
    approvals: z.array(ApprovalRecordSchema),
    withdrawnReason: z.string().nullable(),
  })
  .strict();

const CycleEvidence = z
  .object({
    dispatchId: z.string(),
    step: z.string(),
    unit: z.string(),
    commit: z.string(),
    runId: z.number().nullable(),
    /** The Actions run: the one the evidence names, else the run id's page on GitHub. */
    runUrl: z.string().nullable(),
    outcome: z.enum(["valid", "invalid", "error"]).nullable(),
    reasons: z.array(z.string()),
    summary: z.string().nullable(),
    tests: z.array(z.object({ id: z.string(), title: z.string(), result: z.string() }).strict()),
    dispatchedAt: z.string(),
    reportedAt: z.string().nullable(),
  })
  .strict();

export const TrackEvidence = z
  .object({
    evidenceVersion: z.literal(1),
    repository: z.string().regex(/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/),
    trackId: z.string(),
    branch: z.string(),
    baseBranch: z.string(),
    stage: z.enum(STAGES),
    /** True once merged and promoted: until then this is the evidence so far. */
    finished: z.boolean(),
    /** Where the state came from: `signed` when its signature was checked where it was read. */
    provenance: z.enum(PROVENANCES),
    /** Where the facts were read, as the board names them ("from consort/state at 1a2b3c4"). */
    sources: z.object({ state: z.string() }).strict(),
    head: z.string(),
    mergedCommit: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    gates: z.array(GateEvidence),
    cycles: z.array(CycleEvidence),
    units: z.array(
      z
        .object({
          id: z.string(),
          tests: z.array(z.object({ id: z.string(), title: z.string(), file: z.string() }).strict()),
          complete: z.boolean(),
          review: z.string().nullable(),
        })
        .strict(),
    ),
    database: z
      .object({
        branch: z.string(),
        parent: z.string(),
        /** The track's database branch is forked when the track starts. */
        forkedAt: z.string(),
        /** Null: a track's branch has no TTL (on Lakebase a branch that expires cannot have children). */
        expiresAt: z.null(),
        /** The throwaway branch each cycle forked from the track's, as its result recorded it (the cycle named as in `cycles`). */
        cycleBranches: z.array(
          CycleEvidence.pick({ dispatchId: true, step: true, unit: true })
            .extend({
              branch: z.string(),
              /** Its time to live from the fork (it is also deleted at the run's end). */
              ttlSeconds: z.number().int(),
              /** Gone by then at the latest: the run reported, plus the TTL; null while it runs. */
              expiresBy: z.string().nullable(),
            })
            .strict(),
        ),
        /** The migration of the parent's branch after the merge, once dispatched. */
        promotion: z
          .object({
            dispatchId: z.string(),
            commit: z.string(),
            outcome: z.string().nullable(),
            at: z.string().nullable(),
          })
          .strict()
          .nullable(),
      })
      .strict(),
    deploy: z
      .object({
        dispatchId: z.string(),
        commit: z.string(),
        hash: z.string(),
        summary: z.string(),
        previewUrl: z.string().nullable(),
        checks: z.array(z.object({ name: z.string(), ok: z.boolean() }).strict()),
      })
      .strict()
      .nullable(),
  })
  .strict();
export type TrackEvidence = z.infer<typeof TrackEvidence>;

/** The Actions run a cycle record names. */
export function runUrlOf(
  repository: string,
  runId: number | null,
  evidence: { runUrl?: string } | null,
): string | null {
  if (evidence?.runUrl) return evidence.runUrl;
  return runId === null ? null : `https://github.com/${repository}/actions/runs/${runId}`;
}

/** The evidence of a track, from its snapshot. */
export function trackEvidence(track: BoardTrack): TrackEvidence {
  const { stage, context } = track.snapshot;
  const checks = new Map(checkStates(track.snapshot).map((check) => [check.name, check]));
  const promotion = [...context.cycles].reverse().find((cycle) => cycle.step === "promote");
  return TrackEvidence.parse({
    evidenceVersion: 1,
    repository: track.repository,
    trackId: context.trackId,
    branch: context.branch,
    baseBranch: context.baseBranch,
    stage,
    finished: stage === "done",
    provenance: track.provenance,
    sources: { state: stateSourceOf(track) },
    head: context.head,
    mergedCommit: context.mergedCommit,
    createdAt: context.createdAt,
    updatedAt: context.updatedAt,
    gates: GATE_NAMES.map((gate) => {
      const record = context.gates[gate];
      const check = checks.get(`consort/${gate}`);
      return {
        gate,
        check: check?.status ?? "failure",
        checkTitle: check?.title ?? "not decided",
        status: record.status,
        manifestHash: record.pendingHash,
        approvedHash: record.approvedHash,
        // In path order: the same evidence whatever order the state file kept its keys in.
        files: Object.entries(record.files)
          .map(([path, sha256]) => ({ path, sha256 }))
          .sort((a, b) => a.path.localeCompare(b.path)),
        authors: record.authors,
        approvals: record.approvals,
        withdrawnReason: record.withdrawnReason,
      };
    }),
    cycles: context.cycles.map((cycle) => {
      const tests = cycle.evidence && "tests" in cycle.evidence ? (cycle.evidence.tests ?? []) : [];
      return {
        dispatchId: cycle.dispatchId,
        step: cycle.step,
        unit: cycle.unit,
        commit: cycle.commit,
        runId: cycle.runId,
        runUrl: runUrlOf(track.repository, cycle.runId, cycle.evidence),
        outcome: cycle.outcome,
        reasons: cycle.reasons,
        summary: cycle.evidence?.summary ?? null,
        tests: tests.map((test) => ({ id: test.id, title: test.title, result: test.result })),
        dispatchedAt: cycle.dispatchedAt,
        reportedAt: cycle.reportedAt,
      };
    }),
    units: context.units.map((unit) => ({
      id: unit.id,
      tests: unit.tests.map((test) => ({ id: test.id, title: test.title, file: test.file })),
      complete: context.evidence[unit.id]?.complete ?? false,
      review: context.evidence[unit.id]?.review?.verdict ?? null,
    })),
    database: {
      branch: context.databaseBranch,
      parent: context.parentDatabaseBranch,
      forkedAt: context.createdAt,
      expiresAt: null,
      cycleBranches: context.cycles.flatMap((cycle) => {
        const branch = cycle.evidence && "databaseBranch" in cycle.evidence ? cycle.evidence.databaseBranch : undefined;
        if (!branch || cycle.step === "release") return [];
        return [
          {
            dispatchId: cycle.dispatchId,
            step: cycle.step,
            unit: cycle.unit,
            branch,
            ttlSeconds: CYCLE_TTL_SECONDS,
            expiresBy: cycle.reportedAt
              ? new Date(Date.parse(cycle.reportedAt) + CYCLE_TTL_SECONDS * 1000).toISOString()
              : null,
          },
        ];
      }),
      promotion: promotion
        ? {
            dispatchId: promotion.dispatchId,
            commit: promotion.commit,
            outcome: promotion.outcome,
            at: promotion.reportedAt,
          }
        : null,
    },
    deploy: context.deployEvidence
      ? {
          dispatchId: context.deployEvidence.dispatchId,
          commit: context.deployEvidence.commit,
          hash: context.deployEvidence.hash,
          summary: context.deployEvidence.evidence.summary,
          previewUrl: context.deployEvidence.evidence.previewUrl ?? null,
          checks: context.deployEvidence.evidence.checks.map((check) => ({ name: check.name, ok: check.ok })),
        }
      : null,
  });
}
