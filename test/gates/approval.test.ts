import { describe, expect, it } from "vitest";
import { ApproversConfig } from "../../src/config/consort-config.js";
import { checkStates } from "../../src/gates/checks.js";
import {
  approvalCounts,
  approvalEvents,
  gateApproval,
  type ApprovalContext,
  type GateReview,
  type ReviewerFacts,
} from "../../src/gates/approval.js";
import { consortOwners, ownersOf, parseCodeowners } from "../../src/gates/codeowners.js";
import { toGateReview } from "../../src/github/reviews.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { reach } from "../orchestrator/helpers/reach.js";

/**
 * The design gate of acme/shop: the spec and architecture were written by the agent
 * `spec-bot[bot]` and the person `dana`; the lead `lee` reviews. Head commit H is at the
 * pending frozen hash; the older commit O was at a hash since superseded.
 */
const H = "a".repeat(40);
const O = "b".repeat(40);
const PENDING = "d".repeat(64);
const OLD = "e".repeat(64);

const writer: ReviewerFacts = { permission: "write", teams: [] };

function context(overrides: Partial<ApprovalContext> = {}): ApprovalContext {
  return {
    gate: "design",
    org: "acme",
    pendingHash: PENDING,
    hashAtCommit: new Map([
      [H, PENDING],
      [O, OLD],
    ]),
    approvers: ApproversConfig.parse({ users: ["lee"], teams: [], codeowners: true }),
    codeowners: undefined,
    commits: [
      { sha: "1".repeat(40), authorLogin: "spec-bot[bot]" },
      { sha: "2".repeat(40), authorLogin: "dana" },
    ],
    reviewers: new Map([["lee", writer]]),
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

describe("an approval that meets every rule", () => {
  it("counts, and says why for each rule", () => {
    const decision = approvalCounts(review(), context());
    expect(decision.counts).toBe(true);
    expect(decision.reasons).toEqual([]);
    expect(decision.rules).toEqual([
      { rule: "approved-state", ok: true, detail: "review 501 is APPROVED" },
      { rule: "write-access", ok: true, detail: "lee has write permission" },
      { rule: "approver", ok: true, detail: "lee is an approver: listed in approvers.users" },
      {
        rule: "not-an-author",
        ok: true,
        detail: "lee authored, committed, co-authored and pushed none of the 2 commit(s) under approval",
      },
      { rule: "frozen-hash", ok: true, detail: "the review is on aaaaaaa at the pending hash ddddddd" },
    ]);
  });
});

describe("rule 1: only an APPROVED review approves", () => {
  it("a review requesting changes does not count", () => {
    expect(approvalCounts(review({ state: "CHANGES_REQUESTED" }), context()).reasons).toEqual([
      "lee's review 501 is CHANGES_REQUESTED, not APPROVED",
    ]);
  });

  it("an approval still pending (never submitted) does not count", () => {
    expect(approvalCounts(review({ submittedAt: null }), context()).reasons).toEqual([
      "lee's review 501 has no submission time (not submitted yet)",
    ]);
  });

  it("a later request for changes under the same login in other capitals replaces the approval", () => {
    const approve = review({ id: 1, user: "Lee", submittedAt: "2026-11-30T06:00:00Z" });
    const changes = review({ id: 3, user: "lee", state: "CHANGES_REQUESTED", submittedAt: "2026-11-30T06:10:00Z" });
    expect(gateApproval([approve, changes], context()).approved).toBe(false);
  });

  it("a dismissed review withdraws the approval it gave", () => {
    const gate = gateApproval([review({ state: "DISMISSED" })], context());
    expect(gate.approved).toBe(false);
    expect(gate.decisions[0]!.reasons).toEqual(["lee's review 501 was dismissed, which withdraws the approval"]);
    expect(gate.approvals).toEqual([]);
  });

  it("a later request for changes replaces an earlier approval, but a later comment does not", () => {
    const approve = review({ id: 1, submittedAt: "2026-11-30T06:00:00Z" });
    const comment = review({ id: 2, state: "COMMENTED", submittedAt: "2026-11-30T06:05:00Z" });
    const changes = review({ id: 3, state: "CHANGES_REQUESTED", submittedAt: "2026-11-30T06:10:00Z" });
    expect(gateApproval([approve, comment], context()).approved).toBe(true);
    expect(gateApproval([approve, comment, changes], context()).approved).toBe(false);
  });

  it("reads a real pull_request_review payload (its states are lower-case) and a comment there does not approve", () => {
    const payload = webhookPayload("pull_request_review", "submitted");
    const fromPayload = toGateReview(payload.review);
    expect(fromPayload).toEqual({
      id: 237895671,
      user: "Codertocat",
      state: "COMMENTED",
      commitId: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      submittedAt: "2019-05-15T15:20:38Z",
    });
    expect(approvalCounts(fromPayload, context()).rules[0]).toEqual({
      rule: "approved-state",
      ok: false,
      detail: "Codertocat's review 237895671 is COMMENTED, not APPROVED",
    });
  });
});

describe("rule 2: only users with write access approve", () => {
  it("an approval from a reviewer with read permission does not count", () => {
    const decision = approvalCounts(
      review(),
      context({ reviewers: new Map([["lee", { permission: "read", teams: [] }]]) }),
    );
    expect(decision.reasons).toEqual(["lee has read permission; approvals need write, maintain or admin"]);
  });

  it("an approval from a triager does not count", () => {
    expect(
      approvalCounts(review(), context({ reviewers: new Map([["lee", { permission: "triage", teams: [] }]]) })).counts,
    ).toBe(false);
  });

  it("an approval whose reviewer's permission was never fetched does not count", () => {
    expect(approvalCounts(review(), context({ reviewers: new Map() })).reasons).toEqual([
      "lee's permission on the repository is unknown, so the review cannot count",
    ]);
  });

  it("a maintainer and an admin count", () => {
    expect(
      approvalCounts(review(), context({ reviewers: new Map([["LEE", { permission: "maintain", teams: [] }]]) }))
        .counts,
    ).toBe(true);
    expect(
      approvalCounts(review(), context({ reviewers: new Map([["lee", { permission: "admin", teams: [] }]]) })).counts,
    ).toBe(true);
  });
});

describe("rule 3: only configured approvers or CODEOWNERS of .consort/ approve", () => {
  const sam = (teams: string[] = []) => new Map([["sam", { permission: "write" as const, teams }]]);

  it("an approval from a writer who is not an approver does not count", () => {
    const decision = approvalCounts(review({ user: "sam" }), context({ reviewers: sam() }));
    expect(decision.reasons).toEqual([
      "sam is not an approver for the design gate: approvers are approvers.users (lee)",
    ]);
  });

  it("an approver listed with other capitals counts: GitHub logins ignore case", () => {
    const ctx = context({ approvers: ApproversConfig.parse({ users: ["Lee"] }) });
    expect(approvalCounts(review(), ctx).rules[2]).toEqual({
      rule: "approver",
      ok: true,
      detail: "lee is an approver: listed in approvers.users",
    });
  });

  it("a CODEOWNER of .consort/ written with other capitals counts", () => {
    const codeowners = parseCodeowners("/.consort/ @Sam\n");
    expect(approvalCounts(review({ user: "sam" }), context({ codeowners, reviewers: sam() })).rules[2]).toEqual({
      rule: "approver",
      ok: true,
      detail: "sam is an approver: CODEOWNER of .consort/ (@Sam)",
    });
  });

  it("a member of an approvers team configured with other capitals counts", () => {
    const ctx = context({
      approvers: ApproversConfig.parse({ teams: ["Design-Leads"] }),
      reviewers: sam(["acme/design-leads"]),
    });
    expect(approvalCounts(review({ user: "sam" }), ctx).rules[2]).toEqual({
      rule: "approver",
      ok: true,
      detail: "sam is an approver: member of approvers team @acme/Design-Leads",
    });
  });

  it("a member of a configured approvers team counts", () => {
    const ctx = context({
      approvers: ApproversConfig.parse({ teams: ["design-leads"] }),
      reviewers: sam(["acme/design-leads"]),
    });
    expect(approvalCounts(review({ user: "sam" }), ctx).rules[2]).toEqual({
      rule: "approver",
      ok: true,
      detail: "sam is an approver: member of approvers team @acme/design-leads",
    });
  });

  it("a CODEOWNER of .consort/ counts, by name or through a team", () => {
    const codeowners = parseCodeowners("* @acme/everyone\n/.consort/ @sam @acme/architects\n");
    expect(approvalCounts(review({ user: "sam" }), context({ codeowners, reviewers: sam() })).counts).toBe(true);
    const kim = new Map([["kim", { permission: "write" as const, teams: ["acme/architects"] }]]);
    expect(approvalCounts(review({ user: "kim" }), context({ codeowners, reviewers: kim })).rules[2]!.detail).toBe(
      "kim is an approver: CODEOWNER of .consort/ (@acme/architects)",
    );
  });

  it("the last matching CODEOWNERS rule wins: an earlier rule naming the reviewer does not make them an owner", () => {
    const codeowners = parseCodeowners(".consort/ @sam\n/.consort/ @kim\n");
    expect(consortOwners(codeowners)).toEqual(["@kim"]);
    expect(approvalCounts(review({ user: "sam" }), context({ codeowners, reviewers: sam() })).counts).toBe(false);
  });

  it("owning some file types (*.json) is not owning .consort/", () => {
    const codeowners = parseCodeowners("*.json @sam\n");
    expect(approvalCounts(review({ user: "sam" }), context({ codeowners, reviewers: sam() })).counts).toBe(false);
  });

  it("CODEOWNERS are ignored when approvers.codeowners is false", () => {
    const codeowners = parseCodeowners("/.consort/ @sam\n");
    const ctx = context({ codeowners, reviewers: sam(), approvers: ApproversConfig.parse({ codeowners: false }) });
    expect(approvalCounts(review({ user: "sam" }), ctx).reasons).toEqual([
      "sam is not an approver for the design gate: no approvers are configured: set approvers in .github/consort.yml on the default branch, or add a CODEOWNERS rule for .consort/",
    ]);
  });
});

describe("rule 4: nobody approves their own work", () => {
  it("a review from an author of the approved commits does not count", () => {
    const ctx = context({
      reviewers: new Map([["dana", writer]]),
      approvers: ApproversConfig.parse({ users: ["lee", "dana"] }),
    });
    expect(approvalCounts(review({ user: "dana" }), ctx).reasons).toEqual([
      "dana authored 2222222 under approval and cannot approve their own work",
    ]);
  });

  it("a review from an author whose login is written with other capitals does not count", () => {
    const ctx = context({
      commits: [{ sha: "2".repeat(40), authorLogin: "Dana" }],
      reviewers: new Map([["dana", writer]]),
      approvers: ApproversConfig.parse({ users: ["lee", "dana"] }),
    });
    expect(approvalCounts(review({ user: "dana" }), ctx).reasons).toEqual([
      "dana authored 2222222 under approval and cannot approve their own work",
    ]);
  });

  it("a commit whose author is no GitHub account blocks the approval, since authorship cannot be ruled out", () => {
    const ctx = context({ commits: [{ sha: "3".repeat(40), authorLogin: null }] });
    expect(approvalCounts(review(), ctx).reasons).toEqual([
      "commit 3333333 has no GitHub author, so it cannot be shown that lee did not write it",
    ]);
  });

  it("unknown commits block the approval", () => {
    expect(approvalCounts(review(), context({ commits: [] })).counts).toBe(false);
  });
});

describe("rule 5: the approval is on the pending frozen files", () => {
  it("a review on a commit whose frozen files have changed since does not count", () => {
    expect(approvalCounts(review({ commitId: O }), context()).reasons).toEqual([
      "the review is on bbbbbbb whose frozen hash eeeeeee is not the pending ddddddd: the files changed since; approve again",
    ]);
  });

  it("a review on a commit whose hash could not be computed does not count", () => {
    expect(approvalCounts(review({ commitId: "c".repeat(40) }), context()).reasons).toEqual([
      "the frozen manifest hash at ccccccc is unknown, so the review cannot be tied to the pending files",
    ]);
  });

  it("nothing approves a gate with nothing pending", () => {
    const gate = gateApproval([review()], context({ pendingHash: undefined }));
    expect(gate.approved).toBe(false);
    expect(gate.summary).toBe("The design gate has nothing pending approval");
  });
});

describe("deciding a gate from all reviews", () => {
  it("is approved with the counted approvals ready to store", () => {
    const gate = gateApproval([review()], context());
    expect(gate).toMatchObject({ approved: true, summary: "Approved by @lee at ddddddd" });
    expect(gate.approvals).toEqual([
      { approver: "lee", reviewId: 501, commit: H, manifestHash: PENDING, at: "2026-11-30T06:00:00Z" },
    ]);
  });

  it("needs as many counting approvals as required", () => {
    const ctx = context({
      approvers: ApproversConfig.parse({ users: ["lee", "sam"] }),
      reviewers: new Map([
        ["lee", writer],
        ["sam", { permission: "read", teams: [] }],
      ]),
    });
    const gate = gateApproval([review(), review({ id: 502, user: "sam" })], ctx, 2);
    expect(gate.approved).toBe(false);
    expect(gate.summary).toBe("Waiting: 1 of 2 approval(s) count at ddddddd");
  });

  it("waits, naming the approvers, when nobody has reviewed", () => {
    expect(gateApproval([], context()).summary).toBe(
      "Waiting for an approving review at ddddddd (approvers are approvers.users (lee))",
    );
  });
});

describe("from the decision to the machine's events", () => {
  const at = "2026-11-30T06:01:00Z";
  const atDesignGate = () => {
    const sim = reach("design-gate");
    const pending = sim.context.gates.design.pendingHash!;
    return { sim, pending, ctx: context({ pendingHash: pending, hashAtCommit: new Map([[H, pending]]) }) };
  };

  it("an approval from someone else approves the gate at the hash it is pending on, and the gate's check passes", () => {
    const { sim, pending, ctx } = atDesignGate();
    const events = approvalEvents(sim.snapshot, [gateApproval([review()], ctx)], at);
    expect(events).toEqual([
      { type: "gate.approved", at, gate: "design", manifestHash: pending, approver: "lee", reviewId: 501, commit: H },
    ]);
    sim.expectAccepted(sim.send(events[0]!));
    expect(checkStates(sim.snapshot)[0]).toMatchObject({ name: "consort/design", status: "success" });
  });

  it("a self-approval yields no event, and the decision names why the review does not count", () => {
    const { sim, ctx } = atDesignGate();
    const selfApproval = { ...ctx, approvers: ApproversConfig.parse({ users: ["lee", "dana"] }) };
    const decision = gateApproval([review({ id: 9, user: "dana" })], {
      ...selfApproval,
      reviewers: new Map([["dana", writer]]),
    });
    expect(approvalEvents(sim.snapshot, [decision], at)).toEqual([]);
    expect(decision.decisions.map((d) => [d.user, d.reasons])).toEqual([
      ["dana", ["dana authored 2222222 under approval and cannot approve their own work"]],
    ]);
  });

  it("an approval of a manifest the gate is no longer pending on yields no event", () => {
    const { sim } = atDesignGate();
    const stale = gateApproval([review()], context());
    expect(stale.approvals).toHaveLength(1);
    expect(approvalEvents(sim.snapshot, [stale], at)).toEqual([]);
  });

  it("a gate already approved is not approved again", () => {
    const { sim, ctx } = atDesignGate();
    const decision = gateApproval([review()], ctx);
    sim.expectAccepted(sim.send(approvalEvents(sim.snapshot, [decision], at)[0]!));
    expect(approvalEvents(sim.snapshot, [decision], at)).toEqual([]);
  });
});

describe("reading CODEOWNERS", () => {
  it("skips comments, keeps escaped # patterns, and lets a rule with no owners unown a path", () => {
    const rules = parseCodeowners(
      "# owners\n*       @acme/everyone  # default\n\\#notes @sam\n/docs/*  docs@acme.test\n/docs/generated/\n",
    );
    expect(rules).toEqual([
      { pattern: "*", owners: ["@acme/everyone"], line: 2 },
      { pattern: "#notes", owners: ["@sam"], line: 3 },
      { pattern: "/docs/*", owners: ["docs@acme.test"], line: 4 },
      { pattern: "/docs/generated/", owners: [], line: 5 },
    ]);
    expect(ownersOf(rules, "docs/intro.md")).toEqual(["docs@acme.test"]);
    expect(ownersOf(rules, "docs/deep/intro.md")).toEqual(["@acme/everyone"]);
    expect(ownersOf(rules, "docs/generated/api.md")).toEqual([]);
    expect(ownersOf(rules, "src/.consort-like/file")).toEqual(["@acme/everyone"]);
  });
});

describe("the approver played no part in the work under approval", () => {
  const dana = [{ sha: "2".repeat(40), authorLogin: "dana" }];
  const reasons = (ctx: ApprovalContext) => gateApproval([review()], ctx).decisions[0]!.reasons;

  it("a reviewer who committed a commit under approval (but did not author it) does not count", () => {
    expect(reasons(context({ commits: [{ ...dana[0]!, committerLogin: "LEE" }] }))).toEqual([
      "lee committed 2222222 under approval and cannot approve their own work",
    ]);
  });

  it("a reviewer named as a co-author of a commit under approval does not count", () => {
    expect(reasons(context({ commits: [{ ...dana[0]!, coAuthors: ["Lee"] }] }))).toEqual([
      "lee is a co-author of 2222222 under approval and cannot approve their own work",
    ]);
  });

  it("a reviewer Consort recorded as the author or pusher of the gate's steps does not count", () => {
    expect(reasons(context({ commits: dana, recordedAuthors: ["spec-bot[bot]", "Lee"] }))).toEqual([
      "lee authored or pushed steps Consort recorded for the design gate under approval and cannot approve their own work",
    ]);
  });

  it("every part a reviewer played is named", () => {
    const own = [{ sha: "3".repeat(40), authorLogin: "lee", committerLogin: "lee", coAuthors: ["lee"] }];
    expect(reasons(context({ commits: own, recordedAuthors: ["lee"] }))).toEqual([
      "lee authored 3333333; committed 3333333; is a co-author of 3333333; authored or pushed steps Consort recorded for the design gate under approval and cannot approve their own work",
    ]);
  });
});
