import { describe, expect, it } from "vitest";
import { ApproversConfig } from "../../src/config/consort-config.js";
import {
  approvalCounts,
  gateApproval,
  standingReviews,
  type ApprovalContext,
  type GateReview,
} from "../../src/gates/approval.js";
import { parseCodeowners } from "../../src/gates/codeowners.js";

/**
 * The approval rules' every reason word for word, and the orderings and edge cases a gate could
 * pass through: written against the mutants `npm run mutate -- --mutate src/gates/approval.ts` left
 * alive. The design gate of acme/shop; head commit H is at the pending hash.
 */
const H = "a".repeat(40);
const PENDING = "d".repeat(64);

function context(overrides: Partial<ApprovalContext> = {}): ApprovalContext {
  return {
    gate: "design",
    org: "acme",
    pendingHash: PENDING,
    hashAtCommit: new Map([[H, PENDING]]),
    approvers: ApproversConfig.parse({ users: ["lee"], teams: [], codeowners: true }),
    codeowners: undefined,
    commits: [{ sha: "1".repeat(40), authorLogin: "dana" }],
    reviewers: new Map([["lee", { permission: "write", teams: [] }]]),
    recordedAuthors: [],
    ...overrides,
  };
}

const review = (overrides: Partial<GateReview> = {}): GateReview => ({
  id: 501,
  user: "lee",
  state: "APPROVED",
  commitId: H,
  submittedAt: "2026-11-30T06:00:00Z",
  ...overrides,
});

const reasons = (r: GateReview, ctx = context()) => approvalCounts(r, ctx).reasons;

describe("why a review does not count, word for word", () => {
  it("a review that is not an approval, dismissed or never submitted", () => {
    expect(reasons(review({ state: "COMMENTED", submittedAt: null }))).toEqual([
      "lee's review 501 is COMMENTED, not APPROVED",
    ]);
    expect(reasons(review({ state: "DISMISSED" }))).toEqual([
      "lee's review 501 was dismissed, which withdraws the approval",
    ]);
    expect(reasons(review({ submittedAt: null }))).toEqual([
      "lee's review 501 has no submission time (not submitted yet)",
    ]);
  });

  it("a deleted account, an unknown permission and a reader", () => {
    expect(reasons(review({ user: null }))).toEqual([
      "the reviewer's account no longer exists",
      "a deleted user is not an approver for the design gate: approvers are approvers.users (lee)",
    ]);
    expect(reasons(review(), context({ reviewers: new Map() }))).toEqual([
      "lee's permission on the repository is unknown, so the review cannot count",
    ]);
    expect(reasons(review(), context({ reviewers: new Map([["lee", { permission: "read", teams: [] }]]) }))).toEqual([
      "lee has read permission; approvals need write, maintain or admin",
    ]);
  });

  it("someone who is not an approver is told who the approvers are", () => {
    const sam = review({ user: "sam" });
    const reviewers = new Map([["sam", { permission: "write" as const, teams: [] }]]);
    expect(reasons(sam, context({ reviewers }))).toEqual([
      "sam is not an approver for the design gate: approvers are approvers.users (lee)",
    ]);
    const approvers = ApproversConfig.parse({ users: ["lee", "kim"], teams: ["leads", "acme/qa"], codeowners: true });
    expect(
      reasons(sam, context({ reviewers, approvers, codeowners: parseCodeowners(".consort/ @acme/leads\n") })),
    ).toEqual([
      "sam is not an approver for the design gate: approvers are approvers.users (lee, kim), approvers.teams (leads, acme/qa), the CODEOWNERS of .consort/",
    ]);
    const nobody = ApproversConfig.parse({ users: [], teams: [], codeowners: false });
    expect(reasons(sam, context({ reviewers, approvers: nobody }))).toEqual([
      "sam is not an approver for the design gate: no approvers are configured: set approvers in .github/consort.yml on the default branch, or add a CODEOWNERS rule for .consort/",
    ]);
  });

  it("a CODEOWNERS entry that is an e-mail address makes nobody an approver", () => {
    const approvers = ApproversConfig.parse({ users: [], teams: [], codeowners: true });
    const codeowners = parseCodeowners(".consort/ lee@example.com\n");
    expect(approvalCounts(review(), context({ approvers, codeowners })).counts).toBe(false);
  });

  it("an owner written with a look-alike of @ (the full-width ＠) owns nothing, though the rest is the reviewer's login", () => {
    const approvers = ApproversConfig.parse({ users: [], teams: [], codeowners: true });
    const codeowners = parseCodeowners(".consort/ ＠lee\n");
    expect(reasons(review(), context({ approvers, codeowners }))).toEqual([
      "lee is not an approver for the design gate: approvers are the CODEOWNERS of .consort/",
    ]);
  });

  it("an author, unknown commits, and a commit with no GitHub author", () => {
    expect(reasons(review(), context({ commits: [{ sha: "1".repeat(40), authorLogin: "LEE" }] }))).toEqual([
      "lee authored 1111111 under approval and cannot approve their own work",
    ]);
    expect(reasons(review(), context({ commits: [] }))).toEqual([
      "the commits under approval are unknown, so it cannot be shown the reviewer wrote none of them",
    ]);
    expect(
      reasons(
        review(),
        context({
          commits: [
            { sha: "1".repeat(40), authorLogin: null },
            { sha: "2".repeat(40), authorLogin: null },
          ],
        }),
      ),
    ).toEqual(["commit 1111111, 2222222 has no GitHub author, so it cannot be shown that lee did not write it"]);
  });

  it("nothing pending, no commit, an unknown hash and another hash", () => {
    expect(approvalCounts(review(), context({ pendingHash: undefined }))).toMatchObject({
      counts: false,
      reasons: ["the design gate has nothing pending approval"],
    });
    expect(reasons(review({ commitId: null }))).toEqual(["review 501 names no commit"]);
    expect(reasons(review({ commitId: "c".repeat(40) }))).toEqual([
      "the frozen manifest hash at ccccccc is unknown, so the review cannot be tied to the pending files",
    ]);
    const moved = context({ hashAtCommit: new Map([[H, "e".repeat(64)]]) });
    expect(reasons(review(), moved)).toEqual([
      "the review is on aaaaaaa whose frozen hash eeeeeee is not the pending ddddddd: the files changed since; approve again",
    ]);
  });

  it("every rule is listed by name, passed or failed", () => {
    expect(approvalCounts(review({ user: null, commitId: null }), context()).rules.map((r) => [r.rule, r.ok])).toEqual([
      ["approved-state", true],
      ["write-access", false],
      ["approver", false],
      ["not-an-author", true],
      ["frozen-hash", false],
    ]);
  });
});

describe("which rule a failure is filed under", () => {
  const failed = (r: GateReview, ctx = context()) =>
    approvalCounts(r, ctx)
      .rules.filter((rule) => !rule.ok)
      .map((rule) => rule.rule);

  it("each failure names its own rule", () => {
    expect(failed(review({ submittedAt: null }))).toEqual(["approved-state"]);
    expect(failed(review({ state: "DISMISSED" }))).toEqual(["approved-state"]);
    expect(failed(review(), context({ reviewers: new Map() }))).toEqual(["write-access"]);
    expect(failed(review(), context({ reviewers: new Map([["lee", { permission: "read", teams: [] }]]) }))).toEqual([
      "write-access",
    ]);
    expect(failed(review(), context({ commits: [] }))).toEqual(["not-an-author"]);
    expect(failed(review(), context({ commits: [{ sha: "1".repeat(40), authorLogin: "lee" }] }))).toEqual([
      "not-an-author",
    ]);
    expect(failed(review(), context({ commits: [{ sha: "1".repeat(40), authorLogin: null }] }))).toEqual([
      "not-an-author",
    ]);
    expect(failed(review(), context({ pendingHash: undefined }))).toEqual(["frozen-hash"]);
    expect(failed(review({ commitId: "c".repeat(40) }))).toEqual(["frozen-hash"]);
    expect(failed(review(), context({ hashAtCommit: new Map([[H, "e".repeat(64)]]) }))).toEqual(["frozen-hash"]);
  });

  it("an author of several commits under approval is told each of them", () => {
    const commits = [
      { sha: "1".repeat(40), authorLogin: "lee" },
      { sha: "2".repeat(40), authorLogin: "Lee" },
    ];
    expect(reasons(review(), context({ commits }))).toEqual([
      "lee authored 1111111, 2222222 under approval and cannot approve their own work",
    ]);
  });
});

describe("which review stands", () => {
  it("the latest by submission time, whatever order the reviews come in", () => {
    const approve = review({ id: 1, submittedAt: "2026-11-30T06:00:00Z" });
    const changes = review({ id: 2, state: "CHANGES_REQUESTED", submittedAt: "2026-11-30T06:10:00Z" });
    expect(gateApproval([changes, approve], context()).approved).toBe(false);
    expect(standingReviews([changes, approve])).toEqual([changes]);
  });

  it("at the same submission time, the higher review id, whatever order they come in", () => {
    const approve = review({ id: 7 });
    const changes = review({ id: 9, state: "CHANGES_REQUESTED" });
    expect(standingReviews([changes, approve])).toEqual([changes]);
    expect(standingReviews([approve, changes])).toEqual([changes]);
    expect(gateApproval([changes, approve], context()).approved).toBe(false);
  });

  it("a review with no submission time sorts before every submitted one", () => {
    const unsubmitted = review({ id: 9, submittedAt: null });
    const approve = review({ id: 1 });
    expect(standingReviews([approve, unsubmitted])).toEqual([approve]);
    expect(standingReviews([unsubmitted, approve])).toEqual([approve]);
  });

  it("a deleted account's review stands for nobody and breaks nothing", () => {
    const ghost = review({ id: 3, user: null, submittedAt: "2026-11-30T07:00:00Z" });
    expect(standingReviews([review(), ghost])).toEqual([review()]);
    expect(gateApproval([review(), ghost], context()).approved).toBe(true);
  });
});

describe("deciding a gate", () => {
  it("nothing pending approves nothing, even when no approval is required", () => {
    expect(gateApproval([], context({ pendingHash: undefined }), 0)).toMatchObject({
      approved: false,
      summary: "The design gate has nothing pending approval",
    });
  });

  it("the summary names every approver that counts, standing reviews in order", () => {
    const kim = review({ id: 2, user: "kim" });
    const ctx = context({
      approvers: ApproversConfig.parse({ users: ["lee", "kim"], teams: [], codeowners: true }),
      reviewers: new Map([
        ["lee", { permission: "write", teams: [] }],
        ["kim", { permission: "admin", teams: [] }],
      ]),
    });
    expect(gateApproval([review(), kim], ctx, 2).summary).toBe("Approved by @kim, @lee at ddddddd");
    expect(gateApproval([review()], ctx, 2).summary).toBe("Waiting: 1 of 2 approval(s) count at ddddddd");
  });
});
