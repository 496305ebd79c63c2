import type { TrackEvent, TrackSnapshot } from "../contracts/track.js";
import type { FrozenState } from "./freeze.js";
import type { GateReview } from "./approval.js";
import { gitBlobId } from "./hash.js";
import { GATE_NAMES, type FileGate } from "../contracts/gates.js";

type GateWithdrawnEvent = Extract<TrackEvent, { type: "gate.withdrawn" }>;

/**
 * What a review that is not an approval withdraws (docs/ARCHITECTURE.md, Gates). An approval binds to the frozen
 * hash, not to the review's liveness, so, as on GitHub, a comment leaves the reviewer's approval
 * standing; GitHub's own dismissal of a stale review on push (`dismissedOnPush`) withdraws nothing
 * (a push that changed a frozen file withdraws the gate itself, in the push's classification); a
 * person's dismissal withdraws the approval that review was, and a request for changes withdraws
 * every approval of that reviewer (logins compare case-insensitively). Only an approved gate is
 * withdrawn; the machine cascades the withdrawal down the lane.
 */
export function withdrawalEvents(
  snapshot: TrackSnapshot,
  review: GateReview,
  at: string,
  dismissedOnPush = false,
): GateWithdrawnEvent[] {
  if (review.state !== "DISMISSED" && review.state !== "CHANGES_REQUESTED") return [];
  if (review.state === "DISMISSED" && dismissedOnPush) return [];
  const reviewer = review.user?.toLowerCase();
  return GATE_NAMES.flatMap((gate): GateWithdrawnEvent[] => {
    const record = snapshot.context.gates[gate];
    const theirs = record.approvals.some((a) =>
      review.state === "DISMISSED" ? a.reviewId === review.id : a.approver.toLowerCase() === reviewer,
    );
    if (record.status !== "approved" || !theirs) return [];
    const who = review.user ?? "a deleted user";
    const reason =
      review.state === "DISMISSED" ? `${who}'s review ${review.id} was dismissed` : `${who} now requests changes`;
    return [{ type: "gate.withdrawn", at, gate, reason, reviewId: review.id }];
  });
}

/**
 * The frozen files at a pushed head (docs/ARCHITECTURE.md, Gates: every check describes the head it is posted on).
 * Each file a gate froze, and each frozen test, must be at the head the text the track accepted
 * (with this push's own changes, which commit classification judges), whatever commits lie
 * beneath: a tree lists blob ids, so the check costs one tree read. A gate file that differs
 * withdraws its gate (the design gate before the test list); a frozen test that differs is refused.
 */
export function frozenChangesAtHead(input: {
  frozen: FrozenState;
  /** The text the track accepted of each path, this push's changes applied (null: the push removes it). */
  accepted: Record<string, string | null | undefined>;
  headBlobs: Record<string, string>;
  head: string;
}): { reasons: string[]; withdraw: FileGate | null } {
  const { frozen, accepted, headBlobs, head } = input;
  const at = head.slice(0, 7);
  const reasons: string[] = [];
  let withdraw: FileGate | null = null;
  const differs = (path: string, text: string | null | undefined) =>
    text === null ? headBlobs[path] !== undefined : text === undefined || headBlobs[path] !== gitBlobId(text);
  for (const [path, { gate }] of Object.entries(frozen.gated)) {
    if (gate !== "design" && gate !== "test-list") continue;
    if (!differs(path, accepted[path])) continue;
    reasons.push(
      `${path}: frozen by the ${gate} gate, but at ${at} it is not the text the gate froze (changed beneath this push); restore it`,
    );
    if (gate === "design") withdraw = "design";
    else withdraw ??= "test-list";
  }
  for (const [path, text] of Object.entries(frozen.tests)) {
    // A path this push removes is null, not absent: its removal is judged with the commit, not again here.
    if (!differs(path, path in accepted ? accepted[path] : text)) continue;
    reasons.push(`${path}: a frozen test file is not at ${at} the text the track accepted; restore it`);
  }
  return { reasons, withdraw };
}
