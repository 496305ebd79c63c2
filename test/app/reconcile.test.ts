import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { reconcileRepository } from "../../src/app/reconcile.js";
import type { AppServices } from "../../src/app/services.js";
import { GitHubMock, TEST_APP_ID } from "../helpers/github.js";
import { edited } from "../orchestrator/fixtures/stockflow.js";
import { smallDesign } from "../orchestrator/helpers/track.js";
import { contentFile, FakeStateBranch } from "../handlers/fake-repo.js";
import { NOW, TEST_STATE_KEY } from "../handlers/harness.js";
import {
  commitSha,
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  expectVerifiedPush,
  newBranch,
  simulatedTrack,
  stateOf,
} from "../handlers/scenario.js";

let github: GitHubMock;
let state: FakeStateBranch;
let branch: string;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const octokit = new Octokit({ auth: "ghs_installation", log: quiet });
const services: AppServices = {
  appId: TEST_APP_ID,
  stateKey: TEST_STATE_KEY,
  clock: () => NOW,
  openProvider: async () => {
    throw new Error("no database in this test");
  },
};
const START = commitSha("start");
const STORIES = commitSha("stories");

beforeEach(() => {
  github = new GitHubMock();
  state = new FakeStateBranch(github);
  branch = newBranch();
  state.seed(stateOf(branch, simulatedTrack(branch).snapshot));
  github.on("GET", "/repos/acme/shop", [
    200,
    { id: 4242, name: "shop", full_name: "acme/shop", default_branch: "main", owner: { login: "acme" } },
  ]);
});
afterEach(() => github.dispose());

const run = () => reconcileRepository({ octokit, owner: "acme", repo: "shop", services, log: quiet as never });

describe("consort reconcile", () => {
  it("classifies a push whose webhook was lost, and a second run changes nothing", async () => {
    expectDefaultConfig(github, 2);
    expectVerifiedPush(github, state, START, [
      { sha: STORIES, author: "po-bot[bot]", message: "Stories\n\nConsort-Role: product-owner\n" },
    ]);
    github
      .on(
        "GET",
        `/repos/acme/shop/git/ref/heads%2F${branch}`,
        [200, { ref: `refs/heads/${branch}`, object: { sha: STORIES, type: "commit" } }],
        2,
      )
      .on("GET", `/repos/acme/shop/commits/${STORIES}`, [
        200,
        { sha: STORIES, files: [{ filename: ARTIFACT_PATHS.spec, status: "added" }] },
      ])
      .on(
        "GET",
        "/repos/acme/shop/contents/.consort%2Fspec.json",
        contentFile(
          ARTIFACT_PATHS.spec,
          edited(smallDesign.spec, (j) => delete j.nfrs),
        ),
      );
    // discipline and schema: the gates and the build only wait, so they are not written on this head.
    expectChecks(github, STORIES, 2);
    expectStickyComment(github, branch, STORIES);

    const first = await run();
    expect(first.tracks).toEqual([
      {
        trackId: branch,
        outcome: "repaired",
        found: [`1 commit(s) up to ${STORIES.slice(0, 7)} were never classified`],
      },
    ]);
    expect(state.state(branch)!.snapshot).toMatchObject({ stage: "spec", context: { head: STORIES } });
    expect(createdChecks(github)["consort/discipline"]).toMatchObject({ conclusion: "success" });

    // Second run: the state already holds the push; only the (unchanged) checks and comment are re-shown.
    const writes = state.updates.length;
    github
      .on("GET", "/repos/acme/shop", [
        200,
        { id: 4242, name: "shop", full_name: "acme/shop", default_branch: "main", owner: { login: "acme" } },
      ])
      .on("GET", `/repos/acme/shop/commits/${STORIES}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 2 }], 2)
      .on("GET", "/repos/acme/shop/pulls", [
        200,
        [{ number: 7, base: { ref: "main" }, head: { ref: branch, sha: STORIES } }],
      ])
      .on("GET", "/repos/acme/shop/issues/7/comments", [
        200,
        [
          {
            id: 77,
            body: (github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string }).body,
            performed_via_github_app: { id: TEST_APP_ID },
          },
        ],
      ]);
    const second = await run();
    expect(second.tracks).toEqual([{ trackId: branch, outcome: "in-sync", found: [] }]);
    expect(state.updates.length).toBe(writes);
    github.verify();
  });

  it("a tampered state file is reported and its checks fail; nothing is repaired", async () => {
    const path = `tracks/${branch}.json`;
    state.write(path, state.text(path)!.replace('"stage": "stories"', '"stage": "done"'));
    const head = state.head;
    expectDefaultConfig(github);
    github.on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, [
      200,
      { ref: `refs/heads/${branch}`, object: { sha: START, type: "commit" } },
    ]);
    expectChecks(github, START);
    const result = await run();
    github.verify();
    expect(result.tracks[0]).toMatchObject({ trackId: branch, outcome: "tampered" });
    expect(state.head).toBe(head);
    for (const check of Object.values(createdChecks(github)))
      expect(check).toMatchObject({ conclusion: "failure", actions: [{ identifier: "reseal" }] });
  });
});
