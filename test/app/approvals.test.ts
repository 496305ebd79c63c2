import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TrackSim } from "../orchestrator/helpers/track.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { createHarness, mockInstallationToken, type Harness } from "../handlers/harness.js";
import { FakeStateBranch, INSTALLATION_ID } from "../handlers/fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectConfig,
  expectReviews,
  expectStickyComment,
  newBranch,
  pullRequestPayload,
  stateOf,
  trackAtGate,
} from "../handlers/scenario.js";

/**
 * The deploy and promote gates approve the release verified on the track's head, not files: a
 * review counts for them only when it is on that head (src/app/approvals.ts ties the review to
 * the gate's pending hash only there). Driven through `pull_request_review` as GitHub delivers it.
 */

let h: Harness;
let state: FakeStateBranch;
let branch: string;
const CONFIG = "approvers:\n  users: [lead-human]\n  codeowners: false\n";
const REVIEW_ID = 556;

beforeEach(() => {
  h = createHarness();
  state = new FakeStateBranch(h.github);
  branch = newBranch();
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

function seeded(gate: "deploy" | "promote"): TrackSim {
  const track = trackAtGate(branch, gate);
  state.seed(stateOf(branch, track.snapshot));
  return track;
}

function approval(track: TrackSim, commit: string) {
  const example = webhookPayload("pull_request_review", "submitted");
  const base = pullRequestPayload(example, branch, track.context.head);
  return {
    ...base,
    action: "submitted",
    review: {
      ...example.review,
      id: REVIEW_ID,
      user: { ...example.review.user, login: "lead-human" },
      state: "approved",
      commit_id: commit,
    },
  };
}

/** What GitHub says about the reviewer (write access) and the PR's commits (by agents, and any `more`). */
function expectFacts(more: Array<{ sha: string; author: { login: string }; committer: { login: string } }> = []) {
  h.github
    .on("GET", "/repos/acme/shop/collaborators/lead-human/permission", [
      200,
      { permission: "write", role_name: "write", user: { login: "lead-human" } },
    ])
    .on("GET", "/repos/acme/shop/pulls/7/commits", [
      200,
      [{ sha: "1".repeat(40), author: { login: "driver-bot[bot]" } }, ...more],
    ]);
}

/** "Update branch" as the lead clicked it: a merge of main into the track, made by the lead. */
const UPDATE_MERGE = "a".repeat(40);
const leadsMerge = [{ sha: UPDATE_MERGE, author: { login: "lead-human" }, committer: { login: "lead-human" } }];

/** The commit of T2's verified GREEN: the track's code, but not the head the release was verified on. */
const greenCommit = (track: TrackSim) => track.context.evidence.T2!.green!.commit;

describe.each(["deploy", "promote"] as const)("the %s gate", (gate) => {
  it(`is approved by an approver's review on the head the release was verified on`, async () => {
    const track = seeded(gate);
    const head = track.context.head;
    expectConfig(h.github, CONFIG);
    expectFacts();
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectChecks(h.github, head);
    expectStickyComment(h.github, branch, head);

    await h.receive("pull_request_review", approval(track, head));
    h.github.verify();

    expect(state.state(branch)!.snapshot).toMatchObject({
      stage: gate === "deploy" ? "promote-gate" : "merging",
      context: { gates: { [gate]: { status: "approved", approvedHash: track.context.gates[gate].pendingHash } } },
    });
    expect(createdChecks(h.github)[`consort/${gate}`]).toMatchObject({ status: "completed", conclusion: "success" });
  });

  it(`is not approved by the same review on an earlier commit of the track`, async () => {
    const track = seeded(gate);
    const before = state.head;
    const earlier = greenCommit(track);
    expect(earlier).not.toBe(track.context.head);
    expectConfig(h.github, CONFIG);
    expectFacts();
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: earlier }]);
    expectStickyComment(h.github, branch, track.context.head);

    await h.receive("pull_request_review", approval(track, earlier));
    h.github.verify();

    expect(state.head).toBe(before);
    const comment = (h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body;
    expect(comment).toContain(
      `> @lead-human's approval does not count for the ${gate} gate: the frozen manifest hash at ${earlier.slice(0, 7)} is unknown, so the review cannot be tied to the pending files`,
    );
  });

  it(`is approved by the person who brought the track up to date, when Consort took that merge of main`, async () => {
    const track = seeded(gate);
    state.seed(stateOf(branch, { ...track.snapshot, context: { ...track.context, updateMerges: [UPDATE_MERGE] } }));
    const head = track.context.head;
    expectConfig(h.github, CONFIG);
    expectFacts(leadsMerge);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectChecks(h.github, head);
    expectStickyComment(h.github, branch, head);

    await h.receive("pull_request_review", approval(track, head));
    h.github.verify();

    expect(state.state(branch)!.snapshot).toMatchObject({
      stage: gate === "deploy" ? "promote-gate" : "merging",
      context: { gates: { [gate]: { status: "approved", approvedHash: track.context.gates[gate].pendingHash } } },
    });
  });

  it(`is not approved by the author of a merge Consort did not take as an update of main`, async () => {
    const track = seeded(gate);
    const before = state.head;
    const head = track.context.head;
    expectConfig(h.github, CONFIG);
    expectFacts(leadsMerge);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectStickyComment(h.github, branch, head);

    await h.receive("pull_request_review", approval(track, head));
    h.github.verify();

    expect(state.head).toBe(before);
    const comment = (h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body;
    expect(comment).toContain(
      `> @lead-human's approval does not count for the ${gate} gate: lead-human authored aaaaaaa; committed aaaaaaa under approval and cannot approve their own work`,
    );
  });
});
