import { describe, expect, it } from "vitest";
import type { GateReview } from "../../src/gates/approval.js";
import { gitBlobId, hashFrozenText } from "../../src/gates/hash.js";
import { frozenChangesAtHead, withdrawalEvents } from "../../src/gates/withdrawal.js";
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

  it("GitHub's own dismissal of a stale review on push withdraws nothing; a request for changes still does", () => {
    const { snapshot, listReview } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ id: listReview, state: "DISMISSED" }), at, true)).toEqual([]);
    expect(withdrawalEvents(snapshot, review({ state: "CHANGES_REQUESTED" }), at, true).map((e) => e.gate)).toEqual([
      "design",
      "test-list",
    ]);
  });

  it("a review from a deleted account withdraws only by its id, and says whose it was", () => {
    const { snapshot, listReview } = approvedByLead();
    expect(withdrawalEvents(snapshot, review({ user: null, state: "CHANGES_REQUESTED" }), at)).toEqual([]);
    expect(withdrawalEvents(snapshot, review({ id: listReview, user: null, state: "DISMISSED" }), at)).toEqual([
      {
        type: "gate.withdrawn",
        at,
        gate: "test-list",
        reason: `a deleted user's review ${listReview} was dismissed`,
        reviewId: listReview,
      },
    ]);
  });

  it("a dismissal withdraws a gate approved again, whose record keeps the earlier approval too", () => {
    const sim = reach("test-list-gate");
    sim.expectAccepted(sim.send({ type: "gate.withdrawn", at, gate: "design", reason: "first review dismissed" }));
    sim.expectAccepted(sim.approve("design"));
    const [first, again] = sim.context.gates.design.approvals;
    expect(first!.reviewId).not.toBe(again!.reviewId);
    expect(withdrawalEvents(sim.snapshot, review({ id: again!.reviewId, state: "DISMISSED" }), at)).toEqual([
      {
        type: "gate.withdrawn",
        at,
        gate: "design",
        reason: `lead-human's review ${again!.reviewId} was dismissed`,
        reviewId: again!.reviewId,
      },
    ]);
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

describe("the frozen files at a pushed head", () => {
  const head = "b".repeat(40);
  const spec = '{"stories": []}\n';
  const list = '{"tests": []}\n';
  const testText = 'test("a", () => {});\n';
  const frozen = {
    gated: {
      ".consort/spec.json": { hash: hashFrozenText(spec), gate: "design" as const },
      ".consort/test-list.json": { hash: hashFrozenText(list), gate: "test-list" as const },
    },
    tests: { "test/a.test.ts": testText },
  };
  const accepted = { ".consort/spec.json": spec, ".consort/test-list.json": list };
  const blobs = {
    ".consort/spec.json": gitBlobId(spec),
    ".consort/test-list.json": gitBlobId(list),
    "test/a.test.ts": gitBlobId(testText),
  };

  it("leave every gate standing when each blob at the head is the accepted text's", () => {
    expect(frozenChangesAtHead({ frozen, accepted, headBlobs: blobs, head })).toEqual({ reasons: [], withdraw: null });
  });

  it("withdraw the design gate before the test list when both changed beneath the push", () => {
    const headBlobs = {
      ...blobs,
      ".consort/spec.json": gitBlobId("{}\n"),
      ".consort/test-list.json": gitBlobId("{}\n"),
    };
    expect(frozenChangesAtHead({ frozen, accepted, headBlobs, head })).toEqual({
      reasons: [
        ".consort/spec.json: frozen by the design gate, but at bbbbbbb it is not the text the gate froze (changed beneath this push); restore it",
        ".consort/test-list.json: frozen by the test-list gate, but at bbbbbbb it is not the text the gate froze (changed beneath this push); restore it",
      ],
      withdraw: "design",
    });
  });

  it("count a frozen file missing at the head as changed, and a changed frozen test as refused without withdrawing", () => {
    const { ".consort/test-list.json": _gone, ...rest } = blobs;
    const headBlobs = { ...rest, "test/a.test.ts": gitBlobId(`${testText}test.skip("b", () => {});\n`) };
    expect(frozenChangesAtHead({ frozen, accepted, headBlobs, head })).toEqual({
      reasons: [
        ".consort/test-list.json: frozen by the test-list gate, but at bbbbbbb it is not the text the gate froze (changed beneath this push); restore it",
        "test/a.test.ts: a frozen test file is not at bbbbbbb the text the track accepted; restore it",
      ],
      withdraw: "test-list",
    });
  });

  it("leave a frozen test this push removes to commit classification, which refuses the removal itself", () => {
    const { "test/a.test.ts": _removed, ...headBlobs } = blobs;
    expect(frozenChangesAtHead({ frozen, accepted: { ...accepted, "test/a.test.ts": null }, headBlobs, head })).toEqual(
      { reasons: [], withdraw: null },
    );
  });

  it("count a gate file this push removes, yet still at the head, as changed beneath the push", () => {
    expect(
      frozenChangesAtHead({ frozen, accepted: { ...accepted, ".consort/spec.json": null }, headBlobs: blobs, head }),
    ).toEqual({
      reasons: [
        ".consort/spec.json: frozen by the design gate, but at bbbbbbb it is not the text the gate froze (changed beneath this push); restore it",
      ],
      withdraw: "design",
    });
  });

  it("count a gate file whose accepted text is unknown as changed: it cannot be shown to be the frozen one", () => {
    const { ".consort/test-list.json": _unknown, ...known } = accepted;
    expect(frozenChangesAtHead({ frozen, accepted: known, headBlobs: blobs, head })).toEqual({
      reasons: [
        ".consort/test-list.json: frozen by the test-list gate, but at bbbbbbb it is not the text the gate froze (changed beneath this push); restore it",
      ],
      withdraw: "test-list",
    });
  });

  it("take this push's own text of a path, which commit classification has judged", () => {
    const next = '{"stories": [1]}\n';
    const headBlobs = { ...blobs, ".consort/spec.json": gitBlobId(next) };
    expect(
      frozenChangesAtHead({ frozen, accepted: { ...accepted, ".consort/spec.json": next }, headBlobs, head }),
    ).toEqual({ reasons: [], withdraw: null });
  });
});
