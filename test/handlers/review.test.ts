import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { restoreSnapshot } from "../../src/orchestrator/index.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { edited } from "../orchestrator/fixtures/stockflow.js";
import { smallDesign, type TrackSim } from "../orchestrator/helpers/track.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { contentFile, type FakeStateBranch, INSTALLATION_ID } from "./fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectConfig,
  expectDismissal,
  expectReviews,
  expectStickyComment,
  pullRequestPayload,
  simulatedTrack,
  stateOf,
} from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let branch: string;
let sim: TrackSim;
const CONFIG = "approvers:\n  users: [lead-human]\n  codeowners: false\n";
const REVIEW_ID = 555;

/** A track whose design is written and waits at the design gate. */
function atDesignGate(): TrackSim {
  const track = simulatedTrack(branch);
  track.expectAccepted(
    track.push({
      role: "product-owner",
      files: { [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) },
    }),
  );
  track.expectAccepted(track.push({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: smallDesign.spec } }));
  track.expectAccepted(
    track.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: smallDesign.architecture } }),
  );
  track.expectAccepted(track.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign } }));
  expect(track.stage).toBe("design-gate");
  return track;
}

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  sim = atDesignGate();
  state.seed(stateOf(branch, sim.snapshot));
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

function reviewPayload(action: "submitted" | "dismissed", user: string, reviewState: string, commit: string) {
  const example = webhookPayload("pull_request_review", action);
  const base = pullRequestPayload(example, branch, sim.context.head);
  return {
    ...base,
    action,
    review: {
      ...example.review,
      id: REVIEW_ID,
      user: { ...example.review.user, login: user },
      state: reviewState,
      commit_id: commit,
    },
  };
}

/** The facts GitHub gives about the reviewer and the PR. */
function expectFacts(
  user: string,
  permission: string,
  authors: string[] = ["po-bot[bot]", "spec-bot[bot]", "arch-bot[bot]", "dba-bot[bot]"],
) {
  h.github
    .on("GET", `/repos/acme/shop/collaborators/${encodeURIComponent(user)}/permission`, [
      200,
      { permission, role_name: permission, user: { login: user } },
    ])
    .on("GET", "/repos/acme/shop/pulls/7/commits", [
      200,
      authors.map((login, i) => ({ sha: `${i}`.repeat(40).slice(0, 40), author: { login } })),
    ]);
}

/** The gate's files as they are at the reviewed commit. */
function expectFilesAt(commit: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    h.github.on("GET", `/repos/acme/shop/contents/${encodeURIComponent(path)}`, (r) =>
      r.query.ref === commit ? contentFile(path, text) : [404, { message: "Not Found" }],
    );
  }
}

/** The gate's files at several commits, each answered by the ref it is read at (any number of reads). */
function expectFilesAtEach(byCommit: Record<string, Record<string, string>>) {
  h.github.on(
    "GET",
    /\/repos\/acme\/shop\/contents\/\.consort/,
    (r) => {
      const path = decodeURIComponent(r.path.slice("/repos/acme/shop/contents/".length));
      const text = byCommit[r.query.ref ?? ""]?.[path];
      return text === undefined ? [404, { message: "Not Found" }] : contentFile(path, text);
    },
    Infinity,
  );
}

const designFiles = () => ({
  [ARTIFACT_PATHS.spec]: sim.context.artifacts[ARTIFACT_PATHS.spec]!,
  [ARTIFACT_PATHS.architecture]: sim.context.artifacts[ARTIFACT_PATHS.architecture]!,
  [ARTIFACT_PATHS.dbDesign]: sim.context.artifacts[ARTIFACT_PATHS.dbDesign]!,
});

/** The design gate approved by `approver` in review REVIEW_ID at the head, as the state branch holds it. */
function seedDesignApproved(approver = "lead-human") {
  sim.expectAccepted(
    sim.send({
      type: "gate.approved",
      at: "2026-03-01T10:00:00.000Z",
      gate: "design",
      manifestHash: sim.context.gates.design.pendingHash!,
      approver,
      reviewId: REVIEW_ID,
      commit: sim.context.head,
    }),
  );
  state.seed(stateOf(branch, sim.snapshot));
}

describe("pull_request_review", () => {
  it("an approval by a configured approver with write access, on a commit at the pending hash, approves the design gate", async () => {
    const head = sim.context.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectFacts("lead-human", "write");
    expectFilesAt(head, designFiles());
    expectChecks(h.github, head);
    expectStickyComment(h.github, branch, head);

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", head));
    h.github.verify();

    const after = state.state(branch)!;
    expect(after.snapshot).toMatchObject({ stage: "test-list" });
    expect(restoreSnapshot(after.snapshot).context.gates.design.approvals).toEqual([
      {
        approver: "lead-human",
        reviewId: REVIEW_ID,
        commit: head,
        manifestHash: sim.context.gates.design.pendingHash,
        at: expect.any(String),
      },
    ]);
    expect(createdChecks(h.github)["consort/design"]).toMatchObject({ status: "completed", conclusion: "success" });
  });

  it("an approval by a user without write access does not count, and the PR says why", async () => {
    const head = sim.context.head;
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectFacts("lead-human", "read");
    expectFilesAt(head, designFiles());
    expectStickyComment(h.github, branch, head);
    expectChecks(h.github, head, 1);

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", head));
    h.github.verify();

    expect(state.head).toBe(before);
    const comment = (h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body;
    expect(comment).toContain("lead-human has read permission; approvals need write");
    expect(createdChecks(h.github)["consort/design"]!.output.summary).toContain(
      "> @lead-human's approval does not count for the design gate: lead-human has read permission; approvals need write",
    );
  });

  it("an approval by someone who authored a commit under approval does not count", async () => {
    const head = sim.context.head;
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectFacts("lead-human", "admin", ["po-bot[bot]", "lead-human"]);
    expectFilesAt(head, designFiles());
    expectStickyComment(h.github, branch, head);
    expectChecks(h.github, head, 1);

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", head));
    h.github.verify();

    expect(state.head).toBe(before);
    expect((h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body).toContain(
      "cannot approve their own work",
    );
  });

  it("an approval on an older commit, whose design files differ from the pending ones, does not count", async () => {
    const older = "0123456789".repeat(4);
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: older }]);
    expectFacts("lead-human", "write");
    expectFilesAt(older, { ...designFiles(), [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) });
    expectStickyComment(h.github, branch, sim.context.head);
    expectChecks(h.github, sim.context.head, 1);

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", older));
    h.github.verify();

    expect(state.head).toBe(before);
    expect((h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body).toMatch(
      /is not the pending .*approve again/,
    );
  });

  it("an approval from someone who is not a configured approver does not count", async () => {
    const head = sim.context.head;
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "drive-by", state: "APPROVED", commit: head }]);
    expectFacts("drive-by", "write");
    expectFilesAt(head, designFiles());
    expectStickyComment(h.github, branch, head);
    expectChecks(h.github, head, 1);
    await h.receive("pull_request_review", reviewPayload("submitted", "drive-by", "approved", head));
    h.github.verify();
    expect(state.head).toBe(before);
    expect((h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body).toContain(
      "drive-by is not an approver",
    );
  });

  it("a comment-only review from an approver leaves their approval standing, as on GitHub", async () => {
    seedDesignApproved();
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [
      { id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: sim.context.head },
      { id: REVIEW_ID + 1, login: "lead-human", state: "COMMENTED", commit: sim.context.head },
    ]);

    const comment = reviewPayload("submitted", "lead-human", "commented", sim.context.head);
    await h.receive("pull_request_review", { ...comment, review: { ...comment.review, id: REVIEW_ID + 1 } });
    h.github.verify();

    expect(state.head).toBe(before);
    expect(state.state(branch)!.snapshot).toMatchObject({ context: { gates: { design: { status: "approved" } } } });
  });

  it("a dismissed review withdraws the approval it gave", async () => {
    seedDesignApproved();
    const head = sim.context.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "DISMISSED", commit: head }]);
    expectDismissal(h.github, REVIEW_ID, { by: "maintainer", message: "Approved the wrong PR" });
    expectChecks(h.github, head);
    expectStickyComment(h.github, branch, head);

    await h.receive("pull_request_review", reviewPayload("dismissed", "lead-human", "dismissed", head));
    h.github.verify();

    const after = state.state(branch)!;
    expect(after.snapshot).toMatchObject({ context: { gates: { design: { status: "withdrawn" } } } });
    expect(createdChecks(h.github)["consort/design"]).toMatchObject({
      conclusion: "failure",
      output: { title: "Approval withdrawn" },
    });
  });

  it("a request for changes withdraws what the same reviewer approved, whatever the case of their login", async () => {
    seedDesignApproved("Lead-Human");
    const head = sim.context.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [
      { id: REVIEW_ID, login: "Lead-Human", state: "APPROVED", commit: head },
      {
        id: REVIEW_ID + 1,
        login: "lead-human",
        state: "CHANGES_REQUESTED",
        commit: head,
        submittedAt: "2026-03-01T11:10:00Z",
      },
    ]);
    expectChecks(h.github, head);
    expectStickyComment(h.github, branch, head);

    const changes = reviewPayload("submitted", "lead-human", "changes_requested", head);
    await h.receive("pull_request_review", { ...changes, review: { ...changes.review, id: REVIEW_ID + 1 } });
    h.github.verify();

    expect(state.state(branch)!.snapshot).toMatchObject({ context: { gates: { design: { status: "withdrawn" } } } });
    expect(createdChecks(h.github)["consort/design"]).toMatchObject({
      status: "completed",
      conclusion: "failure",
      output: { title: "Approval withdrawn" },
    });
  });

  it("GitHub's own dismissal of a stale approval on push withdraws nothing: the approval binds to the frozen hash", async () => {
    seedDesignApproved();
    const before = state.head;
    const head = sim.context.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "DISMISSED", commit: head }]);
    expectDismissal(h.github, REVIEW_ID, { by: "po-bot[bot]", message: null, commit: "f".repeat(40) });

    await h.receive("pull_request_review", reviewPayload("dismissed", "lead-human", "dismissed", head));
    h.github.verify();

    expect(state.head).toBe(before);
    expect(state.state(branch)!.snapshot).toMatchObject({ context: { gates: { design: { status: "approved" } } } });
  });

  it("an approval counts for the commit its event named: GitHub listing it moved onto the head since opens nothing", async () => {
    const older = "0123456789".repeat(4);
    const head = sim.context.head;
    const before = state.head;
    expectConfig(h.github, CONFIG);
    // GitHub moved the review's commit_id onto the head after it was given on `older`.
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head }]);
    expectFacts("lead-human", "write");
    expectFilesAtEach({
      [older]: { ...designFiles(), [ARTIFACT_PATHS.spec]: edited(smallDesign.spec, (j) => delete j.nfrs) },
      [head]: designFiles(),
    });
    expectStickyComment(h.github, branch, head);
    expectChecks(h.github, head, 1);

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", older));
    h.github.verify();

    expect(state.head).toBe(before);
    expect(state.state(branch)!.snapshot).toMatchObject({ context: { gates: { design: { status: "pending" } } } });
    expect((h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body).toContain(
      `the review is on ${older.slice(0, 7)}`,
    );
  });

  it("a counted approval stays bound to its commit: GitHub moving it past a frozen-file change never re-approves the gate", async () => {
    seedDesignApproved();
    const approvedOn = sim.context.head;
    // A person reopens the design; the architect changes it: the gate waits at a new hash, and the
    // review that approved the old design still stands on GitHub.
    sim.expectAccepted(
      sim.send({
        type: "renegotiate",
        at: "2026-03-01T10:30:00.000Z",
        by: "lead-human",
        scope: "design",
        from: "architecture",
        reason: "the design changes",
      }),
    );
    const architecture = edited(smallDesign.architecture, (j) => {
      j.modules[0].responsibility = "POST /stock only: the design changed";
    });
    sim.expectAccepted(sim.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: architecture } }));
    if (sim.stage !== "design-gate")
      sim.expectAccepted(sim.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign } }));
    expect(sim.stage).toBe("design-gate");
    state.seed(stateOf(branch, sim.snapshot));
    const before = state.head;
    const head = sim.context.head;
    expectConfig(h.github, CONFIG);
    // GitHub moved the old approval onto the new head; another reviewer (no approver) approves there.
    expectReviews(h.github, [
      { id: REVIEW_ID, login: "lead-human", state: "APPROVED", commit: head },
      { id: REVIEW_ID + 1, login: "someone", state: "APPROVED", commit: head, submittedAt: "2026-03-01T11:30:00Z" },
    ]);
    h.github.on(
      "GET",
      /\/repos\/acme\/shop\/collaborators\/[^/]+\/permission$/,
      (r) => {
        const user = decodeURIComponent(r.path.split("/").at(-2)!);
        return [200, { permission: "write", role_name: "write", user: { login: user } }];
      },
      Infinity,
    );
    h.github.on("GET", "/repos/acme/shop/pulls/7/commits", [
      200,
      ["po-bot[bot]", "arch-bot[bot]"].map((login, i) => ({ sha: `${i}`.repeat(40), author: { login } })),
    ]);
    expectFilesAtEach({
      [approvedOn]: { ...designFiles(), [ARTIFACT_PATHS.architecture]: smallDesign.architecture },
      [head]: designFiles(),
    });
    h.github.on(
      "GET",
      "/repos/acme/shop/pulls",
      [200, [{ number: 7, base: { ref: "main" }, head: { ref: branch, sha: head } }]],
      Infinity,
    );
    h.github.on("GET", "/repos/acme/shop/issues/7/comments", [200, []], Infinity);
    h.github.on("POST", "/repos/acme/shop/issues/7/comments", [201, { id: 77, body: "" }], Infinity);
    expectChecks(h.github, head);

    const payload = reviewPayload("submitted", "someone", "approved", head);
    payload.review.id = REVIEW_ID + 1;
    await h.receive("pull_request_review", payload);

    expect(state.state(branch)!.snapshot).toMatchObject({ context: { gates: { design: { status: "pending" } } } });
    expect(state.head).toBe(before);
  });

  it("an approval delivered again after GitHub lists the review as dismissed approves nothing", async () => {
    const head = sim.context.head;
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, [{ id: REVIEW_ID, login: "lead-human", state: "DISMISSED", commit: head }]);
    expectDismissal(h.github, REVIEW_ID, { by: "maintainer", message: "Not this one" });

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", head));
    h.github.verify();

    expect(state.head).toBe(before);
    expect(state.state(branch)!.snapshot).toMatchObject({ context: { gates: { design: { status: "pending" } } } });
  });

  it("an approval GitHub does not list for the PR approves nothing", async () => {
    const head = sim.context.head;
    const before = state.head;
    expectConfig(h.github, CONFIG);
    expectReviews(h.github, []);

    await h.receive("pull_request_review", reviewPayload("submitted", "lead-human", "approved", head));
    h.github.verify();

    expect(state.head).toBe(before);
  });

  it("a review on a pull request from the track into another branch than the default one is not read at all", async () => {
    const head = sim.context.head;
    const before = state.head;
    const payload = reviewPayload("submitted", "lead-human", "approved", head);
    await h.receive("pull_request_review", {
      ...payload,
      pull_request: { ...payload.pull_request, base: { ...payload.pull_request.base, ref: "scratch" } },
    });
    expect(h.github.violations).toEqual([]);

    expect(state.head).toBe(before);
    expect(h.github.requests).toEqual([]);
  });
});
