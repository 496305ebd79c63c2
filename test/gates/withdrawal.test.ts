import { describe, expect, it } from "vitest";
import type { GateReview } from "../../src/gates/approval.js";
import { withdrawalEvents } from "../../src/gates/withdrawal.js";
import { reach } from "../orchestrator/helpers/reach.js";

/** What a review that is not an approval does to the gates lead-human approved on a StockFlow track. */

const at = "2026-11-30T12:00:00Z";

function approvedByLead() {
  const sim = reach("test-list-gate");
  sim.expectAccepted(sim.approve("test-list", "Lead-Human"));
  const designReview = sim.context.gates.design.approvals[0]!.reviewId;
  const listReview = sim.context.gates["test-list"].approvals[0]!.reviewId;
  return { snapshot: sim.snapshot, designReview, listReview };
}
const review = (overrides: Partial<GateReview>): GateReview => ({
  id: 900,
  user: "lead-human",
  state: "COMMENTED",
  commitId: "a".repeat(40),
  submittedAt: at,
  ...overrides,
});

describe("withdrawing an approval", () => {
  it("a comment-only review leaves the reviewer's approvals standing, as on GitHub", () => {
    const { snapshot } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ state: "COMMENTED" }), at)).toEqual([]);
  });

  it("a dismissal withdraws only the approval that review was", () => {
    const { snapshot, listReview } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ id: listReview, state: "DISMISSED" }), at)).toEqual([
      {
        type: "gate.withdrawn",
        at,
        gate: "test-list",
        reason: `lead-human's review ${listReview} was dismissed`,
        reviewId: listReview,
      },
    ]);
  });

  it("a dismissal of a review that approved nothing withdraws nothing", () => {
    const { snapshot } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ id: 4242, state: "DISMISSED" }), at)).toEqual([]);
  });

  it("a request for changes withdraws every approval of that reviewer, whatever the case of their login", () => {
    const { snapshot } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ state: "CHANGES_REQUESTED" }), at)).toEqual(
      (["design", "test-list"] as const).map((gate) => ({
        type: "gate.withdrawn",
        at,
        gate,
        reason: "lead-human now requests changes",
        reviewId: 900,
      })),
    );
  });

  it("a request for changes from someone who approved nothing withdraws nothing", () => {
    const { snapshot } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ user: "drive-by", state: "CHANGES_REQUESTED" }), at)).toEqual([]);
  });

  it("a gate that is no longer approved is not withdrawn again", () => {
    const sim = reach("test-list-gate");
    sim.expectAccepted(
      sim.send({ type: "gate.withdrawn", at, gate: "design", reason: "lead-human now requests changes" }),
    );
    expect(sim.context.gates.design.status).toBe("withdrawn");
    expect(withdrawalEvents(sim.snapshot, review({ state: "CHANGES_REQUESTED" }), at)).toEqual([]);
  });
});
