import { decideApprovals } from "../engine/approvals.js";
import { failTampered } from "../app/checks.js";
import { showRefusedApprovals, updateStickyComment } from "../engine/effects.js";
import { advanceAndAct } from "../engine/engine.js";
import type { HandlerInput } from "../app/services.js";
import { isTracksBranch, stateStoreFor, targetOf } from "../engine/track.js";
import { approvalEvents, standingReviews, type GateDecision, type GateReview } from "../gates/approval.js";
import { withdrawalEvents } from "../gates/withdrawal.js";
import { dismissalOf, listGateReviews } from "../github/reviews.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { TamperedStateError } from "../state/index.js";
import { branchOfPull } from "../engine/delivery.js";
import type { ReviewPayload } from "./payloads.js";

/**
 * `pull_request_review` submitted or dismissed: a review approves a gate only when every rule of
 * the Gates section of docs/ARCHITECTURE.md holds (src/gates/approval.ts decides; src/engine/approvals.ts fetches the facts: the
 * reviewer's permission and teams, CODEOWNERS from the default branch, the PR's commit authors,
 * and the gate's manifest hash at the reviewed commit). What a dismissal or a request for changes
 * withdraws is src/gates/withdrawal.ts's rule.
 *
 * The payload only says which review to look at: its state is read again from GitHub's listing
 * of the PR's reviews, so a replayed or late delivery (the delivery id is not signed, and GitHub
 * may deliver out of order) decides nothing the reviews on GitHub do not say now.
 */
export async function handleReview(input: HandlerInput<ReviewPayload>): Promise<void> {
  const { payload, services, octokit, log } = input;
  if (payload.action === "edited") return;
  const tracked = await branchOfPull(input);
  // Only a track has gates to approve: a review on an experiment's or a maintenance PR moves no track.
  if (tracked?.kind !== "track") return;
  const { deps, trackId, config } = tracked;
  const pull = payload.pull_request;

  let state;
  try {
    state = await stateStoreFor(deps).read(trackId);
  } catch (error) {
    if (!(error instanceof TamperedStateError)) throw error;
    await failTampered(targetOf(deps, pull.head.sha, trackId), error, deps.repo.fullName, pull.head.ref);
    return;
  }
  if (!state) return;
  if (!isTracksBranch(state, pull.head.ref)) {
    log.warn(
      { trackId, delivery: deps.deliveryId },
      `track ${trackId} is the track of branch ${state.branch}, not of ${pull.head.ref}: this review is not about it`,
    );
    return;
  }
  const before = restoreSnapshot(state.snapshot);
  const listed = await listGateReviews(octokit, deps.repo, pull.number);
  const review = standingReviewOf(listed, payload.review.id, payload.review.user.login);
  if (!review) {
    log.info(
      { trackId, delivery: deps.deliveryId, review: payload.review.id },
      `review ${payload.review.id} (${payload.action}) is not ${payload.review.user.login}'s standing review on GitHub now: it decides nothing`,
    );
    return;
  }
  const at = services.clock().toISOString();
  const dismissedOnPush =
    review.state === "DISMISSED" && (await dismissalOf(octokit, deps.repo, pull.number, review.id))?.onPush === true;

  // Facts are fetched only for an approval of a gate that is waiting for one.
  // The payload names the commit the reviewer saw when they submitted; GitHub may list it moved since.
  const given = payload.action === "submitted" ? { reviewId: review.id, commit: payload.review.commit_id } : undefined;
  if (given && review.commitId !== given.commit)
    log.warn(
      { trackId, delivery: deps.deliveryId, review: review.id },
      `GitHub lists review ${review.id} on ${review.commitId ?? "no commit"}, but it was submitted on ${given.commit}: it is judged on ${given.commit}, what its reviewer saw`,
    );
  const decisions: GateDecision[] =
    review.state === "APPROVED" ? await decideApprovals(deps, config, pull.number, listed, before, given) : [];

  const outcome = await advanceAndAct(deps, {
    trackId,
    branch: pull.head.ref,
    headSha: pull.head.sha,
    config,
    decide: (snapshot) =>
      review.state === "APPROVED"
        ? approvalEvents(snapshot, decisions, at)
        : withdrawalEvents(snapshot, review, at, dismissedOnPush),
  });

  // A review that did not count changes no state, but the reviewer must see why it did not.
  const refused = decisions.filter((d) => d.approvals.length === 0);
  if (
    review.state === "APPROVED" &&
    refused.length > 0 &&
    refused.length === decisions.length &&
    outcome.kind !== "tampered"
  ) {
    const byGate = refused.map((d) => ({
      gate: d.gate,
      note: `@${review.user}'s approval does not count for the ${d.gate} gate: ${d.decisions
        .filter((x) => x.reviewId === review.id)
        .flatMap((x) => x.reasons)
        .join("; ")}`,
    }));
    const snapshot = "state" in outcome ? restoreSnapshot(outcome.state.snapshot) : before;
    const notes = byGate.map((d) => d.note);
    await updateStickyComment(deps, { trackId, branch: pull.head.ref, snapshot, config, notes });
    await showRefusedApprovals(deps, {
      snapshot,
      config,
      headSha: pull.head.sha,
      refused: Object.fromEntries(byGate.map((d) => [d.gate, [d.note]])),
    });
  }
}

/**
 * The review as GitHub lists it now, when it is still its reviewer's standing review (their latest
 * approval, request for changes or dismissal); undefined when it is not listed or a later review
 * of the same reviewer replaced it. A comment-only review is its own standing: it withdraws nothing.
 */
function standingReviewOf(listed: GateReview[], id: number, login: string): GateReview | undefined {
  const review = listed.find((r) => r.id === id);
  if (!review) return undefined;
  if (review.state === "COMMENTED" || review.state === "PENDING") return review;
  const standing = standingReviews(listed).find((r) => r.user?.toLowerCase() === login.toLowerCase());
  return standing?.id === id ? review : undefined;
}
