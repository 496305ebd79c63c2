import { zipSync, strToU8 } from "fflate";
import nock from "nock";
import { contentsBody, GitHubMock, TEST_APP_ID, type RecordedRequest } from "../../helpers/github.js";
import { CHECK_NAMES } from "../../../src/contracts/gates.js";
import type { GitIdentity, GitRepo } from "./git-repo.js";

/**
 * A GitHub that remembers. Built on GitHubMock, so every request the app makes is still checked
 * against GitHub's REST description and any request nothing here answers is a violation; on top,
 * it KEEPS what the app wrote and answers reads from it: the git data of every branch (a real git
 * repository, so `consort/state` compare-and-swap is a real non-fast-forward refusal), check
 * runs per head sha, issue comments, reviews, collaborator permissions, workflow dispatches with
 * run ids, runs and their artifacts (real zips), rulesets. A scenario asserts the end state.
 */

type Reply = [status: number, body?: unknown, headers?: Record<string, string>];

export interface CheckRun {
  id: number;
  name: string;
  head_sha: string;
  /** The run's `run-name` as GitHub rendered it from the workflow file at the dispatched ref. */
  display_title?: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  output: { title?: string; summary?: string; text?: string };
  actions: Array<{ label: string; description: string; identifier: string }>;
  app_id: number;
  /** The `started_at` and `external_id` the run was created with, if any. */
  started_at?: string;
  external_id?: string;
  /** Every write, oldest first: create, then each update. */
  history: Array<{ status: string; conclusion: string | null; title: string | undefined }>;
}

export interface IssueComment {
  id: number;
  issue_number: number;
  body: string;
  login: string;
  app_id: number | null;
}

export interface Review {
  id: number;
  pull_number: number;
  login: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED";
  commit_id: string;
  submitted_at: string;
}

/** A `review_dismissed` issue event: a person's (with a message) or GitHub's own on push (with the commit). */
export interface IssueEvent {
  id: number;
  issue_number: number;
  reviewId: number;
  actor: string;
  message: string | null;
  commitId: string | null;
}

export interface Pull {
  number: number;
  head: string;
  base: string;
  author: string;
  state: "open" | "closed";
  merged: boolean;
  merge_commit_sha: string | null;
}

/** A merge queue's group for one PR (GitHub's merge_group: head and base sha and ref). */
export interface MergeGroup {
  pull: number;
  branch: string;
  headSha: string;
  baseSha: string;
  baseRef: string;
}

export interface Dispatch {
  workflow: string;
  ref: string;
  /** The parsed `request` input. */
  request: unknown;
  runId: number;
}

export interface WorkflowRun {
  id: number;
  path: string;
  event: string;
  head_branch: string;
  head_sha: string;
  /** The run's `run-name` as GitHub rendered it from the workflow file at the dispatched ref. */
  display_title?: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  /** Who started the run: the app's bot for its own dispatches (the installation token's actor), a person for a run by hand. */
  actor: string;
  /** Who started this attempt: the actor, or the person who re-ran it. */
  triggering_actor: string;
  artifacts: Array<{ id: number; name: string; zip: Uint8Array; expired: boolean }>;
}

/** One webhook delivery as GitHub's deliveries API lists it (`hook-delivery-item`). */
export interface HookDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  duration: number;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
}

export interface WorldSnapshot {
  refs: Array<[string, string]>;
  checkRuns: CheckRun[];
  comments: IssueComment[];
  reviews: Review[];
  issueEvents?: IssueEvent[];
  pulls: Pull[];
  dispatches: Dispatch[];
  runs: WorkflowRun[];
  rulesets: unknown[];
  permissions: Array<[string, string]>;
  nextId: number;
}

export interface WorldOptions {
  owner?: string;
  repo?: string;
  repositoryId?: number;
  defaultBranch?: string;
  installationId?: number;
  appId?: number;
  /** The API's origin; worlds of several repositories in one process each answer on their own (the soak's). */
  apiUrl?: string;
}

const SLUG = "consort";
/** GitHub's secondary limit on content-creating requests, per installation and minute. */
const SECONDARY_LIMIT_PER_MINUTE = 80;
/**
 * What one delivery may write: six tracks of an installation each taking a step in the same
 * minute fit under that limit. A step on a new head writes its state, the checks that say
 * something, the comment and a dispatch: up to 10; the step that ends a unit writes its state and
 * the unit's record in one Git Data commit (tree, commit, ref: two more), so up to 12; a re-seal
 * as much.
 */
const WRITES_PER_DELIVERY = Math.floor(SECONDARY_LIMIT_PER_MINUTE / 6);
/** Where GitHub's artifact download redirects to: a short-lived blob URL on another host. */
const ARTIFACT_BLOB_ORIGIN = "https://productionresultssa0.blob.core.windows.net";
const APP_BOT_LOGIN = `${SLUG}[bot]`;
/** When GitHub checked the signatures of the commits it signed (the scenarios' commits share one date). */
const FIXED_VERIFIED_AT = "2026-03-01T12:00:00Z";

export class GitHubWorld {
  mock: GitHubMock;
  readonly owner: string;
  readonly name: string;
  readonly repositoryId: number;
  readonly defaultBranch: string;
  readonly installationId: number;
  readonly appId: number;
  readonly apiUrl: string | undefined;
  /** The app's bot, as GET /app names it (`<slug>[bot]`): the author of what the app writes through the API. */
  readonly appLogin = APP_BOT_LOGIN;

  readonly checkRuns: CheckRun[] = [];
  readonly comments: IssueComment[] = [];
  readonly reviews: Review[] = [];
  readonly pulls: Pull[] = [];
  readonly dispatches: Dispatch[] = [];
  readonly issueEvents: IssueEvent[] = [];
  /**
   * Classic branch protection's "Dismiss stale pull request approvals when new commits are pushed"
   * on the default branch; a ruleset's `dismiss_stale_reviews_on_push` asks for the same.
   */
  dismissStaleReviewsOnPush = false;
  readonly runs = new Map<number, WorkflowRun>();
  readonly rulesets: unknown[] = [];
  /** `org/slug` (lower case) → the logins that are active members of that team; a team not here has none. */
  readonly teams = new Map<string, Set<string>>();
  /** login → permission (admin, maintain, write, triage, read); anyone else is not a collaborator. */
  readonly permissions = new Map<string, string>();
  /** Answers a test queued for the next matching request, before the world's own (e.g. a 500). */
  private readonly faults: Array<{ method: string; path: RegExp; reply: Reply; times: number }> = [];
  private nextId = 1000;
  /** Time spent answering requests (ms): the double's own cost, to keep it small. */
  busyMs = 0;
  /**
   * GitHub's secondary limit, per installation: about 80 content-creating requests (POST, PATCH,
   * PUT, DELETE) a minute. Six tracks of one installation each making a step in the same minute
   * must stay under it, so each delivery gets WRITES_PER_DELIVERY of them; deliveries in flight at
   * once share their budgets. A write past the budget is refused as GitHub refuses it (403
   * "secondary rate limit") and is a violation, so a scenario fails when the app writes too much.
   */
  readonly writeBudget = { inFlight: 0, budget: 0, used: 0, most: 0 };
  /**
   * The commits GitHub itself made and signed: the app's API writes (a Contents API PUT, a Git Data
   * commit with no author, committer or signature of its own) and merges of PRs. The commit API
   * shows them `verified`; anything pushed with git is `unsigned`.
   */
  private readonly signed = new Set<string>();

  constructor(
    readonly git: GitRepo,
    options: WorldOptions = {},
  ) {
    this.owner = options.owner ?? "acme";
    this.name = options.repo ?? "stockflow";
    this.repositoryId = options.repositoryId ?? 424242;
    this.defaultBranch = options.defaultBranch ?? "main";
    this.installationId = options.installationId ?? 77;
    this.appId = options.appId ?? TEST_APP_ID;
    this.apiUrl = options.apiUrl;
    this.mock = this.attach();
  }

  /** A GitHubMock answering from this world (again after `nock.cleanAll`, e.g. in a new test). */
  private attach(): GitHubMock {
    const mock = new GitHubMock(this.apiUrl);
    const world = this; // eslint-disable-line @typescript-eslint/no-this-alias
    mock.on(
      "POST",
      new RegExp(`^/app/installations/${this.installationId}/access_tokens$`),
      () => [
        201,
        { token: "ghs_e2e", expires_at: "2099-01-01T00:00:00Z", permissions: {}, repository_selection: "all" },
      ],
      Infinity,
    );
    this.attachDeliveries(mock);
    const prefix = `/repos/${this.owner}/${this.name}`;
    for (const method of ["GET", "POST", "PATCH", "PUT", "DELETE"]) {
      mock.on(
        method,
        new RegExp(`^${escape(prefix)}(/.*)?$`),
        (request) => this.timed(() => this.answer(request, request.path.slice(prefix.length))),
        Infinity,
      );
      mock.on(method, /^\/orgs\//, (request) => this.answerOrg(request), Infinity);
    }
    // The blob store behind the 302: it serves the zip to whoever holds the signed URL, and a
    // client that forwards its GitHub token there is doing what GitHub says it must not.
    nock(ARTIFACT_BLOB_ORIGIN)
      .persist()
      .get(/^\/actions-results\/\d+\.zip/)
      .reply(function (uri) {
        if (this.req.headers.authorization)
          mock.violations.push(`GET ${ARTIFACT_BLOB_ORIGIN}${uri}: the GitHub Authorization header was forwarded`);
        const id = Number(/(\d+)\.zip/.exec(uri)![1]);
        const artifact = [...world.runs.values()].flatMap((r) => r.artifacts).find((a) => a.id === id);
        if (!artifact) return [404, "BlobNotFound"];
        return [200, Buffer.from(artifact.zip), { "content-type": "application/zip" }];
      });
    return mock;
  }

  /** Everything the world holds, to come back to (a scenario forks from a shared starting point). */
  save(): WorldSnapshot {
    return structuredClone({
      refs: this.git.saveRefs(),
      checkRuns: this.checkRuns,
      comments: this.comments,
      reviews: this.reviews,
      issueEvents: this.issueEvents,
      pulls: this.pulls,
      dispatches: this.dispatches,
      runs: [...this.runs.values()],
      rulesets: this.rulesets,
      permissions: [...this.permissions],
      nextId: this.nextId,
    });
  }

  /** Go back to a saved world, with a fresh mock (nock interceptors do not outlive a test). */
  restore(saved: WorldSnapshot): void {
    const copy = structuredClone(saved);
    this.git.restoreRefs(copy.refs);
    const refill = <T>(target: T[], items: T[]) => target.splice(0, target.length, ...items);
    refill(this.checkRuns, copy.checkRuns);
    refill(this.comments, copy.comments);
    refill(this.reviews, copy.reviews);
    refill(this.issueEvents, copy.issueEvents ?? []);
    refill(this.pulls, copy.pulls);
    refill(this.dispatches, copy.dispatches);
    refill(this.rulesets, copy.rulesets);
    this.runs.clear();
    for (const run of copy.runs) this.runs.set(run.id, run);
    this.permissions.clear();
    for (const [login, permission] of copy.permissions) this.permissions.set(login, permission);
    this.nextId = copy.nextId;
    this.faults.length = 0;
    this.contentsFaults.length = 0;
    this.accessLost = false;
    this.mock.dispose();
    this.mock = this.attach();
  }

  get fullName(): string {
    return `${this.owner}/${this.name}`;
  }

  /** The payload `repository` object GitHub sends with every event of this repository. */
  repositoryPayload(): Record<string, unknown> {
    return {
      id: this.repositoryId,
      node_id: "R_e2e",
      name: this.name,
      full_name: this.fullName,
      private: false,
      owner: { login: this.owner, id: 1, type: "Organization" },
      html_url: `https://github.com/${this.fullName}`,
      default_branch: this.defaultBranch,
    };
  }

  /** Make the next `times` requests matching `method path` fail with `reply` (a transient fault). */
  failNext(method: string, path: RegExp, reply: Reply, times = 1): void {
    this.faults.push({ method: method.toUpperCase(), path, reply, times });
  }

  dispose(): void {
    this.mock.dispose();
  }

  // ---- what a scenario reads back ---------------------------------------------------------------

  /** The newest run of each Consort check on a commit (what branch protection looks at). */
  checksOn(sha: string): Map<string, CheckRun> {
    const latest = new Map<string, CheckRun>();
    for (const run of this.checkRuns) if (run.head_sha === sha) latest.set(run.name, run);
    return latest;
  }

  check(sha: string, name: string): CheckRun {
    const run = this.checksOn(sha).get(name);
    if (!run)
      throw new Error(
        `no ${name} check run on ${sha.slice(0, 12)}; checks there: ${[...this.checksOn(sha).keys()].join(", ") || "none"}`,
      );
    return run;
  }

  /** The app's comments on a PR. */
  appComments(pullNumber: number): IssueComment[] {
    return this.comments.filter((c) => c.issue_number === pullNumber && c.app_id === this.appId);
  }

  /** The state branch's file for a track, as committed (undefined when absent). */
  stateFileText(trackId: string): string | undefined {
    const head = this.git.branchHead("consort/state");
    return head ? this.git.fileAt(head, `tracks/${trackId}.json`)?.toString("utf8") : undefined;
  }

  /** Any file on consort/state at its head (a finished unit's record, say). */
  stateBranchFile(path: string): string | undefined {
    const head = this.git.branchHead("consort/state");
    return head ? this.git.fileAt(head, path)?.toString("utf8") : undefined;
  }

  stateHead(): string | undefined {
    return this.git.branchHead("consort/state");
  }

  /** A blob's text by its git id (an earlier version of a state file that holds a unit's record inline). */
  blobText(sha: string): string | undefined {
    return this.git.objectType(sha) === "blob" ? this.git.gitWith({}, undefined, "cat-file", "blob", sha) : undefined;
  }

  // ---- scenario actions (what people and GitHub do) --------------------------------------------

  openPull(head: string, author: string, base = this.defaultBranch): Pull {
    const pull: Pull = {
      number: this.pulls.length + 1,
      head,
      base,
      author,
      state: "open",
      merged: false,
      merge_commit_sha: null,
    };
    this.pulls.push(pull);
    return pull;
  }

  pullPayload(pull: Pull): Record<string, unknown> {
    const headSha = this.git.branchHead(pull.head) ?? pull.merge_commit_sha ?? "";
    return {
      number: pull.number,
      id: 9000 + pull.number,
      html_url: `https://github.com/${this.fullName}/pull/${pull.number}`,
      state: pull.state,
      merged: pull.merged,
      merge_commit_sha: pull.merge_commit_sha,
      user: { login: pull.author, id: idOf(pull.author), type: "User" },
      head: { ref: pull.head, sha: headSha, repo: { id: this.repositoryId, full_name: this.fullName } },
      base: { ref: pull.base, sha: this.git.branchHead(pull.base)! },
    };
  }

  addReview(pull: Pull, login: string, state: Review["state"], commitId: string): Review {
    const review: Review = {
      id: this.id(),
      pull_number: pull.number,
      login,
      state,
      commit_id: commitId,
      submitted_at: "2026-03-01T12:00:00Z",
    };
    this.reviews.push(review);
    return review;
  }

  /** A person dismisses a review: GitHub requires a message, and lists a `review_dismissed` event. */
  dismissReview(review: Review, by: string, message = "Dismissed"): void {
    review.state = "DISMISSED";
    this.issueEvents.push({
      id: this.id(),
      issue_number: review.pull_number,
      reviewId: review.id,
      actor: by,
      message,
      commitId: null,
    });
  }

  /** The active rules on `branch`, as `GET /repos/{o}/{r}/rules/branches/{branch}` lists them (whether or not it exists). */
  rulesOn(branch: string): unknown[] {
    return this.rulesets.flatMap((ruleset) => {
      const r = ruleset as {
        id: number;
        enforcement?: string;
        conditions?: { ref_name?: { include?: string[]; exclude?: string[] } };
        rules?: Array<{ type: string; parameters?: Record<string, unknown> }>;
      };
      const matches = (pattern: string) =>
        pattern === "~ALL" ||
        pattern === `refs/heads/${branch}` ||
        (pattern === "~DEFAULT_BRANCH" && branch === this.defaultBranch);
      const include = r.conditions?.ref_name?.include ?? [];
      const exclude = r.conditions?.ref_name?.exclude ?? [];
      if (r.enforcement !== "active" || !include.some(matches) || exclude.some(matches)) return [];
      return (r.rules ?? []).map((rule) => ({
        ...rule,
        ruleset_source_type: "Repository",
        ruleset_source: this.fullName,
        ruleset_id: r.id,
      }));
    });
  }

  /** Whether pushes to a PR into `base` dismiss its approvals (classic protection or a ruleset asks for it). */
  dismissesStaleReviews(base: string): boolean {
    if (base === this.defaultBranch && this.dismissStaleReviewsOnPush) return true;
    return this.rulesets.some((ruleset) => {
      const r = ruleset as {
        enforcement?: string;
        conditions?: { ref_name?: { include?: string[] } };
        rules?: Array<{ type: string; parameters?: Record<string, unknown> }>;
      };
      const include = r.conditions?.ref_name?.include ?? [];
      const applies =
        include.includes(`refs/heads/${base}`) || (base === this.defaultBranch && include.includes("~DEFAULT_BRANCH"));
      return (
        r.enforcement === "active" &&
        applies &&
        (r.rules ?? []).some(
          (rule) => rule.type === "pull_request" && rule.parameters?.dismiss_stale_reviews_on_push === true,
        )
      );
    });
  }

  /**
   * What GitHub does to the open PRs from `branch` after a push to it moved the head to `head`,
   * where protection asks for stale approvals to be dismissed: each APPROVED review on an older
   * commit is DISMISSED, with an issue event naming the commit and no message. Returns those
   * reviews (GitHub then sends `pull_request_review.dismissed` for each).
   */
  dismissStaleReviews(branch: string, head: string, pusher: string): Review[] {
    const dismissed: Review[] = [];
    for (const pull of this.pulls.filter((p) => p.head === branch && p.state === "open")) {
      if (!this.dismissesStaleReviews(pull.base)) continue;
      for (const review of this.reviews) {
        if (review.pull_number !== pull.number || review.state !== "APPROVED" || review.commit_id === head) continue;
        review.state = "DISMISSED";
        this.issueEvents.push({
          id: this.id(),
          issue_number: pull.number,
          reviewId: review.id,
          actor: pusher,
          message: null,
          commitId: head,
        });
        dismissed.push(review);
      }
    }
    return dismissed;
  }

  /**
   * A commit GitHub makes for a person who edits `branch` on github.com or through the Contents API
   * with their own token: they are its author, GitHub (web-flow) its committer, and GitHub signs it.
   */
  commitAsGitHub(branch: string, author: GitIdentity, message: string, files: Record<string, string | null>): string {
    const { sha } = this.git.commitOn(branch, author, message, files, { name: "GitHub", email: "noreply@github.com" });
    this.signed.add(sha);
    return sha;
  }

  /** Merge a PR as GitHub does: a merge commit on the base branch, the PR closed. */
  merge(pull: Pull, by: string): string {
    const head = this.git.branchHead(pull.head)!;
    const base = this.git.branchHead(pull.base)!;
    const tree = this.git.commitInfo(head)!.tree;
    const merge = this.git.writeCommit(
      tree,
      [base, head],
      `Merge pull request #${pull.number} from ${this.owner}/${pull.head}\n`,
      { name: by, email: `${by}@users.noreply.github.com` },
      { name: "GitHub", email: "noreply@github.com" },
    );
    this.git.setBranch(pull.base, merge, base);
    this.signed.add(merge);
    pull.state = "closed";
    pull.merged = true;
    pull.merge_commit_sha = merge;
    return merge;
  }

  /**
   * Queue a PR as GitHub's merge queue does: a group built on `gh-readonly-queue/<base>/pr-<n>-<sha>`
   * (`sha` the base it was built on), its head a merge commit of the PR onto that base, as the
   * "Merge commit" method makes it. The scenario then delivers the branch's push and
   * `merge_group.checks_requested`.
   */
  enqueue(pull: Pull, by: string): MergeGroup {
    const head = this.git.branchHead(pull.head)!;
    const base = this.git.branchHead(pull.base)!;
    const group = this.git.writeCommit(
      this.git.commitInfo(head)!.tree,
      [base, head],
      `Merge pull request #${pull.number} from ${this.owner}/${pull.head}\n`,
      { name: by, email: `${by}@users.noreply.github.com` },
      { name: "GitHub", email: "noreply@github.com" },
    );
    this.signed.add(group);
    const branch = `gh-readonly-queue/${pull.base}/pr-${pull.number}-${base}`;
    this.git.setBranch(branch, group);
    return { pull: pull.number, branch, headSha: group, baseSha: base, baseRef: pull.base };
  }

  /**
   * The required checks the group still lacks: the queue merges only when each passes on the
   * group's head (the required status checks of the rulesets that apply, or Consort's seven).
   */
  queueWaitsFor(group: MergeGroup): string[] {
    const required = this.requiredChecks();
    const passed = this.checksOn(group.headSha);
    return required.filter((name) => passed.get(name)?.conclusion !== "success");
  }

  /** The queue merges the group: the base moves to its head, the PR closes merged, the queue branch goes. */
  mergeGroup(group: MergeGroup): void {
    const waiting = this.queueWaitsFor(group);
    if (waiting.length > 0) throw new Error(`the merge queue waits for ${waiting.join(", ")} on ${group.headSha}`);
    this.git.setBranch(group.baseRef, group.headSha, group.baseSha);
    this.git.deleteBranch(group.branch);
    const pull = this.pulls.find((p) => p.number === group.pull)!;
    pull.state = "closed";
    pull.merged = true;
    pull.merge_commit_sha = group.headSha;
  }

  /** A `merge_group` payload (GitHub's webhook schema: `merge_group` with head/base sha and ref; `reason` when destroyed). */
  mergeGroupPayload(
    group: MergeGroup,
    action: "checks_requested" | "destroyed",
    reason?: string,
  ): Record<string, unknown> {
    const info = this.git.commitInfo(group.headSha)!;
    return {
      action,
      ...(reason ? { reason } : {}),
      merge_group: {
        head_sha: group.headSha,
        head_ref: `refs/heads/${group.branch}`,
        base_sha: group.baseSha,
        base_ref: `refs/heads/${group.baseRef}`,
        head_commit: {
          id: group.headSha,
          tree_id: info.tree,
          message: info.message,
          timestamp: info.author.date,
          author: { name: info.author.name, email: info.author.email },
          committer: { name: (info.committer ?? info.author).name, email: (info.committer ?? info.author).email },
        },
      },
    };
  }

  /** The check names branch protection requires: from the rulesets' required status checks, else Consort's seven. */
  private requiredChecks(): string[] {
    const contexts = (this.rulesets as Array<{ rules?: Array<{ type: string; parameters?: any }> }>) // eslint-disable-line @typescript-eslint/no-explicit-any
      .flatMap((r) => r.rules ?? [])
      .filter((rule) => rule.type === "required_status_checks")
      .flatMap((rule) => (rule.parameters?.required_status_checks ?? []) as Array<{ context: string }>)
      .map((c) => c.context);
    return contexts.length > 0 ? [...new Set(contexts)] : [...CHECK_NAMES];
  }

  /** A run of `path` that nobody asked the app to dispatch (e.g. someone ran the workflow by hand). */
  addRun(
    run: Omit<WorkflowRun, "artifacts" | "status" | "conclusion" | "triggering_actor"> & { triggering_actor?: string },
    artifacts: Record<string, unknown> = {},
  ): WorkflowRun {
    const created: WorkflowRun = {
      triggering_actor: run.actor,
      ...run,
      status: "completed",
      conclusion: "success",
      artifacts: [],
    };
    this.runs.set(run.id, created);
    this.attachArtifact(created.id, artifacts);
    return created;
  }

  /**
   * The job of a dispatched run finished with `conclusion`: it uploaded these files (or this very
   * zip, byte for byte) as `consort-cycle-result`.
   */
  completeRun(runId: number, files: Record<string, unknown> | Uint8Array, conclusion = "success"): WorkflowRun {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no run ${runId}`);
    run.status = "completed";
    run.conclusion = conclusion;
    this.attachArtifact(runId, files);
    return run;
  }

  /** The run's artifacts passed their retention: listed as expired, and their download answers 410. */
  expireArtifacts(runId: number): void {
    for (const artifact of this.runs.get(runId)?.artifacts ?? []) artifact.expired = true;
  }

  private attachArtifact(runId: number, files: Record<string, unknown> | Uint8Array): void {
    if (files instanceof Uint8Array) {
      this.runs.get(runId)!.artifacts.push({ id: this.id(), name: "consort-cycle-result", zip: files, expired: false });
      return;
    }
    if (Object.keys(files).length === 0) return;
    const zip = zipSync(
      Object.fromEntries(
        Object.entries(files).map(([name, value]) => [
          name,
          strToU8(typeof value === "string" ? value : JSON.stringify(value, null, 2)),
        ]),
      ),
    );
    this.runs.get(runId)!.artifacts.push({ id: this.id(), name: "consort-cycle-result", zip, expired: false });
  }

  workflowRunPayload(run: WorkflowRun): Record<string, unknown> {
    return {
      id: run.id,
      name: run.path.split("/").pop(),
      path: run.path,
      event: run.event,
      status: run.status,
      conclusion: run.conclusion,
      head_branch: run.head_branch,
      head_sha: run.head_sha,
      display_title: run.display_title ?? run.path.split("/").pop(),
      html_url: `https://github.com/${this.fullName}/actions/runs/${run.id}`,
      head_repository: { id: this.repositoryId },
      repository: { id: this.repositoryId },
      actor: userOf(run.actor),
      triggering_actor: userOf(run.triggering_actor),
    };
  }

  // ---- the REST API ---------------------------------------------------------------------------

  private id(): number {
    return (this.nextId += 1);
  }

  private timed(answer: () => Reply): Reply {
    const start = performance.now();
    try {
      return answer();
    } finally {
      this.busyMs += performance.now() - start;
    }
  }

  /** A webhook delivery starts (Scenario.deliver): its writes count against the installation's limit. */
  deliveryStarted(): void {
    const w = this.writeBudget;
    if (w.inFlight === 0) Object.assign(w, { budget: 0, used: 0 });
    w.inFlight += 1;
    w.budget += WRITES_PER_DELIVERY;
  }

  deliveryEnded(): void {
    this.writeBudget.inFlight -= 1;
  }

  /** Count a content-creating request of a delivery; a refusal when it passes the budget. */
  private spendWrite(request: RecordedRequest): Reply | undefined {
    const w = this.writeBudget;
    if (request.method === "GET" || w.inFlight === 0) return undefined;
    w.used += 1;
    w.most = Math.max(w.most, w.used);
    if (w.used <= w.budget) return undefined;
    this.mock.violations.push(
      `${request.method} ${request.path}: content-creating request ${w.used} of deliveries allowed ${w.budget} (${WRITES_PER_DELIVERY} each, so six tracks of one installation stay under GitHub's ${SECONDARY_LIMIT_PER_MINUTE} a minute)`,
    );
    return [
      403,
      {
        message:
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
        documentation_url: DOCS,
      },
      { "retry-after": "60" },
    ];
  }

  private answer(request: RecordedRequest, path: string): Reply {
    if (this.accessLost) return notFound();
    const limited = this.spendWrite(request);
    if (limited) return limited;
    const fault = this.faults.find((f) => f.method === request.method && f.path.test(path) && f.times > 0);
    if (fault) {
      fault.times -= 1;
      return fault.reply;
    }
    const body = (request.body ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const route = `${request.method} ${path}`;
    let m: RegExpExecArray | null;

    // Git data
    if ((m = /^GET \/git\/ref\/(.+)$/.exec(route))) return this.getRef(decodeURIComponent(m[1]!));
    if ((m = /^GET \/git\/matching-refs\/(.+)$/.exec(route))) {
      // Every branch whose ref starts with the given one, as GitHub lists them (an empty list for none).
      const prefix = `refs/${decodeURIComponent(m[1]!)}`;
      const matching = this.git
        .saveRefs()
        .filter(([branch]) => `refs/heads/${branch}`.startsWith(prefix))
        .map(([branch, sha]) => this.refJson(`refs/heads/${branch}`, sha));
      return [200, matching];
    }
    if ((m = /^GET \/git\/commits\/([0-9a-f]{40})$/.exec(route))) return this.getCommit(m[1]!);
    if ((m = /^GET \/git\/trees\/([0-9a-f]{40})$/.exec(route)))
      return this.getTree(m[1]!, request.query.recursive !== undefined);
    if ((m = /^GET \/git\/blobs\/([0-9a-f]{40})$/.exec(route))) {
      if (this.git.objectType(m[1]!) !== "blob") return notFound();
      const content = this.git.gitWith({}, undefined, "cat-file", "blob", m[1]!);
      return [
        200,
        {
          sha: m[1],
          size: content.length,
          content: Buffer.from(content).toString("base64"),
          encoding: "base64",
          url: "",
          node_id: "",
        },
      ];
    }
    if (route === "POST /git/blobs") {
      const content = body.encoding === "base64" ? Buffer.from(String(body.content), "base64") : String(body.content);
      return [201, { sha: this.git.writeBlob(content), url: "" }];
    }
    if (route === "POST /git/trees") return this.createTree(body);
    if (route === "POST /git/commits") {
      const parents = (body.parents ?? []) as string[];
      if (this.git.objectType(String(body.tree)) !== "tree" || parents.some((p) => this.git.objectType(p) !== "commit"))
        return [422, { message: "Tree SHA does not exist" }];
      const sha = this.git.writeCommit(String(body.tree), parents, String(body.message));
      if (body.author === undefined && body.committer === undefined && body.signature === undefined)
        this.signed.add(sha);
      return [201, this.commitJson(sha)];
    }
    if (route === "POST /git/refs") return this.createRef(String(body.ref), String(body.sha));
    if ((m = /^PATCH \/git\/refs\/(.+)$/.exec(route)))
      return this.updateRef(decodeURIComponent(m[1]!), String(body.sha), body.force === true);
    if ((m = /^DELETE \/git\/refs\/heads\/(.+)$/.exec(route))) {
      if (!this.git.branchHead(decodeURIComponent(m[1]!))) return [422, { message: "Reference does not exist" }];
      this.git.deleteBranch(decodeURIComponent(m[1]!));
      return [204];
    }

    // Commits that changed a path, newest first (first-parent history from `sha`)
    if (route === "GET /commits" && request.query.path) {
      const path = request.query.path;
      const text = (sha: string | undefined) => (sha ? this.git.fileAt(sha, path)?.toString("utf8") : undefined);
      const listed: Array<Record<string, unknown>> = [];
      for (let at = this.git.resolve(request.query.sha ?? this.defaultBranch); at;) {
        const parent = this.git.commitInfo(at)?.parents[0];
        if (text(at) !== text(parent)) listed.push(this.listedCommitJson(at));
        at = parent;
      }
      return [200, page(listed, request.query)];
    }

    // Contents of files at refs
    if ((m = /^GET \/contents\/(.+)$/.exec(route)))
      return this.getContent(decodeURIComponent(m[1]!), request.query.ref ?? this.defaultBranch);
    if ((m = /^PUT \/contents\/(.+)$/.exec(route))) return this.putContent(decodeURIComponent(m[1]!), body);

    // Check runs
    if (route === "POST /check-runs") return this.createCheckRun(body);
    if ((m = /^PATCH \/check-runs\/(\d+)$/.exec(route))) return this.updateCheckRun(Number(m[1]), body);
    if ((m = /^GET \/commits\/([^/]+)\/check-runs$/.exec(route)))
      return this.listCheckRuns(decodeURIComponent(m[1]!), request.query);
    if ((m = /^GET \/commits\/([^/]+)$/.exec(route)))
      return this.getCommitWithFiles(decodeURIComponent(m[1]!), request.query);
    if ((m = /^GET \/compare\/([^/]+)$/.exec(route))) return this.compare(decodeURIComponent(m[1]!), request.query);

    // Pull requests
    if (route === "GET /pulls") {
      const head = request.query.head;
      const base = request.query.base;
      const state = request.query.state ?? "open";
      const list = this.pulls.filter(
        (p) =>
          (!head || `${this.owner}:${p.head}` === head) &&
          (!base || p.base === base) &&
          (state === "all" || p.state === state),
      );
      return [200, list.map((p) => this.pullPayload(p))];
    }
    if ((m = /^GET \/pulls\/(\d+)$/.exec(route))) {
      const pull = this.pulls.find((p) => p.number === Number(m![1]));
      return pull ? [200, this.pullPayload(pull)] : notFound();
    }
    if ((m = /^GET \/pulls\/(\d+)\/commits$/.exec(route))) return this.pullCommits(Number(m[1]), request.query);
    if ((m = /^GET \/pulls\/(\d+)\/reviews$/.exec(route))) {
      const list = this.reviews.filter((r) => r.pull_number === Number(m![1]));
      return [
        200,
        page(
          list.map((r) => this.reviewJson(r)),
          request.query,
        ),
      ];
    }

    // Issue events: how each review was dismissed
    if ((m = /^GET \/issues\/(\d+)\/events$/.exec(route))) {
      const list = this.issueEvents.filter((e) => e.issue_number === Number(m![1]));
      return [
        200,
        page(
          list.map((e) => this.issueEventJson(e)),
          request.query,
        ),
      ];
    }

    // Issue comments (the sticky comment)
    if ((m = /^GET \/issues\/(\d+)\/comments$/.exec(route))) {
      const list = this.comments.filter((c) => c.issue_number === Number(m![1]));
      return [
        200,
        page(
          list.map((c) => this.commentJson(c)),
          request.query,
        ),
      ];
    }
    if ((m = /^POST \/issues\/(\d+)\/comments$/.exec(route))) {
      const comment: IssueComment = {
        id: this.id(),
        issue_number: Number(m[1]),
        body: String(body.body),
        login: APP_BOT_LOGIN,
        app_id: this.appId,
      };
      this.comments.push(comment);
      return [201, this.commentJson(comment)];
    }
    if ((m = /^PATCH \/issues\/comments\/(\d+)$/.exec(route))) {
      const comment = this.comments.find((c) => c.id === Number(m![1]));
      if (!comment) return notFound();
      if (comment.app_id !== this.appId) return [403, { message: "Resource not accessible by integration" }];
      comment.body = String(body.body);
      return [200, this.commentJson(comment)];
    }
    if ((m = /^DELETE \/issues\/comments\/(\d+)$/.exec(route))) {
      const index = this.comments.findIndex((c) => c.id === Number(m![1]));
      if (index < 0) return notFound();
      this.comments.splice(index, 1);
      return [204];
    }

    // Collaborators
    if ((m = /^GET \/collaborators\/([^/]+)\/permission$/.exec(route))) {
      const login = decodeURIComponent(m[1]!);
      const permission = this.permissions.get(login.toLowerCase());
      if (!permission) return notFound(`${login} is not a collaborator`);
      const legacy = permission === "maintain" ? "write" : permission === "triage" ? "read" : permission;
      return [200, { permission: legacy, role_name: permission, user: { login, id: idOf(login) } }];
    }

    // Actions: dispatches, runs, artifacts
    if ((m = /^POST \/actions\/workflows\/([^/]+)\/dispatches$/.exec(route)))
      return this.dispatch(decodeURIComponent(m[1]!), body);
    if ((m = /^GET \/actions\/runs\/(\d+)$/.exec(route))) {
      const run = this.runs.get(Number(m[1]));
      return run ? [200, this.workflowRunPayload(run)] : notFound();
    }
    if ((m = /^GET \/actions\/runs\/(\d+)\/artifacts$/.exec(route))) {
      const run = this.runs.get(Number(m[1]));
      if (!run) return notFound();
      const list = run.artifacts.filter((a) => !request.query.name || a.name === request.query.name);
      return [
        200,
        {
          total_count: list.length,
          artifacts: list.map((a) => ({
            id: a.id,
            name: a.name,
            size_in_bytes: a.zip.length,
            expired: a.expired,
            archive_download_url: `https://api.github.com/repos/${this.fullName}/actions/artifacts/${a.id}/zip`,
          })),
        },
      ];
    }
    if ((m = /^GET \/actions\/artifacts\/(\d+)\/zip$/.exec(route))) {
      const artifact = [...this.runs.values()].flatMap((r) => r.artifacts).find((a) => a.id === Number(m![1]));
      if (!artifact) return notFound();
      // As GitHub: 410 once the artifact expired, else 302 to a signed blob URL (not the bytes).
      if (artifact.expired) return [410, { message: "Artifact has expired", documentation_url: DOCS }];
      return [302, undefined, { Location: `${ARTIFACT_BLOB_ORIGIN}/actions-results/${artifact.id}.zip?sig=e2e` }];
    }

    // Rulesets (consort protect)
    if (route === "GET /rulesets") return [200, this.rulesets];
    if (route === "POST /rulesets") {
      const ruleset = { ...body, id: this.id(), source: this.fullName, source_type: "Repository" };
      this.rulesets.push(ruleset);
      return [201, ruleset];
    }
    if ((m = /^GET \/rules\/branches\/(.+)$/.exec(route))) return [200, this.rulesOn(decodeURIComponent(m[1]!))];
    if (route === "GET " || route === "GET /") return [200, this.repositoryPayload()];

    return [599, { message: `the e2e GitHub double does not implement ${route}` }];
  }

  private answerOrg(request: RecordedRequest): Reply {
    // Team memberships, as GitHub answers them: 200 with the state for a member, 404 for anyone else.
    const m = /^\/orgs\/([^/]+)\/teams\/([^/]+)\/memberships\/([^/]+)$/.exec(request.path);
    if (request.method === "GET" && m) {
      const [org, slug, login] = [m[1]!, m[2]!, decodeURIComponent(m[3]!)].map((x) => x.toLowerCase()) as [
        string,
        string,
        string,
      ];
      if (!this.teams.get(`${org}/${slug}`)?.has(login)) return notFound();
      return [
        200,
        {
          url: `https://api.github.com/teams/1/memberships/${login}`,
          role: "member",
          state: "active",
        },
      ];
    }
    return [599, { message: `the e2e GitHub double does not implement ${request.method} ${request.path}` }];
  }

  private refJson(ref: string, sha: string): Record<string, unknown> {
    return {
      ref,
      node_id: "REF",
      url: `https://api.github.com/repos/${this.fullName}/git/${ref}`,
      object: { sha, type: "commit", url: "" },
    };
  }

  private getRef(ref: string): Reply {
    if (!ref.startsWith("heads/")) return notFound();
    const sha = this.git.branchHead(ref.slice("heads/".length));
    return sha ? [200, this.refJson(`refs/${ref}`, sha)] : notFound();
  }

  private commitJson(sha: string): Record<string, unknown> {
    const info = this.git.commitInfo(sha)!;
    const person = { name: info.author.name, email: info.author.email, date: info.author.date };
    return {
      sha,
      node_id: "C",
      url: "",
      html_url: `https://github.com/${this.fullName}/commit/${sha}`,
      author: person,
      committer: person,
      message: info.message,
      tree: { sha: info.tree, url: "" },
      parents: info.parents.map((p) => ({ sha: p, url: "", html_url: "" })),
      verification: this.verificationOf(sha),
    };
  }

  /** GitHub's verdict on a commit's signature: valid for those it signed, unsigned for pushed ones. */
  private verificationOf(sha: string): Record<string, unknown> {
    const signed = this.signed.has(sha);
    return {
      verified: signed,
      reason: signed ? "valid" : "unsigned",
      signature: null,
      payload: null,
      verified_at: signed ? FIXED_VERIFIED_AT : null,
    };
  }

  private getCommit(sha: string): Reply {
    return this.git.objectType(sha) === "commit" ? [200, this.commitJson(sha)] : notFound();
  }

  /** A tree (of a tree or a commit sha); with `recursive` every entry below it, paths from the root. */
  private getTree(sha: string, recursive = false): Reply {
    const type = this.git.objectType(sha);
    const tree = type === "commit" ? this.git.commitInfo(sha)!.tree : type === "tree" ? sha : undefined;
    if (!tree) return notFound();
    return [
      200,
      {
        sha: tree,
        url: "",
        truncated: false,
        tree: (recursive ? this.git.listTreeRecursive(tree) : this.git.listTree(tree)).map((e) => ({
          path: e.path,
          mode: e.mode,
          type: e.type,
          sha: e.sha,
          ...(e.size !== undefined ? { size: e.size } : {}),
          url: "",
        })),
      },
    ];
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private createTree(body: Record<string, any>): Reply {
    const base = body.base_tree ? String(body.base_tree) : undefined;
    if (base && this.git.objectType(base) !== "tree") return [422, { message: "base_tree is not a valid tree oid" }];
    const entries = (body.tree as Array<Record<string, unknown>>).map((e) => ({
      path: String(e.path),
      mode: String(e.mode),
      sha: e.content !== undefined ? this.git.writeBlob(String(e.content)) : (e.sha as string | null),
    }));
    const sha = this.git.writeTree(base, entries);
    return [
      201,
      {
        sha,
        url: "",
        truncated: false,
        tree: this.git.listTree(sha).map((e) => ({ path: e.path, mode: e.mode, type: e.type, sha: e.sha, url: "" })),
      },
    ];
  }

  private createRef(ref: string, sha: string): Reply {
    if (!ref.startsWith("refs/heads/"))
      return [422, { message: "Reference name must start with refs/heads/ in this double" }];
    const branch = ref.slice("refs/heads/".length);
    if (this.git.branchHead(branch)) return [422, { message: "Reference already exists" }];
    if (this.git.objectType(sha) !== "commit") return [422, { message: "Object does not exist" }];
    this.git.setBranch(branch, sha);
    return [201, this.refJson(ref, sha)];
  }

  /** A non-forced update that is not a fast-forward is refused exactly as GitHub refuses it. */
  private updateRef(ref: string, sha: string, force: boolean): Reply {
    const branch = ref.replace(/^(refs\/)?heads\//, "");
    const current = this.git.branchHead(branch);
    if (!current) return [422, { message: "Reference does not exist" }];
    if (this.git.objectType(sha) !== "commit") return [422, { message: "Object does not exist" }];
    if (!force && !this.git.isAncestor(current, sha)) return [422, { message: "Update is not a fast forward" }];
    this.git.setBranch(branch, sha, current);
    return [200, this.refJson(`refs/heads/${branch}`, sha)];
  }

  /**
   * The Contents API write, as GitHub answers it: the blob sha it names is a compare-and-swap on
   * the file (409 when the file changed since it was read), a new file must name none (422 when
   * it exists), and the commit goes on top of the branch as it is now.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private putContent(path: string, body: Record<string, any>): Reply {
    const branch = String(body.branch ?? this.defaultBranch);
    const head = this.git.branchHead(branch);
    if (!head) return notFound(`Branch ${branch} not found`);
    const refused = this.contentsRefusal(branch, head);
    if (refused) return refused;
    const current = this.git.blobSha(head, path);
    if (current === undefined && body.sha !== undefined) return notFound();
    if (current !== undefined && body.sha === undefined)
      return [422, { message: 'Invalid request.\n\n"sha" wasn\'t supplied.', documentation_url: DOCS }];
    if (current !== undefined && body.sha !== current)
      return [409, { message: `${path} does not match ${String(body.sha)}`, documentation_url: DOCS }];
    const blob = this.git.writeBlob(Buffer.from(String(body.content), "base64"));
    const tree = this.git.writeTree(this.git.commitInfo(head)!.tree, [{ path, mode: "100644", sha: blob }]);
    const commit = this.git.writeCommit(tree, [head], String(body.message));
    this.signed.add(commit);
    this.git.setBranch(branch, commit, head);
    return [
      current === undefined ? 201 : 200,
      {
        content: { name: path.split("/").pop(), path, sha: blob, type: "file", url: "", html_url: "", git_url: "" },
        commit: this.commitJson(commit),
      },
    ];
  }

  private getContent(path: string, ref: string): Reply {
    const commit = this.git.resolve(ref) ?? this.git.resolve(`refs/heads/${ref}`);
    if (!commit) return notFound(`No commit found for the ref ${ref}`);
    const content = this.git.fileAt(commit, path);
    if (content === undefined) return notFound();
    const sha = this.git.blobSha(commit, path)!;
    return [
      200,
      {
        type: "file",
        ...contentsBody(content),
        size: content.length,
        name: path.split("/").pop(),
        path,
        sha,
        url: "",
        git_url: "",
        html_url: "",
        download_url: "",
        _links: { self: "", git: "", html: "" },
      },
    ];
  }

  // --- Issue #33: how GitHub answers writes that race or are refused, and its webhook deliveries ---

  /** Every request about this repository answers 404, as when the app's installation loses it. */
  accessLost = false;
  /** What the next Contents API writes on a branch meet (see `branchMovesUnderNextWrites`, `refuseContentsWrites`). */
  private readonly contentsFaults: Array<{ branch: string; times: number; answer: (head: string) => Reply }> = [];
  /** The app's webhook deliveries, newest last, as GET /app/hook/deliveries lists them. */
  readonly hookDeliveries: HookDelivery[] = [];
  /** The delivery guids the app asked GitHub to redeliver (POST /app/hook/deliveries/{id}/attempts), in order. */
  readonly redeliveries: string[] = [];

  /**
   * The next `times` Contents API writes on `branch` race another write on the branch itself:
   * GitHub lands the other commit (one the app made, changing no file) and refuses this one with
   * "is at X but expected Y", answered as 409 or as 422 depending on where the race is caught.
   */
  branchMovesUnderNextWrites(branch: string, status: 409 | 422, times = 1): void {
    this.contentsFaults.push({
      branch,
      times,
      answer: (head) => {
        const moved = this.git.writeCommit(this.git.commitInfo(head)!.tree, [head], "consort: a concurrent write");
        this.signed.add(moved);
        this.git.setBranch(branch, moved, head);
        return [
          status,
          { message: `refs/heads/${branch} is at ${moved} but expected ${head}`, documentation_url: DOCS },
        ];
      },
    });
  }

  /**
   * Contents API writes on `branch` are refused as GitHub refuses them under a ruleset or branch
   * protection ("protection") or secret scanning's push protection ("push-protection"): 409 with
   * GitHub's message, `times` times (every time by default).
   */
  refuseContentsWrites(branch: string, by: "protection" | "push-protection", times = Infinity): void {
    const message =
      by === "protection"
        ? "Repository rule violations found\n\nCannot update this protected ref.\n\n"
        : "Repository rule violations found\n\nPush cannot contain secrets.\n\n";
    this.contentsFaults.push({ branch, times, answer: () => [409, { message, documentation_url: DOCS }] });
  }

  private contentsRefusal(branch: string, head: string): Reply | undefined {
    const fault = this.contentsFaults.find((f) => f.branch === branch && f.times > 0);
    if (!fault) return undefined;
    fault.times -= 1;
    return fault.answer(head);
  }

  /** Record a delivery GitHub made to the app, with the status the app answered (0: no answer in time). */
  recordDelivery(delivery: { guid: string; event: string; action?: string; statusCode: number }): HookDelivery {
    const recorded: HookDelivery = {
      id: this.nextId++,
      guid: delivery.guid,
      delivered_at: new Date().toISOString(),
      redelivery: this.hookDeliveries.some((d) => d.guid === delivery.guid),
      duration: 0.1,
      status:
        delivery.statusCode >= 200 && delivery.statusCode < 300
          ? "OK"
          : delivery.statusCode === 0
            ? "timed out"
            : "Invalid HTTP Response: 500",
      status_code: delivery.statusCode,
      event: delivery.event,
      action: delivery.action ?? null,
      installation_id: this.installationId,
      repository_id: this.repositoryId,
    };
    this.hookDeliveries.push(recorded);
    return recorded;
  }

  /** GitHub's deliveries API for the app's webhook: the list (newest first, `status` filter) and redelivery. */
  private attachDeliveries(mock: GitHubMock): void {
    mock.on(
      "GET",
      /^\/app\/hook\/deliveries$/,
      (request) => {
        const wanted = request.query.status;
        const failed = (d: HookDelivery) => d.status_code < 200 || d.status_code >= 300;
        const listed = [...this.hookDeliveries]
          .reverse()
          .filter((d) => wanted === undefined || (wanted === "failure") === failed(d));
        return [200, listed.slice(0, Number(request.query.per_page ?? 30))];
      },
      Infinity,
    );
    mock.on(
      "POST",
      /^\/app\/hook\/deliveries\/\d+\/attempts$/,
      (request) => {
        const id = Number(/deliveries\/(\d+)\//.exec(request.path)![1]);
        const delivery = this.hookDeliveries.find((d) => d.id === id);
        if (!delivery) return notFound();
        this.redeliveries.push(delivery.guid);
        return [202, {}];
      },
      Infinity,
    );
  }

  private checkRunJson(run: CheckRun): Record<string, unknown> {
    return {
      id: run.id,
      head_sha: run.head_sha,
      node_id: "CR",
      external_id: run.external_id ?? null,
      url: "",
      html_url: `https://github.com/${this.fullName}/runs/${run.id}`,
      details_url: null,
      status: run.status,
      conclusion: run.conclusion,
      // GitHub keeps the started_at a run was created with; without one, the time it was created.
      started_at: run.started_at ?? "2026-03-01T12:00:00Z",
      completed_at: run.status === "completed" ? "2026-03-01T12:00:00Z" : null,
      output: {
        title: run.output.title ?? null,
        summary: run.output.summary ?? null,
        text: run.output.text ?? null,
        annotations_count: 0,
        annotations_url: "",
      },
      name: run.name,
      check_suite: { id: 1 },
      app: { id: run.app_id, slug: SLUG, name: "Consort" },
      pull_requests: [],
    };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private createCheckRun(body: Record<string, any>): Reply {
    if (this.git.objectType(String(body.head_sha)) !== "commit") return [422, { message: "No commit found for SHA" }];
    const run: CheckRun = {
      id: this.id(),
      name: String(body.name),
      head_sha: String(body.head_sha),
      status: body.conclusion ? "completed" : (body.status ?? "queued"),
      conclusion: body.conclusion ?? null,
      output: body.output ?? {},
      actions: body.actions ?? [],
      app_id: this.appId,
      history: [],
      ...(typeof body.started_at === "string" ? { started_at: body.started_at } : {}),
      ...(typeof body.external_id === "string" ? { external_id: body.external_id } : {}),
    };
    run.history.push({ status: run.status, conclusion: run.conclusion, title: run.output.title });
    this.checkRuns.push(run);
    return [201, this.checkRunJson(run)];
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private updateCheckRun(id: number, body: Record<string, any>): Reply {
    const run = this.checkRuns.find((r) => r.id === id);
    if (!run) return notFound();
    if (body.status) run.status = body.status;
    if (body.conclusion) {
      run.conclusion = body.conclusion;
      run.status = "completed";
    } else if (body.status && body.status !== "completed") run.conclusion = null;
    if (body.output) run.output = body.output;
    if (body.actions) run.actions = body.actions;
    run.history.push({ status: run.status, conclusion: run.conclusion, title: run.output.title });
    return [200, this.checkRunJson(run)];
  }

  private listCheckRuns(ref: string, query: Record<string, string>): Reply {
    const sha = /^[0-9a-f]{40}$/.test(ref) ? ref : this.git.resolve(ref);
    let runs = this.checkRuns.filter((r) => r.head_sha === sha);
    if (query.app_id) runs = runs.filter((r) => String(r.app_id) === query.app_id);
    if (query.check_name) runs = runs.filter((r) => r.name === query.check_name);
    // filter=latest (the default): the newest run of each name, newest first as GitHub lists them.
    runs = [...runs].reverse();
    if ((query.filter ?? "latest") === "latest") {
      const seen = new Set<string>();
      runs = runs.filter((r) => (seen.has(r.name) ? false : (seen.add(r.name), true)));
    }
    return [
      200,
      {
        total_count: runs.length,
        check_runs: page(
          runs.map((r) => this.checkRunJson(r)),
          query,
        ),
      },
    ];
  }

  private pullCommits(number: number, query: Record<string, string>): Reply {
    const pull = this.pulls.find((p) => p.number === number);
    if (!pull) return notFound();
    const head = this.git.branchHead(pull.head) ?? pull.merge_commit_sha;
    const base = this.git.branchHead(pull.base)!;
    const shas = head ? this.git.revList(head, base) : [];
    return [
      200,
      page(
        shas.map((sha) => this.listedCommitJson(sha)),
        query,
      ),
    ];
  }

  /** A commit as GitHub lists it (pull commits, compare, the commit API): the git commit and the login of its author. */
  private listedCommitJson(sha: string): Record<string, unknown> {
    const info = this.git.commitInfo(sha)!;
    const login = loginOfEmail(info.author.email);
    // As GitHub: the committer's login where its e-mail maps to an account (GitHub's own web-flow does not here).
    const committer = info.committer ? loginOfEmail(info.committer.email) : null;
    return {
      sha,
      node_id: "C",
      url: "",
      html_url: "",
      comments_url: "",
      commit: {
        message: info.message,
        author: info.author,
        committer: { ...info.author, ...(info.committer ?? {}) },
        tree: { sha: info.tree, url: "" },
        url: "",
        comment_count: 0,
        verification: this.verificationOf(sha),
      },
      author: login ? { login, id: idOf(login) } : null,
      committer: committer ? { login: committer, id: idOf(committer) } : null,
      parents: info.parents.map((p) => ({ sha: p, url: "" })),
    };
  }

  /**
   * GET commits/{ref}: the commit with the files it changed against its first parent, as GitHub
   * lists them: 300 a page by default, and never more than 3000 in all, whatever the commit holds.
   */
  private getCommitWithFiles(ref: string, query: Record<string, string>): Reply {
    const sha = this.git.resolve(ref);
    if (!sha) return [422, { message: `No commit found for SHA: ${ref}` }];
    const patches = this.git.patchesOf(sha);
    const files = this.git
      .fileChanges(sha)
      .slice(0, GITHUB_COMMIT_FILES_CAP)
      .map((f) => ({
        sha: f.status === "removed" ? null : f.blob,
        filename: f.path,
        status: f.status,
        ...(patches.has(f.path) ? { patch: patches.get(f.path) } : {}),
        additions: 0,
        deletions: 0,
        changes: 0,
        blob_url: "",
        raw_url: "",
        contents_url: "",
      }));
    return [
      200,
      {
        ...this.listedCommitJson(sha),
        stats: { total: files.length, additions: 0, deletions: 0 },
        files: page(files, { per_page: "300", ...query }),
      },
    ];
  }

  /**
   * GET compare/{base}...{head}: how head stands to base, and the commits reachable from head but
   * not from base, oldest first, paginated (250 a page by default, as GitHub).
   */
  private compare(basehead: string, query: Record<string, string>): Reply {
    const [baseRef, headRef] = basehead.split("...") as [string, string | undefined];
    const base = this.git.resolve(baseRef);
    const head = headRef === undefined ? undefined : this.git.resolve(headRef);
    if (!base || !head) return notFound();
    const shas = this.git.revList(head, base);
    const behind = this.git.revList(base, head);
    const status =
      base === head ? "identical" : behind.length === 0 ? "ahead" : shas.length === 0 ? "behind" : "diverged";
    const mergeBase = this.git.git("merge-base", base, head);
    return [
      200,
      {
        url: "",
        html_url: "",
        permalink_url: "",
        diff_url: "",
        patch_url: "",
        base_commit: this.listedCommitJson(base),
        merge_base_commit: this.listedCommitJson(mergeBase),
        status,
        ahead_by: shas.length,
        behind_by: behind.length,
        total_commits: shas.length,
        commits: page(
          shas.map((sha) => this.listedCommitJson(sha)),
          { per_page: "250", ...query },
        ),
        // What head changed since the merge base, as GitHub lists it: 300 files at most, each with
        // its diff unless binary or too big to show (GITHUB_PATCH_LIMIT).
        files: this.comparedFiles(mergeBase, head),
      },
    ];
  }

  /** A compare's `files`: 300 at most, each with its `patch` where GitHub gives one. */
  private comparedFiles(from: string, to: string): Array<Record<string, unknown>> {
    const patches = this.git.patches(from, to);
    return this.git
      .diffFiles(from, to)
      .slice(0, GITHUB_COMPARE_FILES_CAP)
      .map((f) => {
        const patch = patches.get(f.path);
        return {
          sha: f.status === "removed" ? null : f.blob,
          filename: f.path,
          status: f.status,
          additions: 0,
          deletions: 0,
          changes: 0,
          blob_url: "",
          raw_url: "",
          contents_url: "",
          ...(patch !== undefined && Buffer.byteLength(patch) <= GITHUB_PATCH_LIMIT ? { patch } : {}),
        };
      });
  }

  private reviewJson(review: Review): Record<string, unknown> {
    return {
      id: review.id,
      node_id: "PRR",
      user: { login: review.login, id: idOf(review.login) },
      body: "",
      state: review.state,
      commit_id: review.commit_id,
      submitted_at: review.submitted_at,
      html_url: "",
      pull_request_url: "",
      author_association: "MEMBER",
      _links: {},
    };
  }

  private issueEventJson(event: IssueEvent): Record<string, unknown> {
    return {
      id: event.id,
      node_id: "RDE",
      url: "",
      actor: { login: event.actor, id: idOf(event.actor), type: event.actor.endsWith("[bot]") ? "Bot" : "User" },
      event: "review_dismissed",
      commit_id: null,
      commit_url: null,
      created_at: "2026-03-01T12:00:00Z",
      performed_via_github_app: null,
      dismissed_review: {
        state: "approved",
        review_id: event.reviewId,
        dismissal_message: event.message,
        ...(event.commitId ? { dismissal_commit_id: event.commitId } : {}),
      },
    };
  }

  private commentJson(comment: IssueComment): Record<string, unknown> {
    return {
      id: comment.id,
      node_id: "IC",
      url: "",
      html_url: "",
      body: comment.body,
      user: { login: comment.login, id: idOf(comment.login), type: comment.app_id ? "Bot" : "User" },
      created_at: "2026-03-01T12:00:00Z",
      updated_at: "2026-03-01T12:00:00Z",
      issue_url: "",
      author_association: "NONE",
      performed_via_github_app: comment.app_id ? { id: comment.app_id, slug: SLUG, name: "Consort" } : null,
    };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private dispatch(file: string, body: Record<string, any>): Reply {
    const path = `.github/workflows/${file}`;
    const ref = String(body.ref);
    const at = this.git.resolve(`refs/heads/${ref}`);
    if (!at) return [422, { message: `No ref found for: ${ref}` }];
    if (!this.git.fileAt(at, path)) return notFound(`workflow ${path} not found at ${ref}`);
    // As GitHub: at most 25 inputs and 65,535 characters of input payload, else 422.
    const inputs = (body.inputs ?? {}) as Record<string, unknown>;
    if (Object.keys(inputs).length > DISPATCH_MAX_INPUTS)
      return [
        422,
        { message: `you may only define up to ${DISPATCH_MAX_INPUTS} inputs for a workflow_dispatch event` },
      ];
    if (JSON.stringify(inputs).length > DISPATCH_INPUT_CHARACTERS)
      return [
        422,
        { message: `inputs are too large (over ${DISPATCH_INPUT_CHARACTERS} characters)`, documentation_url: DOCS },
      ];
    const raw = inputs.request;
    const runId = this.id() * 10;
    const request = typeof raw === "string" ? (JSON.parse(raw) as Record<string, unknown>) : raw;
    this.runs.set(runId, {
      id: runId,
      path,
      event: "workflow_dispatch",
      head_branch: ref,
      head_sha: at,
      display_title: renderRunName(this.git.fileAt(at, path)?.toString("utf8") ?? "", request, path),
      status: "queued",
      conclusion: null,
      // The app dispatches with its installation token, so its bot is the run's actor.
      actor: this.appLogin,
      triggering_actor: this.appLogin,
      artifacts: [],
    });
    this.dispatches.push({ workflow: file, ref, request: typeof raw === "string" ? JSON.parse(raw) : raw, runId });
    if (body.return_run_details !== true) return [204];
    return [
      200,
      {
        workflow_run_id: runId,
        run_url: `https://api.github.com/repos/${this.fullName}/actions/runs/${runId}`,
        html_url: `https://github.com/${this.fullName}/actions/runs/${runId}`,
      },
    ];
  }
}

const DOCS = "https://docs.github.com/rest";
const DISPATCH_MAX_INPUTS = 25;
const DISPATCH_INPUT_CHARACTERS = 65_535;

/**
 * A run's display title as GitHub renders the workflow's `run-name`: the expressions Consort's
 * templates use (`fromJSON(inputs.request).<field>`) are evaluated; without a run-name the title
 * is the workflow's name (here, its file name).
 */
function renderRunName(workflow: string, request: unknown, path: string): string {
  const line = /^run-name:\s*(.+)$/m.exec(workflow)?.[1]?.trim();
  if (!line) return path.split("/").pop()!;
  return line.replace(/\$\{\{\s*fromJSON\(inputs\.request\)\.(\w+)\s*\}\}/g, (_, field: string) => {
    const value = (request as Record<string, unknown> | undefined)?.[field];
    return value === undefined || value === null ? "" : String(value);
  });
}

function notFound(message = "Not Found"): Reply {
  return [404, { message, documentation_url: DOCS }];
}

/** GitHub lists at most this many files of one commit, in the commit API as in a push payload. */
export const GITHUB_COMMIT_FILES_CAP = 3000;
/** A compare lists at most this many files. */
const GITHUB_COMPARE_FILES_CAP = 300;
/**
 * GitHub leaves a file's `patch` out of a compare when its diff is too big to show; the cut-off is
 * not documented, so the double takes one (a diff over 64 KB) that a test can reach on purpose.
 */
const GITHUB_PATCH_LIMIT = 64 * 1024;
/** A push payload lists at most this many commits. */
export const GITHUB_PUSH_COMMITS_CAP = 2048;

function page<T>(items: T[], query: Record<string, string>): T[] {
  const perPage = Number(query.per_page ?? 30);
  const pageNumber = Number(query.page ?? 1);
  return items.slice((pageNumber - 1) * perPage, pageNumber * perPage);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Stable numeric ids for logins, so payloads and API answers agree. */
export function idOf(login: string): number {
  let hash = 7;
  for (const ch of login.toLowerCase()) hash = (hash * 31 + ch.charCodeAt(0)) % 1_000_000;
  return 10_000 + hash;
}

/** Scenario commits use `<login>@users.noreply.github.com`, which GitHub maps back to the login. */
function loginOfEmail(email: string): string | null {
  const match = /^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$/.exec(email);
  return match ? match[1]! : null;
}

/** A login as GitHub's simple-user names it in a payload. */
function userOf(login: string): { login: string; id: number; type: string } {
  return { login, id: idOf(login), type: login.endsWith("[bot]") ? "Bot" : "User" };
}
