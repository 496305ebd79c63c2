import type { TrackEvent, TrackSnapshot } from "../orchestrator/types.js";
import type { GateReview } from "./approval.js";
import { GATE_NAMES } from "./names.js";

type GateWithdrawnEvent = Extract<TrackEvent, { type: "gate.withdrawn" }>;

/**
 * What a review that is not an approval withdraws (design §4). An approval binds to the frozen
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
    const reason =
      review.state === "DISMISSED"
        ? `${review.user}'s review ${review.id} was dismissed`
        : `${review.user} now requests changes`;
    return [{ type: "gate.withdrawn", at, gate, reason, reviewId: review.id }];
  });
}
