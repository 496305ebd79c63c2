import { createHash } from "node:crypto";
import { z } from "zod";
import { GateName } from "../contracts/gates.js";
import { endsLikeHashSuffix } from "../substrate/names.js";

/**
 * The state file of one track: `tracks/<track-id>.json` on the branch `consort/state` (contract,
 * docs/ARCHITECTURE.md, State). Everything but `signature` is covered by an HMAC-SHA256 with the app's
 * CONSORT_STATE_KEY, so a file edited by hand (or by an agent) is detected as tampered.
 */

export { STATE_BRANCH } from "../contracts/branches.js";
const STATE_SCHEMA_VERSION = 1;
/** How many delivery ids a file remembers; a redelivery older than this is applied again (handlers are idempotent). */
export const MAX_PROCESSED_DELIVERIES = 200;

/** A filename-safe track id: lower-case letters, digits, `.`, `_`, `-`; starts with a letter or digit. */
export const TrackId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, "a track id: 1-100 of a-z 0-9 . _ -, starting with a letter or digit")
  .refine((id) => !id.includes(".."), "a track id may not contain '..'");
export type TrackId = z.infer<typeof TrackId>;

const CommitSha = z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/, "a full git commit sha");
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest");
const Login = z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]|\[bot\])*$/, "a GitHub login");
const Timestamp = z.iso.datetime({ offset: true });
const FilePath = z.string().min(1).max(1024);

/** What a gate froze: each file's hash and one manifest hash over them (docs/ARCHITECTURE.md, Gates). */
const FrozenManifest = z
  .object({
    manifestHash: Sha256,
    files: z.record(FilePath, Sha256),
    commit: CommitSha,
    at: Timestamp,
  })
  .strict();
type FrozenManifest = z.infer<typeof FrozenManifest>;

/** A test file frozen once its RED was verified: later steps may only append to it. */
const FrozenTestFile = z
  .object({
    hash: Sha256,
    testId: z.string().min(1),
    commit: CommitSha,
    at: Timestamp,
  })
  .strict();

export const FrozenHashes = z
  .object({
    gates: z.partialRecord(GateName, FrozenManifest),
    testFiles: z.record(FilePath, FrozenTestFile),
  })
  .strict();
export type FrozenHashes = z.infer<typeof FrozenHashes>;

/** One dispatched job (cycle or deploy): the run id is known once GitHub answers the dispatch. */
export const CycleRecord = z
  .object({
    dispatchId: z.string().min(1).max(200),
    runId: z.number().int().positive().nullable(),
    /** The hash of the request dispatched (requestDigest): the run's result must echo that request. */
    requestSha256: Sha256.optional(),
    step: z.string().min(1).max(100),
    commit: CommitSha,
    /** Null until the run reports; the verdict vocabulary belongs to the cycle runner. */
    verdict: z.string().min(1).max(100).nullable(),
    evidence: z.unknown().optional(),
    dispatchedAt: Timestamp,
    completedAt: Timestamp.nullable(),
  })
  .strict();
export type CycleRecord = z.infer<typeof CycleRecord>;

/** A maintainer's re-seal of a file that failed its signature (kept for audit). */
const ResealRecord = z
  .object({
    actor: Login,
    at: Timestamp,
    reason: z.string().max(500),
  })
  .strict();
type ResealRecord = z.infer<typeof ResealRecord>;

export const SIGNATURE_PREFIX = "hmac-sha256:";
const Signature = z.string().regex(/^hmac-sha256:[0-9a-f]{64}$/, "hmac-sha256:<64 hex digits>");

const stateFields = {
  schemaVersion: z.literal(STATE_SCHEMA_VERSION),
  trackId: TrackId,
  /** `owner/name` the track belongs to: a file copied from another repository fails. */
  repository: z.string().regex(/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/, "owner/name"),
  branch: z.string().min(1).max(255),
  /** The orchestrator's snapshot, which holds the approvals that counted; validated by the orchestrator, not here. */
  snapshot: z.unknown(),
  frozen: FrozenHashes,
  cycles: z.array(CycleRecord),
  processedDeliveries: z.array(z.string().min(1).max(100)).max(MAX_PROCESSED_DELIVERIES),
  reseals: z.array(ResealRecord),
  updatedAt: Timestamp,
  /**
   * The version of this file: each write is the previous one's plus one, so an older file, however
   * validly signed, is told from the newest (files written before versions were kept have none).
   */
  sequence: z.number().int().positive().optional(),
  /** The signature of the version this one replaced (null for a track's first file): the seals form a chain. */
  previousSeal: z
    .string()
    .regex(/^hmac-sha256:[0-9a-f]{64}$/, "hmac-sha256:<64 hex digits>")
    .nullable()
    .optional(),
  /** Which state key sealed the file (`keyIdOf`), so a key can be rotated and a file names the key it needs. */
  keyId: z
    .string()
    .regex(/^[0-9a-f]{16}$/, "16 hex digits")
    .optional(),
};

/**
 * Files written before the approvals lived only in the snapshot also carry a copy of them: such a
 * file still opens (its signature covers what was written), and the copy is dropped on the next write.
 */
function withoutApprovalsCopy(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || !("approvals" in raw)) return raw;
  const { approvals: _copy, ...rest } = raw as Record<string, unknown>;
  return rest;
}

/** A track's state as the app works with it: the file without its signature. */
export const TrackState = z.preprocess(withoutApprovalsCopy, z.object(stateFields).strict());
export type TrackState = z.infer<typeof TrackState>;

/** The file as stored on `consort/state`. */
export const TrackStateFile = z.preprocess(
  withoutApprovalsCopy,
  z.object({ ...stateFields, signature: Signature }).strict(),
);
export type TrackStateFile = z.infer<typeof TrackStateFile>;

/** The path of a track's file on the state branch. */
export function trackPath(trackId: string): string {
  return `tracks/${TrackId.parse(trackId)}.json`;
}

/** A new track's empty state, for the handler that starts it. */
export function emptyTrackState(input: {
  trackId: string;
  repository: string;
  branch: string;
  snapshot: unknown;
  now: Date;
}): TrackState {
  return TrackState.parse({
    schemaVersion: STATE_SCHEMA_VERSION,
    trackId: input.trackId,
    repository: input.repository,
    branch: input.branch,
    snapshot: input.snapshot,
    frozen: { gates: {}, testFiles: {} },
    cycles: [],
    processedDeliveries: [],
    reseals: [],
    updatedAt: input.now.toISOString(),
  });
}

/**
 * The track id for a git branch: the branch name made filename-safe; when that changed the
 * name (slashes, capitals), a short hash of the real name keeps `feature/x` and `feature-x` apart.
 * A name that already ends like a hash suffix is hashed as well, so a branch literally named
 * `feature-x-1a2b3c4d` never takes the id of `Feature/X` (ids are unique per repository whatever
 * the case or punctuation of branch names; handlers also check the state's own branch).
 */
export function trackIdForBranch(branch: string): string {
  const cleaned = branch
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[^a-z0-9]+/, "")
    .replace(/-+$/, "");
  if (cleaned === branch && cleaned.length > 0 && cleaned.length <= 100 && !endsLikeHashSuffix(cleaned)) return cleaned;
  const suffix = createHash("sha256").update(branch).digest("hex").slice(0, 8);
  return `${(cleaned || "track").slice(0, 90).replace(/[-.]+$/, "")}-${suffix}`;
}
