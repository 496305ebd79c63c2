import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { type FakeStateBranch, inRepo, INSTALLATION_ID, REPOSITORY_ID } from "./fake-repo.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { commitSha, createdChecks, expectChecks, stateOf, trackAtGate } from "./scenario.js";

/**
 * A merge queue (GitHub's "Managing a merge queue"): each queued PR gets a group built on
 * `gh-readonly-queue/<base>/pr-<n>-<sha>`, a push of that branch, and `merge_group.checks_requested`
 * naming the group's head; the queue merges only when the required checks pass on that head.
 */

let h: Harness;
let state: FakeStateBranch;
let branch: string;
const GROUP = commitSha("merge-group-head");
const BASE = commitSha("main-tip");
const QUEUE_BRANCH = `gh-readonly-queue/main/pr-7-${BASE}`;

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

/** A track whose four gates are approved: its PR may merge. */
function approvedTrack(): TrackSnapshot {
  const track = trackAtGate(branch, "promote");
  track.expectAccepted(track.approve("promote"));
  return track.snapshot;
}

function groupPayload(action: "checks_requested" | "destroyed") {
  const example = webhookPayload("merge_group", "checks_requested");
  return inRepo({
    ...example,
    action,
    ...(action === "destroyed" ? { reason: "merged" } : {}),
    merge_group: {
      ...example.merge_group,
      head_sha: GROUP,
      head_ref: `refs/heads/${QUEUE_BRANCH}`,
      base_sha: BASE,
      base_ref: "refs/heads/main",
    },
  });
}

/** The queue as GitHub lists it, PR #7 (the track's branch at `head`), and its schema check. */
function queueOf(head: string, pull: { fork?: boolean; files?: string[]; status?: string } = {}): void {
  h.github
    .on("GET", /\/repos\/acme\/shop\/git\/matching-refs\/heads(%2F|\/)gh-readonly-queue/, [
      200,
      [{ ref: `refs/heads/${QUEUE_BRANCH}`, node_id: "R", url: "", object: { type: "commit", sha: GROUP, url: "" } }],
    ])
    .on("GET", "/repos/acme/shop/pulls/7", [
      200,
      {
        number: 7,
        head: {
          ref: branch,
          sha: head,
          repo: pull.fork ? { id: 999, full_name: "mallory/shop" } : { id: REPOSITORY_ID, full_name: "acme/shop" },
        },
        base: { ref: "main", sha: BASE },
      },
    ]);
  if (pull.fork) return;
  h.github
    // No .github/consort.yml: the defaults say what the PR's branch is.
    .on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", [404, { message: "Not Found" }])
    .on("GET", `/repos/acme/shop/commits/${head}/check-runs`, [
      200,
      { total_count: 1, check_runs: [{ id: 5, name: "consort/schema", status: "completed", conclusion: "success" }] },
    ])
    .on("GET", `/repos/acme/shop/compare/${head}...${GROUP}`, [
      200,
      {
        status: pull.status ?? "ahead",
        files: (pull.files ?? ["README.md"]).map((filename) => ({ filename, status: "modified" })),
      },
    ]);
}

describe("merge_group.checks_requested", () => {
  it("reports the seven checks as passed on the group's head when its one PR is an approved track merged as approved", async () => {
    const snapshot = approvedTrack();
    state.seed(stateOf(branch, snapshot));
    queueOf(snapshot.context.head);
    expectChecks(h.github, GROUP);

    await h.receive("merge_group", groupPayload("checks_requested"));
    h.github.verify();

    const checks = createdChecks(h.github);
    expect(Object.keys(checks).sort()).toEqual([...CHECK_NAMES].sort());
    for (const check of Object.values(checks)) expect(check.conclusion).toBe("success");
  });

  it("fails every check naming the PR when the group changes a file the track froze after its approved head", async () => {
    const snapshot = approvedTrack();
    state.seed(stateOf(branch, snapshot));
    queueOf(snapshot.context.head, { files: [ARTIFACT_PATHS.testList] });
    expectChecks(h.github, GROUP);

    await h.receive("merge_group", groupPayload("checks_requested"));
    h.github.verify();

    const checks = createdChecks(h.github);
    expect(Object.keys(checks)).toHaveLength(CHECK_NAMES.length);
    for (const check of Object.values(checks)) {
      expect(check.conclusion).toBe("failure");
      expect(check.output.summary).toContain(
        `#7 (${branch}): the group changes ${ARTIFACT_PATHS.testList}, frozen by the track, after the PR head`,
      );
    }
  });

  it("fails when the group does not contain the track's approved head (a squash or rebase rewrote it)", async () => {
    const snapshot = approvedTrack();
    state.seed(stateOf(branch, snapshot));
    queueOf(snapshot.context.head, { status: "diverged" });
    expectChecks(h.github, GROUP);

    await h.receive("merge_group", groupPayload("checks_requested"));

    const summary = createdChecks(h.github)["consort/promote"]!.output.summary;
    expect(summary).toContain(`#7 (${branch}): the group does not contain the approved head`);
    expect(createdChecks(h.github)["consort/promote"]!.conclusion).toBe("failure");
  });

  it("fails when a PR in the group is a track whose gates are not all approved", async () => {
    const snapshot = trackAtGate(branch, "promote").snapshot;
    state.seed(stateOf(branch, snapshot));
    queueOf(snapshot.context.head);
    expectChecks(h.github, GROUP);

    await h.receive("merge_group", groupPayload("checks_requested"));

    const check = createdChecks(h.github)["consort/design"]!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toContain(`#7 (${branch}): consort/promote is pending`);
  });

  it("fails when a PR in the group comes from a fork, saying to push the branch to the repository", async () => {
    queueOf(commitSha("fork-head"), { fork: true });
    expectChecks(h.github, GROUP);

    await h.receive("merge_group", groupPayload("checks_requested"));

    const check = createdChecks(h.github)["consort/build"]!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toContain("comes from a fork");
    expect(check.output.summary).toContain("push the branch here");
  });
});

describe("a merge queue's branch", () => {
  it("is never a track: its push starts no track, reads no config and forks no database", async () => {
    const example = webhookPayload("push");
    await h.receive(
      "push",
      inRepo({
        ...example,
        ref: `refs/heads/${QUEUE_BRANCH}`,
        before: "0".repeat(40),
        after: GROUP,
        created: true,
        deleted: false,
        forced: false,
        commits: [],
      }),
    );
    await h.receive("create", inRepo({ ...webhookPayload("create"), ref: QUEUE_BRANCH, ref_type: "branch" }));
    expect(h.github.requests.filter((r) => !r.path.includes("access_tokens"))).toEqual([]);
    expect(state.head).toBeUndefined();
  });
});
