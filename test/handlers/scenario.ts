import { randomBytes } from "node:crypto";
import { defaultConfig, type ConsortConfig } from "../../src/config/consort-config.js";
import { projectState } from "../../src/engine/projection.js";
import { createTrack } from "../../src/orchestrator/index.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { emptyTrackState, type TrackState } from "../../src/state/index.js";
import { TEST_APP_ID, type GitHubMock, type RecordedRequest } from "../helpers/github.js";
import { compareAnswer } from "../helpers/github-api.js";
import { TrackSim } from "../orchestrator/helpers/track.js";
import { contentFile, FULL_NAME, inRepo, REPOSITORY_ID, type FakeStateBranch } from "./fake-repo.js";

/** A 40-hex sha from a label, so a test names its commits. */
export const commitSha = (label: string) => Buffer.from(label.padEnd(20, ".")).toString("hex").slice(0, 40);

/** Frozen time: every ISO stamp a handler writes is this one. */
export const NOW = new Date("2026-03-01T12:00:00.000Z");

/** A fresh track branch name, so parallel tests never share a database branch. */
export const newBranch = () => `feature-${randomBytes(3).toString("hex")}`;

/** A track simulated through the real machine, from creation on, for `branch`. */
export function simulatedTrack(
  branch: string,
  config: ConsortConfig = defaultConfig(),
  head = commitSha("start"),
): TrackSim {
  return new TrackSim(
    config,
    createTrack(
      {
        trackId: branch,
        branch,
        baseBranch: "main",
        head,
        databaseBranch: branch,
        parentDatabaseBranch: "root",
        at: "2026-03-01T09:00:00.000Z",
      },
      config,
    ),
  );
}

/**
 * A track for `branch` driven through its design, both tests and a verified release, waiting at
 * the deploy gate; with `gate: "promote"`, the deploy gate approved by `lead-human` too.
 */
export function trackAtGate(branch: string, gate: "deploy" | "promote"): TrackSim {
  const track = simulatedTrack(branch).throughDesign().throughUnit().throughUnit();
  track.expectAccepted(track.report("valid"));
  if (gate === "promote") track.expectAccepted(track.approve("deploy"));
  if (track.stage !== `${gate}-gate`) throw new Error(`the track did not reach the ${gate} gate; at ${track.stage}`);
  return track;
}

/** The state file a track at `snapshot` has, as earlier deliveries would have written it. */
export function stateOf(branch: string, snapshot: TrackSnapshot): TrackState {
  return projectState(
    emptyTrackState({ trackId: branch, repository: FULL_NAME, branch, snapshot, now: NOW }),
    snapshot,
  );
}

/**
 * GitHub answers for the check runs of `sha`: an empty listing, then the creations. On a head with
 * none of ours only the checks that have a conclusion are created (a waiting one stays absent), so
 * by default any number is answered; a test that knows how many passes `times`.
 */
export function expectChecks(github: GitHubMock, sha: string, times = Infinity): void {
  github
    .on("GET", `/repos/acme/shop/commits/${sha}/check-runs`, [200, { total_count: 0, check_runs: [] }])
    .on(
      "POST",
      "/repos/acme/shop/check-runs",
      (r) => [201, { id: 1000 + checkCount(github), name: (r.body as { name: string }).name }],
      times,
    );
}
const checkCount = (github: GitHubMock) => github.calls("POST", "/repos/acme/shop/check-runs").length;

/** The check runs created, by name. */
export function createdChecks(github: GitHubMock): Record<
  string,
  {
    conclusion?: string;
    status: string;
    output: { title: string; summary: string };
    actions: Array<{ identifier: string }>;
  }
> {
  return Object.fromEntries(
    github
      .calls("POST", "/repos/acme/shop/check-runs")
      .map((c: RecordedRequest) => [(c.body as { name: string }).name, c.body]),
  ) as never;
}

/** The track's open PR (#7) with no comments yet: the sticky comment is created. */
export function expectStickyComment(github: GitHubMock, branch: string, headSha: string): void {
  github
    .on("GET", "/repos/acme/shop/pulls", [
      200,
      [{ number: 7, base: { ref: "main" }, head: { ref: branch, sha: headSha } }],
    ])
    .on("GET", "/repos/acme/shop/issues/7/comments", [200, []])
    .on("POST", "/repos/acme/shop/issues/7/comments", [
      201,
      { id: 77, body: "", performed_via_github_app: { id: TEST_APP_ID } },
    ]);
}

/** The repository has no `.github/consort.yml`: the defaults apply. */
export function expectDefaultConfig(github: GitHubMock, times = 1): void {
  github.on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", [404, { message: "Not Found" }], times);
}

export function expectConfig(github: GitHubMock, text: string, times = 1): void {
  github.on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", contentFile(".github/consort.yml", text), times);
}

/** A pull_request payload for the track's PR #7, from a recorded example. */
export function pullRequestPayload(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  example: Record<string, any>,
  branch: string,
  headSha: string,
  extra: Record<string, unknown> = {},
) {
  const payload = inRepo(example);
  return {
    ...payload,
    number: 7,
    pull_request: {
      ...example.pull_request,
      number: 7,
      head: {
        ...example.pull_request.head,
        ref: branch,
        sha: headSha,
        repo: { ...example.pull_request.head.repo, id: REPOSITORY_ID },
      },
      base: { ...example.pull_request.base, ref: "main" },
      ...extra,
    },
  };
}

/** A review as GitHub lists it (`GET /repos/{o}/{r}/pulls/{n}/reviews`). */
export interface ListedReview {
  id: number;
  login: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED";
  commit: string;
  submittedAt?: string;
}

/** GitHub's listing of PR #7's reviews, which the review handler reads again before deciding anything. */
export function expectReviews(github: GitHubMock, reviews: ListedReview[], times = 1): void {
  github.on(
    "GET",
    "/repos/acme/shop/pulls/7/reviews",
    [
      200,
      reviews.map((r) => ({
        id: r.id,
        node_id: `PRR${r.id}`,
        user: { login: r.login, id: r.login.length, type: "User" },
        body: "",
        state: r.state,
        html_url: "",
        pull_request_url: "",
        commit_id: r.commit,
        submitted_at: r.submittedAt ?? "2026-03-01T11:00:00Z",
        author_association: "MEMBER",
        _links: { html: { href: "" }, pull_request: { href: "" } },
      })),
    ],
    times,
  );
}

/** PR #7's `review_dismissed` issue event: a person's (with a message) or GitHub's own on push (with the commit). */
export function expectDismissal(
  github: GitHubMock,
  reviewId: number,
  how: { by: string; message: string | null; commit?: string },
): void {
  github.on("GET", "/repos/acme/shop/issues/7/events", [
    200,
    [
      {
        id: 1,
        node_id: "RDE",
        url: "",
        actor: { login: how.by, id: how.by.length, type: "User" },
        event: "review_dismissed",
        commit_id: null,
        commit_url: null,
        created_at: "2026-03-01T11:30:00Z",
        performed_via_github_app: null,
        dismissed_review: {
          state: "approved",
          review_id: reviewId,
          dismissal_message: how.message,
          ...(how.commit ? { dismissal_commit_id: how.commit } : {}),
        },
      },
    ],
  ]);
}

/**
 * The git reads a push is verified by (src/push/read.ts): compare from `before` to the last
 * commit, listing `commits` as a chain (each the previous one's child), and the tree at the head,
 * listing `tree` (path → blob id), answered by `state`. GitHub's compare and tree shapes, trimmed
 * to what is read.
 */
export function expectVerifiedPush(
  github: GitHubMock,
  state: FakeStateBranch,
  before: string,
  commits: Array<{ sha: string; message?: string; author?: string }>,
  {
    tree = {},
    times = 1,
    after = commits.at(-1)?.sha ?? before,
    status = commits.length === 0 ? "identical" : "ahead",
  }: { tree?: Record<string, string>; times?: number; after?: string; status?: string } = {},
): void {
  github.on(
    "GET",
    `/repos/acme/shop/compare/${before}...${after}`,
    [
      200,
      compareAnswer(
        { sha: before, tree: commitSha(`tree-${before}`) },
        commits.map((c) => ({ sha: c.sha, author: c.author ?? null, message: c.message ?? "A step\n" })),
        { status },
      ),
    ],
    times,
  );
  // The state branch's double answers every tree read (one route for both), so it holds the head's.
  state.pushedTrees.set(after, {
    sha: commitSha(`tree-${after}`),
    truncated: false,
    tree: Object.entries(tree).map(([path, sha]) => ({ path, mode: "100644", type: "blob", sha })),
  });
}

/** The compare a new branch's fork point is read from: `head` leaves main at `fork` (GitHub's compare shape, trimmed). */
export function expectForkPoint(github: GitHubMock, head: string, fork = head, times = 1): void {
  github.on(
    "GET",
    `/repos/acme/shop/compare/main...${head}`,
    [200, { status: fork === head ? "identical" : "ahead", merge_base_commit: { sha: fork }, commits: [] }],
    times,
  );
}

/** T1's RED cycle ended without a decision (its run left no result): a person may re-run it. */
export function afterErroredRed(branch: string): TrackSim {
  const track = simulatedTrack(branch).throughDesign();
  const unit = track.context.units[track.context.unitIndex]!;
  track.expectAccepted(
    track.push({
      role: "navigator",
      files: Object.fromEntries(
        unit.tests.map((t) => [t.file, `it(${JSON.stringify(t.title)}, () => expect(1).toBe(2));\n`]),
      ),
    }),
  );
  track.report("error", ["run 987 uploaded no result"]);
  return track;
}
