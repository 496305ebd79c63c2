import type { ConsortConfig } from "../config/consort-config.js";
import type { CommitUnderApproval, GateReview, ReviewerFacts, ReviewState } from "../gates/approval.js";
import { standingReviews } from "../gates/approval.js";
import { githubMessage, type GitHubClient, type RepoRef } from "./client.js";
import { consortOwners, type CodeownersRule } from "../gates/codeowners.js";
import { collaboratorPermission, isTeamMember } from "./permissions.js";

/** Fetching the facts the approval rules need. Every fetch fails loudly; the gate then fails. */

const REVIEW_STATES: ReviewState[] = ["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"];

function reviewState(raw: string): ReviewState {
  const upper = raw.toUpperCase() as ReviewState;
  // An unknown state never approves: treat it as a comment.
  return REVIEW_STATES.includes(upper) ? upper : "COMMENTED";
}

interface RawReview {
  id: number;
  user: { login: string } | null;
  state: string;
  commit_id: string | null;
  submitted_at?: string | null;
}

/** A review from the REST listing or a `pull_request_review` payload (whose states are lower-case). */
export function toGateReview(review: RawReview): GateReview {
  return {
    id: review.id,
    user: review.user?.login ?? null,
    state: reviewState(review.state),
    commitId: review.commit_id,
    submittedAt: review.submitted_at ?? null,
  };
}

/** Every review of a pull request, oldest first (`GET /repos/{o}/{r}/pulls/{n}/reviews`). */
export async function listGateReviews(octokit: GitHubClient, repo: RepoRef, pullNumber: number): Promise<GateReview[]> {
  const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, {
    owner: repo.owner,
    repo: repo.repo,
    pull_number: pullNumber,
    per_page: 100,
  });
  return reviews.map((r) => toGateReview(r as RawReview));
}

/** How a review came to be dismissed, from the PR's `review_dismissed` issue event. */
export interface Dismissal {
  /** GitHub dismissed it because a push made it stale ("dismiss stale approvals"), not a person. */
  onPush: boolean;
  /** Who GitHub names as having dismissed it. */
  by: string | null;
  message: string | null;
}

/**
 * How review `reviewId` of a pull request was dismissed (`GET /repos/{o}/{r}/issues/{n}/events`).
 * A person's dismissal always carries a message (GitHub requires one); GitHub's own dismissal of a
 * stale review names the commit whose push made it stale and has none. Undefined when no such
 * event is listed: the caller then treats it as a person's dismissal (fail closed).
 */
export async function dismissalOf(
  octokit: GitHubClient,
  repo: RepoRef,
  pullNumber: number,
  reviewId: number,
): Promise<Dismissal | undefined> {
  const events = await octokit.paginate(octokit.rest.issues.listEvents, {
    owner: repo.owner,
    repo: repo.repo,
    issue_number: pullNumber,
    per_page: 100,
  });
  for (const event of events.toReversed()) {
    if (event.event !== "review_dismissed" || !("dismissed_review" in event)) continue;
    const dismissed = event.dismissed_review as
      { review_id?: number; dismissal_message?: string | null; dismissal_commit_id?: string | null } | undefined;
    if (dismissed?.review_id !== reviewId) continue;
    const message = dismissed.dismissal_message ?? null;
    return {
      onPush: Boolean(dismissed.dismissal_commit_id) && !message,
      by: event.actor?.login ?? null,
      message,
    };
  }
  return undefined;
}

/** GitHub lists at most 250 commits of a pull request. */
const MAX_PULL_COMMITS = 250;

/** A login GitHub's no-reply address names: `login@users.noreply.github.com` or `12345+login@…`. */
const NOREPLY = /^(?:\d+\+)?([A-Za-z0-9](?:[A-Za-z0-9-]|\[bot\])*)@users\.noreply\.github\.com$/i;

/**
 * Who a commit message's `Co-authored-by: Name <email>` lines name: the login of a GitHub no-reply
 * address, and the name as written (so a co-author named like the reviewer's login counts too).
 * Every line is read, not only the last paragraph: for this rule, more matches only shut the gate.
 */
export function coAuthorsOf(message: string): string[] {
  const found: string[] = [];
  for (const line of message.split(/\r?\n/)) {
    const match = /^\s*co-authored-by\s*:\s*(.*?)\s*(?:<([^>]*)>)?\s*$/i.exec(line);
    if (!match) continue;
    const login = NOREPLY.exec(match[2]?.trim() ?? "")?.[1];
    for (const who of [login, match[1]]) if (who && !found.includes(who)) found.push(who);
  }
  return found;
}

/**
 * The commits of a pull request with their authors', committers' and co-authors' logins. More than
 * GitHub will list cannot be checked for self-approval, so that throws instead of deciding on part
 * of the history.
 */
export async function listCommitsUnderApproval(
  octokit: GitHubClient,
  repo: RepoRef,
  pullNumber: number,
): Promise<CommitUnderApproval[]> {
  const commits = await octokit.paginate(octokit.rest.pulls.listCommits, {
    owner: repo.owner,
    repo: repo.repo,
    pull_number: pullNumber,
    per_page: 100,
  });
  if (commits.length >= MAX_PULL_COMMITS) {
    throw new Error(
      `Pull request #${pullNumber} has ${MAX_PULL_COMMITS} or more commits; GitHub lists no more, so self-approval cannot be ruled out. Squash the track's history.`,
    );
  }
  return commits.map((c) => ({
    sha: c.sha,
    authorLogin: c.author?.login ?? null,
    committerLogin: c.committer?.login ?? null,
    coAuthors: coAuthorsOf(c.commit?.message ?? ""),
  }));
}

/** The teams (`org/slug`) whose membership decides who approves: configured ones and team owners of `.consort/`. */
export function teamsThatMatter(
  approvers: ConsortConfig["approvers"],
  org: string,
  codeowners: CodeownersRule[] | undefined,
): string[] {
  const teams = approvers.teams.map((slug) => (slug.includes("/") ? slug : `${org}/${slug}`));
  if (approvers.codeowners && codeowners) {
    for (const owner of consortOwners(codeowners))
      if (owner.startsWith("@") && owner.includes("/")) teams.push(owner.slice(1));
  }
  return [...new Set(teams.map((t) => t.toLowerCase()))].sort();
}

/**
 * Permission and team membership of the reviewers whose standing review is an approval (the
 * others cannot count, so they cost no requests).
 */
export async function collectReviewerFacts(
  octokit: GitHubClient,
  repo: RepoRef,
  reviews: GateReview[],
  teams: string[],
): Promise<Map<string, ReviewerFacts>> {
  const approvers = standingReviews(reviews)
    .filter((r) => r.state === "APPROVED")
    .map((r) => r.user!);
  const facts = new Map<string, ReviewerFacts>();
  for (const login of approvers) {
    const permission = await collaboratorPermission(octokit, repo.owner, repo.repo, login);
    const member: string[] = [];
    for (const team of teams) {
      const [org, slug] = team.split("/") as [string, string];
      try {
        if (await isTeamMember(octokit, org, slug, login)) member.push(team);
      } catch (error) {
        throw new Error(
          `Could not check @${team} membership of ${login}: ${githubMessage(error)} (the app needs organization members: read)`,
          { cause: error },
        );
      }
    }
    facts.set(login, { permission, teams: member });
  }
  return facts;
}
