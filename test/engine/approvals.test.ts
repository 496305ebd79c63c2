import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { decideApprovals, pendingGates } from "../../src/engine/approvals.js";
import type { EngineDeps } from "../../src/engine/track.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import type { GateReview } from "../../src/gates/approval.js";
import { manifestHashFromHashes } from "../../src/gates/hash.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { edited } from "../orchestrator/fixtures/stockflow.js";
import { smallDesign, twoTestList, type TrackSim } from "../orchestrator/helpers/track.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { type Harness, mockInstallationToken, trackRepo } from "../handlers/harness.js";
import { contentFile, type FakeStateBranch, INSTALLATION_ID } from "../handlers/fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectConfig,
  expectReviews,
  expectStickyComment,
  pullRequestPayload,
  simulatedTrack,
  stateOf,
  trackAtGate,
} from "../handlers/scenario.js";

/**
 * The deploy and promote gates approve the release verified on the track's head, not files: a
 * review counts for them only when it is on that head (src/engine/approvals.ts ties the review to
 * the gate's pending hash only there). Driven through `pull_request_review` as GitHub delivers it.
 */

let h: Harness;
let state: FakeStateBranch;
let branch: string;
const CONFIG = "approvers:\n  users: [lead-human]\n  codeowners: false\n";
const REVIEW_ID = 556;

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
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
    expectChecks(h.github, track.context.head, 1);

    await h.receive("pull_request_review", approval(track, earlier));
    h.github.verify();

    expect(state.head).toBe(before);
    const why = `> @lead-human's approval does not count for the ${gate} gate: the frozen manifest hash at ${earlier.slice(0, 7)} is unknown, so the review cannot be tied to the pending files`;
    const comment = (h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body;
    expect(comment).toContain(why);
    // The gate's own check says why too, where a reviewer looking at consort/${gate} reads it.
    expect(Object.keys(createdChecks(h.github))).toEqual([`consort/${gate}`]);
    expect(createdChecks(h.github)[`consort/${gate}`]!.output.summary).toContain(why);
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
    expectChecks(h.github, head, 1);

    await h.receive("pull_request_review", approval(track, head));
    h.github.verify();

    expect(state.head).toBe(before);
    const why = `> @lead-human's approval does not count for the ${gate} gate: lead-human authored aaaaaaa; committed aaaaaaa under approval and cannot approve their own work`;
    const comment = (h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body;
    expect(comment).toContain(why);
    expect(createdChecks(h.github)[`consort/${gate}`]!.output.summary).toContain(why);
  });
});

/**
 * `decideApprovals` called directly, with GitHub answering through the double: which gates it decides,
 * what it fetches to decide them, and how a gate's files at the reviewed commit tie a review to it.
 */
describe("deciding the gates that wait for an approval", () => {
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const deps = (): EngineDeps => ({
    octokit: new Octokit({ auth: "ghs_test", request: { retries: 0 }, log: quiet }),
    log: quiet,
    services: h.services,
    deliveryId: "delivery-1",
    repo: { owner: "acme", repo: "shop", fullName: "acme/shop", defaultBranch: "main" },
  });
  const config = ConsortConfig.parse({ approvers: { users: ["lead-human"], codeowners: false } });
  const review = (
    id: number,
    state: GateReview["state"],
    commitId: string | null,
    user = "lead-human",
  ): GateReview => ({
    id,
    user,
    state,
    commitId,
    submittedAt: `2026-03-01T11:0${id % 10}:00Z`,
  });

  /** A track whose design waits at the design gate (nothing approved yet). */
  function atDesignGate(): TrackSim {
    const track = simulatedTrack(branch);
    const spec = ARTIFACT_PATHS.spec;
    track.expectAccepted(
      track.push({ role: "product-owner", files: { [spec]: edited(smallDesign.spec, (j) => delete j.nfrs) } }),
    );
    track.expectAccepted(track.push({ role: "spec-author", files: { [spec]: smallDesign.spec } }));
    track.expectAccepted(
      track.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: smallDesign.architecture } }),
    );
    track.expectAccepted(track.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: smallDesign.dbDesign } }));
    expect(track.stage).toBe("design-gate");
    return track;
  }

  /** A track whose test list waits at the test-list gate. */
  function atTestListGate(): TrackSim {
    const track = atDesignGate();
    track.expectAccepted(track.approve("design"));
    track.expectAccepted(track.push({ role: "test-strategist", files: { [ARTIFACT_PATHS.testList]: twoTestList } }));
    expect(track.stage).toBe("test-list-gate");
    return track;
  }

  /** The gate's files at `commit`, as the contents API gives them; any other ref has none of them. */
  function filesAt(commit: string, files: Record<string, string | null>) {
    for (const [path, text] of Object.entries(files)) {
      h.github.on(
        "GET",
        `/repos/acme/shop/contents/${encodeURIComponent(path)}`,
        (r) => (r.query.ref === commit && text !== null ? contentFile(path, text) : [404, { message: "Not Found" }]),
        Infinity,
      );
    }
  }

  function reviewerFacts(logins = ["lead-human"]) {
    for (const login of logins)
      h.github.on("GET", `/repos/acme/shop/collaborators/${login}/permission`, [
        200,
        { permission: "write", role_name: "write", user: { login } },
      ]);
    h.github.on("GET", "/repos/acme/shop/pulls/7/commits", [
      200,
      [{ sha: "1".repeat(40), author: { login: "spec-bot[bot]" } }],
    ]);
  }

  const designFiles = (track: TrackSim) =>
    Object.fromEntries(
      Object.keys(track.context.gates.design.files).map((path) => [path, track.context.artifacts[path]!]),
    );
  const contentsRefs = () => h.github.calls("GET", /\/contents\//).map((r) => `${r.path} @ ${r.query.ref ?? "no ref"}`);
  const frozenHashReason = (decision: { decisions: Array<{ rules: Array<{ rule: string; detail: string }> }> }) =>
    decision.decisions.map((d) => d.rules.find((r) => r.rule === "frozen-hash")!.detail);

  it("waits on the gate that is pending, never on the approved ones that keep their pending hash", () => {
    const track = trackAtGate(branch, "promote");
    const { gates } = track.context;
    expect([gates.design.status, gates["test-list"].status, gates.deploy.status]).toEqual([
      "approved",
      "approved",
      "approved",
    ]);
    expect([gates.design.pendingHash, gates["test-list"].pendingHash, gates.deploy.pendingHash]).not.toContain(null);
    expect(pendingGates(track.snapshot)).toEqual([{ gate: "promote", pendingHash: gates.promote.pendingHash }]);
  });

  it("waits on a withdrawn gate, at the hash it was pending on", () => {
    const track = atDesignGate();
    track.expectAccepted(track.approve("design"));
    track.expectAccepted(
      track.send({
        type: "gate.withdrawn",
        at: "2026-03-01T12:00:00.000Z",
        gate: "design",
        reason: "review dismissed",
      }),
    );
    expect(track.context.gates.design.status).toBe("withdrawn");
    expect(pendingGates(track.snapshot)).toEqual([
      { gate: "design", pendingHash: track.context.gates.design.pendingHash },
    ]);
  });

  it("a gate pending without a pending hash waits for nothing", () => {
    const track = atDesignGate();
    const snapshot: TrackSnapshot = {
      ...track.snapshot,
      context: {
        ...track.context,
        gates: { ...track.context.gates, design: { ...track.context.gates.design, pendingHash: null } },
      },
    };
    expect(pendingGates(snapshot)).toEqual([]);
  });

  it("decides nothing and asks GitHub nothing when no gate waits", async () => {
    const track = simulatedTrack(branch).throughDesign();
    expect(pendingGates(track.snapshot)).toEqual([]);

    const decisions = await decideApprovals(
      deps(),
      config,
      7,
      [review(1, "APPROVED", track.context.head)],
      track.snapshot,
    );

    expect(decisions).toEqual([]);
    expect(h.github.requests).toEqual([]);
  });

  it("reads the gate's files only at the commits of approving reviews", async () => {
    const track = atDesignGate();
    const head = track.context.head;
    const other = "e".repeat(40);
    reviewerFacts(["no-commit", "lead-human"]);
    filesAt(head, designFiles(track));

    const [decision] = await decideApprovals(
      deps(),
      config,
      7,
      [
        review(1, "COMMENTED", other),
        review(2, "CHANGES_REQUESTED", other, "someone-else"),
        review(3, "APPROVED", null, "no-commit"),
        review(4, "APPROVED", head),
      ],
      track.snapshot,
    );

    expect(decision).toMatchObject({ gate: "design", approved: true });
    expect(contentsRefs()).toEqual(
      Object.keys(track.context.gates.design.files).map(
        (path) => `/repos/acme/shop/contents/${encodeURIComponent(path)} @ ${head}`,
      ),
    );
    expect(h.github.violations).toEqual([]);
  });

  it("a withdrawn design gate is approved again by a review on files at its pending hash", async () => {
    const track = atDesignGate();
    track.expectAccepted(track.approve("design"));
    track.expectAccepted(
      track.send({
        type: "gate.withdrawn",
        at: "2026-03-01T12:00:00.000Z",
        gate: "design",
        reason: "review dismissed",
      }),
    );
    expect(track.context.gates.design.status).toBe("withdrawn");
    const head = track.context.head;
    reviewerFacts();
    filesAt(head, designFiles(track));

    const [decision] = await decideApprovals(deps(), config, 7, [review(5, "APPROVED", head)], track.snapshot);

    expect(decision).toMatchObject({ gate: "design", approved: true });
    expect(frozenHashReason(decision!)).toEqual([
      `the review is on ${head.slice(0, 7)} at the pending hash ${track.context.gates.design.pendingHash!.slice(0, 7)}`,
    ]);
  });

  it("the test list is approved by a review on an earlier commit whose test list is the pending one", async () => {
    const { snapshot } = atTestListGate();
    const earlier = "a".repeat(40);
    expect(earlier).not.toBe(snapshot.context.head);
    reviewerFacts();
    filesAt(earlier, { [ARTIFACT_PATHS.testList]: snapshot.context.artifacts[ARTIFACT_PATHS.testList]! });

    const [decision] = await decideApprovals(deps(), config, 7, [review(60, "APPROVED", earlier)], snapshot);

    expect(decision).toMatchObject({ gate: "test-list", approved: true });
  });

  it("a gate file missing at the reviewed commit leaves the review untied to the pending files", async () => {
    const track = atDesignGate();
    const head = track.context.head;
    reviewerFacts();
    filesAt(head, { ...designFiles(track), [ARTIFACT_PATHS.architecture]: null });

    const [decision] = await decideApprovals(deps(), config, 7, [review(7, "APPROVED", head)], track.snapshot);

    expect(decision).toMatchObject({ gate: "design", approved: false });
    expect(frozenHashReason(decision!)).toEqual([
      `the frozen manifest hash at ${head.slice(0, 7)} is unknown, so the review cannot be tied to the pending files`,
    ]);
  });

  it("a design gate that froze no files is not approved, even when it waits for the empty manifest's hash", async () => {
    const track = atDesignGate();
    const head = track.context.head;
    const snapshot: TrackSnapshot = {
      ...track.snapshot,
      context: {
        ...track.context,
        gates: {
          ...track.context.gates,
          design: { ...track.context.gates.design, files: {}, pendingHash: manifestHashFromHashes({}) },
        },
      },
    };
    reviewerFacts();

    const [decision] = await decideApprovals(deps(), config, 7, [review(8, "APPROVED", head)], snapshot);

    expect(decision).toMatchObject({ gate: "design", approved: false });
    expect(frozenHashReason(decision!)).toEqual([
      `the frozen manifest hash at ${head.slice(0, 7)} is unknown, so the review cannot be tied to the pending files`,
    ]);
  });
});
