import type { ConsortConfig } from "../config/consort-config.js";
import { consortOwners, type CodeownersRule } from "./codeowners.js";
import { canWrite, type Permission } from "./permissions.js";
import { GATE_NAMES, type GateName } from "../contracts/gates.js";
import type { ApprovalRecord, TrackEvent, TrackSnapshot } from "../contracts/track.js";

/**
 * Gate approvals (docs/ARCHITECTURE.md, Gates), decided purely from facts the caller fetched. An approval counts
 * only if ALL hold:
 *   1. the review is APPROVED (a dismissed review withdraws it);
 *   2. the reviewer has write, maintain or admin permission;
 *   3. the reviewer is a configured approver (user or team) or a CODEOWNER of `.consort/`;
 *   4. the reviewer is none of the authors, committers or co-authors of the commits under approval
 *      and none of the identities Consort recorded for the gate's steps (their authors and pushers);
 *   5. the reviewed commit's frozen manifest hash equals the pending one.
 * Anything unknown fails its rule, with the reason: a gate never passes on missing facts.
 */

export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";

/** A PR review as the gate sees it (from the API listing or a `pull_request_review` payload). */
export interface GateReview {
  id: number;
  /** The reviewer's login; null for a deleted account. */
  user: string | null;
  state: ReviewState;
  /** The commit the review was submitted on. */
  commitId: string | null;
  submittedAt: string | null;
}

/** What the API said about a reviewer. */
export interface ReviewerFacts {
  permission: Permission;
  /** Teams (as `org/slug`) the reviewer is an active member of, among those that matter here. */
  teams: string[];
}

export interface CommitUnderApproval {
  sha: string;
  /** The GitHub login of the commit's author; null when the author e-mail maps to no account. */
  authorLogin: string | null;
  /** The GitHub login of the commit's committer, when GitHub maps one. */
  committerLogin?: string | null;
  /** Who the commit's `Co-authored-by:` trailers name: logins, or names where no login is known. */
  coAuthors?: string[];
}

export interface ApprovalContext {
  gate: GateName;
  /** The repository owner: the organisation of configured team slugs. */
  org: string;
  /** The frozen manifest hash awaiting approval; undefined when nothing is pending. */
  pendingHash: string | undefined;
  /** The gate's manifest hash at each commit the caller could compute it for. */
  hashAtCommit: ReadonlyMap<string, string>;
  approvers: ConsortConfig["approvers"];
  /** CODEOWNERS rules from the DEFAULT branch; undefined when the repository has none. */
  codeowners: CodeownerRules | undefined;
  commits: CommitUnderApproval[];
  /**
   * The identities Consort recorded for the gate's steps when it accepted them: each commit's
   * author and the pusher GitHub named (`sender`, which a commit cannot forge). None may approve.
   */
  recordedAuthors: readonly string[];
  /** Facts per reviewer login (any case). A reviewer missing here fails the permission rule. */
  reviewers: ReadonlyMap<string, ReviewerFacts>;
}
type CodeownerRules = CodeownersRule[];

type ApprovalRule = "approved-state" | "write-access" | "approver" | "not-an-author" | "frozen-hash";

interface RuleResult {
  rule: ApprovalRule;
  ok: boolean;
  detail: string;
}

export interface ApprovalDecision {
  counts: boolean;
  reviewId: number;
  user: string | null;
  commit: string | null;
  hash: string | undefined;
  at: string | null;
  /** Every rule, passed or failed, in order. */
  rules: RuleResult[];
  /** The failed rules' details: why the review does not count. */
  reasons: string[];
}

const lower = (s: string) => s.toLowerCase();
const short = (sha: string) => sha.slice(0, 7);

function facts(ctx: ApprovalContext, user: string): ReviewerFacts | undefined {
  for (const [login, value] of ctx.reviewers) if (lower(login) === lower(user)) return value;
  return undefined;
}

/** What `user` did to the work under approval, one phrase per part they played; empty when nothing. */
function ownWork(ctx: ApprovalContext, user: string): string[] {
  const is = (login: string | null | undefined) => login != null && lower(login) === lower(user);
  const shas = (pick: (c: CommitUnderApproval) => boolean) =>
    ctx.commits
      .filter(pick)
      .map((c) => short(c.sha))
      .join(", ");
  const parts = [
    ["authored", shas((c) => is(c.authorLogin))],
    ["committed", shas((c) => is(c.committerLogin))],
    ["is a co-author of", shas((c) => (c.coAuthors ?? []).some(is))],
  ]
    .filter(([, list]) => list !== "")
    .map(([verb, list]) => `${verb} ${list}`);
  if (ctx.recordedAuthors.some(is)) parts.push(`authored or pushed steps Consort recorded for the ${ctx.gate} gate`);
  return parts;
}

/** Why `user` is an approver, or undefined. */
function approverBasis(ctx: ApprovalContext, user: string, reviewer: ReviewerFacts | undefined): string | undefined {
  const teams = new Set((reviewer?.teams ?? []).map(lower));
  if (ctx.approvers.users.some((u) => lower(u) === lower(user))) return `listed in approvers.users`;
  const team = ctx.approvers.teams.find((slug) => teams.has(lower(slug.includes("/") ? slug : `${ctx.org}/${slug}`)));
  if (team) return `member of approvers team @${team.includes("/") ? team : `${ctx.org}/${team}`}`;
  if (ctx.approvers.codeowners && ctx.codeowners) {
    for (const owner of consortOwners(ctx.codeowners)) {
      if (!owner.startsWith("@")) continue;
      const name = lower(owner.slice(1));
      if (name.includes("/") ? teams.has(name) : name === lower(user)) return `CODEOWNER of .consort/ (${owner})`;
    }
  }
  return undefined;
}

function noApproversHint(ctx: ApprovalContext): string {
  const sources = [
    ctx.approvers.users.length ? `approvers.users (${ctx.approvers.users.join(", ")})` : undefined,
    ctx.approvers.teams.length ? `approvers.teams (${ctx.approvers.teams.join(", ")})` : undefined,
    ctx.approvers.codeowners ? (ctx.codeowners ? "the CODEOWNERS of .consort/" : undefined) : undefined,
  ].filter(Boolean);
  if (sources.length === 0)
    return "no approvers are configured: set approvers in .github/consort.yml on the default branch, or add a CODEOWNERS rule for .consort/";
  return `approvers are ${sources.join(", ")}`;
}

/** Whether one review counts as an approval of the pending gate, with every rule's result. */
export function approvalCounts(review: GateReview, ctx: ApprovalContext): ApprovalDecision {
  const rules: RuleResult[] = [];
  const who = review.user ?? "a deleted user";
  const add = (rule: ApprovalRule, ok: boolean, detail: string) => rules.push({ rule, ok, detail });

  if (review.state === "APPROVED" && !review.submittedAt)
    add("approved-state", false, `${who}'s review ${review.id} has no submission time (not submitted yet)`);
  else if (review.state === "APPROVED") add("approved-state", true, `review ${review.id} is APPROVED`);
  else if (review.state === "DISMISSED")
    add("approved-state", false, `${who}'s review ${review.id} was dismissed, which withdraws the approval`);
  else add("approved-state", false, `${who}'s review ${review.id} is ${review.state}, not APPROVED`);

  const reviewer = review.user ? facts(ctx, review.user) : undefined;
  if (!review.user) add("write-access", false, "the reviewer's account no longer exists");
  else if (!reviewer)
    add("write-access", false, `${who}'s permission on the repository is unknown, so the review cannot count`);
  else if (!canWrite(reviewer.permission))
    add("write-access", false, `${who} has ${reviewer.permission} permission; approvals need write, maintain or admin`);
  else add("write-access", true, `${who} has ${reviewer.permission} permission`);

  const basis = review.user ? approverBasis(ctx, review.user, reviewer) : undefined;
  if (basis) add("approver", true, `${who} is an approver: ${basis}`);
  else add("approver", false, `${who} is not an approver for the ${ctx.gate} gate: ${noApproversHint(ctx)}`);

  if (ctx.commits.length === 0) {
    add(
      "not-an-author",
      false,
      "the commits under approval are unknown, so it cannot be shown the reviewer wrote none of them",
    );
  } else {
    const unknown = ctx.commits.filter((c) => c.authorLogin === null);
    const own = review.user ? ownWork(ctx, review.user) : [];
    if (own.length > 0)
      add("not-an-author", false, `${who} ${own.join("; ")} under approval and cannot approve their own work`);
    else if (unknown.length > 0) {
      add(
        "not-an-author",
        false,
        `commit ${unknown.map((c) => short(c.sha)).join(", ")} has no GitHub author, so it cannot be shown that ${who} did not write it`,
      );
    } else
      add(
        "not-an-author",
        true,
        `${who} authored, committed, co-authored and pushed none of the ${ctx.commits.length} commit(s) under approval`,
      );
  }

  const hash = review.commitId ? ctx.hashAtCommit.get(review.commitId) : undefined;
  if (!ctx.pendingHash) add("frozen-hash", false, `the ${ctx.gate} gate has nothing pending approval`);
  else if (!review.commitId) add("frozen-hash", false, `review ${review.id} names no commit`);
  else if (hash === undefined)
    add(
      "frozen-hash",
      false,
      `the frozen manifest hash at ${short(review.commitId)} is unknown, so the review cannot be tied to the pending files`,
    );
  else if (hash !== ctx.pendingHash) {
    add(
      "frozen-hash",
      false,
      `the review is on ${short(review.commitId)} whose frozen hash ${short(hash)} is not the pending ${short(ctx.pendingHash)}: the files changed since; approve again`,
    );
  } else add("frozen-hash", true, `the review is on ${short(review.commitId)} at the pending hash ${short(hash)}`);

  const reasons = rules.filter((r) => !r.ok).map((r) => r.detail);
  return {
    counts: reasons.length === 0,
    reviewId: review.id,
    user: review.user,
    commit: review.commitId,
    hash,
    at: review.submittedAt,
    rules,
    reasons,
  };
}

/**
 * The commit each review is bound to, and may count for: the commit of its first approval Consort
 * recorded (any gate), else `given` (the commit its own review event named). GitHub may later move
 * a standing review's `commit_id` (onto a merge of the base), and an approval covers only what its
 * reviewer saw: a moved commit never extends it.
 */
export function reviewBindings(
  snapshot: TrackSnapshot,
  given?: { reviewId: number; commit: string },
): Map<number, string> {
  const bound = new Map<number, string>();
  const recorded = GATE_NAMES.flatMap((gate) => snapshot.context.gates[gate].approvals).sort((a, b) =>
    a.at.localeCompare(b.at),
  );
  for (const approval of recorded) if (!bound.has(approval.reviewId)) bound.set(approval.reviewId, approval.commit);
  if (given && !bound.has(given.reviewId)) bound.set(given.reviewId, given.commit);
  return bound;
}

/** The reviews with each bound one on the commit it is bound to, whatever GitHub lists now. */
export function boundReviews(reviews: GateReview[], bound: ReadonlyMap<number, string>): GateReview[] {
  return reviews.map((review) => {
    const commit = bound.get(review.id);
    return commit === undefined ? review : { ...review, commitId: commit };
  });
}

/**
 * Each reviewer's standing review: their latest APPROVED, CHANGES_REQUESTED or DISMISSED one
 * (a comment changes nothing, as on GitHub). Reviews are ordered by submission, then id.
 */
export function standingReviews(reviews: GateReview[]): GateReview[] {
  const decisive = reviews
    .filter(
      (r) => r.user !== null && (r.state === "APPROVED" || r.state === "CHANGES_REQUESTED" || r.state === "DISMISSED"),
    )
    .sort((a, b) => (a.submittedAt ?? "").localeCompare(b.submittedAt ?? "") || a.id - b.id);
  const latest = new Map<string, GateReview>();
  for (const review of decisive) latest.set(lower(review.user!), review);
  return [...latest.values()];
}

export interface GateDecision {
  gate: GateName;
  approved: boolean;
  pendingHash: string | undefined;
  required: number;
  /** Approvals that count, in the track's own record of them, standing reviews in order. */
  approvals: ApprovalRecord[];
  /** Every standing review's decision, counted or not. */
  decisions: ApprovalDecision[];
  /** One line for a check run title. */
  summary: string;
}

/** Decide a gate from all of a PR's reviews: approved when `required` standing reviews count. */
export function gateApproval(reviews: GateReview[], ctx: ApprovalContext, required = 1): GateDecision {
  const decisions = standingReviews(reviews).map((review) => approvalCounts(review, ctx));
  const counted = decisions.filter((d) => d.counts);
  const approvals: ApprovalRecord[] = counted.map((d) => ({
    approver: d.user!,
    reviewId: d.reviewId,
    commit: d.commit!,
    manifestHash: d.hash!,
    at: d.at!,
  }));
  const approved = ctx.pendingHash !== undefined && counted.length >= required;
  let summary: string;
  if (!ctx.pendingHash) summary = `The ${ctx.gate} gate has nothing pending approval`;
  else if (approved)
    summary = `Approved by ${approvals.map((a) => `@${a.approver}`).join(", ")} at ${short(ctx.pendingHash)}`;
  else if (decisions.length === 0)
    summary = `Waiting for an approving review at ${short(ctx.pendingHash)} (${noApproversHint(ctx)})`;
  else summary = `Waiting: ${counted.length} of ${required} approval(s) count at ${short(ctx.pendingHash)}`;
  return { gate: ctx.gate, approved, pendingHash: ctx.pendingHash, required, approvals, decisions, summary };
}

/**
 * The machine events for what these decisions approve: for each gate, the first approval that
 * counts at the hash the gate is pending on in `snapshot` (the state as written now: the pending
 * hash may have moved since the facts were fetched). A gate already approved is left alone.
 */
export function approvalEvents(
  snapshot: TrackSnapshot,
  decisions: GateDecision[],
  at: string,
): Array<Extract<TrackEvent, { type: "gate.approved" }>> {
  return decisions.flatMap((decision) => {
    const record = snapshot.context.gates[decision.gate];
    if (record.status === "approved") return [];
    const approval = decision.approvals.find((a) => a.manifestHash === record.pendingHash);
    if (!approval) return [];
    return [
      {
        type: "gate.approved",
        at,
        gate: decision.gate,
        manifestHash: approval.manifestHash,
        approver: approval.approver,
        reviewId: approval.reviewId,
        commit: approval.commit,
      },
    ];
  });
}
