import { updateStickyComment } from "../app/effects.js";
import { failTampered } from "../app/checks.js";
import type { HandlerInput } from "../app/services.js";
import { stateStoreFor, targetOf } from "../app/track.js";
import { approvalCounts, type ApprovalDecision, type GateReview } from "../gates/approval.js";
import { toGateReview } from "../github/reviews.js";
import { approvalFacts, pendingGates } from "../app/approvals.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { GATE_NAMES, type GateName, type TrackEvent } from "../orchestrator/types.js";
import { TamperedStateError } from "../state/index.js";
import { advanceAndAct, configOrFail, engineDeps, trackOf } from "./common.js";
import type { ReviewPayload } from "./payloads.js";

/**
 * `pull_request_review` submitted or dismissed: a review approves a gate only when every rule of
 * design §4 holds (src/gates/approval.ts decides; this handler fetches the facts: the reviewer's
 * permission and teams, CODEOWNERS from the default branch, the PR's commit authors, and the
 * gate's manifest hash at the reviewed commit). A dismissed review, or a later review that is not
 * an approval, withdraws what that reviewer approved.
 */
export async function handleReview(input: HandlerInput<ReviewPayload>): Promise<void> {
  const { payload, services } = input;
  if (payload.action === "edited") return;
  const pull = payload.pull_request;
  if (pull.head.repo?.id !== payload.repository.id) return;
  const deps = engineDeps(input);
  const trackId = trackOf(pull.head.ref, deps.repo);
  if (!trackId) return;
  const loaded = await configOrFail(deps, pull.head.sha, trackId);
  if (!loaded) return;
  const { config } = loaded;

  let state;
  try {
    state = await stateStoreFor(deps).read(trackId);
  } catch (error) {
    if (!(error instanceof TamperedStateError)) throw error;
    await failTampered(targetOf(deps, pull.head.sha, trackId), error, deps.repo.fullName, pull.head.ref);
    return;
  }
  if (!state) return;
  const before = restoreSnapshot(state.snapshot);
  const review: GateReview = toGateReview({
    ...payload.review,
    state: payload.action === "dismissed" ? "dismissed" : payload.review.state,
  });
  const at = services.clock().toISOString();

  // Facts are fetched only for an approval of a gate that is waiting for one.
  let decisions: Array<{ gate: GateName; decision: ApprovalDecision }> = [];
  if (review.state === "APPROVED" && pendingGates(before).length > 0) {
    const facts = await approvalFacts(deps, config, pull.number, [review], before);
    decisions = pendingGates(before).map(({ gate, pendingHash }) => ({
      gate,
      decision: approvalCounts(review, { ...facts.common, gate, pendingHash, hashAtCommit: facts.hashAt(gate) }),
    }));
  }
  const reviewer = review.user?.toLowerCase();

  const outcome = await advanceAndAct(deps, {
    trackId,
    branch: pull.head.ref,
    headSha: pull.head.sha,
    config,
    decide: (snapshot) => {
      const events: TrackEvent[] = [];
      if (review.state === "APPROVED") {
        for (const { gate, decision } of decisions) {
          const record = snapshot.context.gates[gate];
          // Re-checked against the state as written now: the pending hash may have moved meanwhile.
          if (!decision.counts || decision.hash !== record.pendingHash || record.status === "approved") continue;
          events.push({
            type: "gate.approved",
            at,
            gate,
            manifestHash: decision.hash!,
            approver: decision.user!,
            reviewId: review.id,
            commit: decision.commit!,
          });
        }
        return events;
      }
      // As on GitHub, a comment-only review leaves the reviewer's approval standing; a dismissal
      // withdraws the approval it was, and a request for changes withdraws all of theirs.
      if (review.state !== "DISMISSED" && review.state !== "CHANGES_REQUESTED") return events;
      for (const gate of GATE_NAMES) {
        const record = snapshot.context.gates[gate];
        const approvedByThem = record.approvals.some((a) =>
          review.state === "DISMISSED" ? a.reviewId === review.id : a.approver.toLowerCase() === reviewer,
        );
        if (record.status === "approved" && approvedByThem) {
          const reason =
            review.state === "DISMISSED"
              ? `${review.user}'s review ${review.id} was dismissed`
              : `${review.user} now requests changes`;
          events.push({ type: "gate.withdrawn", at, gate, reason, reviewId: review.id });
        }
      }
      return events;
    },
  });

  // A review that did not count changes no state, but the reviewer must see why it did not.
  const refused = decisions.filter((d) => !d.decision.counts);
  if (
    review.state === "APPROVED" &&
    refused.length > 0 &&
    decisions.every((d) => !d.decision.counts) &&
    outcome.kind !== "tampered"
  ) {
    const notes = refused.map(
      ({ gate, decision }) =>
        `@${review.user}'s approval does not count for the ${gate} gate: ${decision.reasons.join("; ")}`,
    );
    const snapshot = "state" in outcome ? restoreSnapshot(outcome.state.snapshot) : before;
    await updateStickyComment(deps, { trackId, branch: pull.head.ref, snapshot, config, notes });
  }
}
