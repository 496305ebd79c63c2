import { Octokit } from "@octokit/rest";
import { strToU8, zipSync } from "fflate";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { requestDigest } from "../../src/github/dispatch.js";
import { reconcileRepository } from "../../src/engine/reconcile.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import type { AppServices } from "../../src/app/services.js";
import { GitHubMock, TEST_APP_ID } from "../helpers/github.js";
import { edited } from "../orchestrator/fixtures/stockflow.js";
import { smallDesign } from "../orchestrator/helpers/track.js";
import { contentFile, FakeStateBranch, TEST_STATE_KEY } from "../handlers/fake-repo.js";
import {
  commitSha,
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  expectVerifiedPush,
  newBranch,
  NOW,
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
  // No experiment branches: the sweep of expired experiments finds nothing to drop.
  github.on("GET", "/repos/acme/shop/git/matching-refs/heads%2Fexperiment%2F", [200, []], Infinity);
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
        { sha: STORIES, parents: [{ sha: START }], files: [{ filename: ARTIFACT_PATHS.spec, status: "added" }] },
      ])
      .on(
        "GET",
        "/repos/acme/shop/contents/.consort%2Fspec.json",
        contentFile(
          ARTIFACT_PATHS.spec,
          edited(smallDesign.spec, (j) => delete j.nfrs),
        ),
      );
    // discipline only: the gates, the build and (the default `local` on hosted runners, whose
    // diff only the release job can compute) the schema only wait, so they are not written on this head.
    expectChecks(github, STORIES, 1);
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
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 2 }], 1)
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

describe("consort reconcile finds a finished run by its run-name", () => {
  /** T1's RED pushed and dispatched; the dispatch recorded its request's hash and no run id. */
  function atRedVerify() {
    const track = simulatedTrack(branch).throughDesign();
    const unit = track.context.units[track.context.unitIndex]!;
    const files = Object.fromEntries(
      unit.tests.map((t) => [t.file, `it(${JSON.stringify(t.title)}, () => expect(1).toBe(2));\n`]),
    );
    track.expectAccepted(track.push({ role: "navigator", files }));
    const pending = track.context.pendingDispatch!;
    const request = CycleRequest.parse({
      version: 1,
      dispatchId: pending.dispatchId,
      track: branch,
      step: "red",
      commit: pending.commit,
      tests: { inTurn: unit.tests.map((t) => ({ id: t.id, file: t.file, title: t.title })), earlierGreen: [] },
      frozenTestFiles: [],
      database: { branch },
      ttlSeconds: 3600,
    });
    const seeded = stateOf(branch, track.snapshot);
    seeded.cycles = seeded.cycles.map((c) =>
      c.dispatchId === pending.dispatchId ? { ...c, runId: null, requestSha256: requestDigest(request) } : c,
    );
    state.seed(seeded);
    return { track, request, cycle: seeded.cycles.find((c) => c.dispatchId === pending.dispatchId)! };
  }

  const run = (id: number, title: string) => ({
    id,
    name: "consort cycle",
    path: ".github/workflows/consort-cycle.yml",
    event: "workflow_dispatch",
    status: "completed",
    conclusion: "success",
    head_branch: "main",
    head_sha: "f".repeat(40),
    display_title: title,
    html_url: `https://github.com/acme/shop/actions/runs/${id}`,
    repository: { id: 4242 },
    head_repository: { id: 4242 },
  });

  /** The verified RED result the cycle runner uploads for `request`. */
  function redResult(request: CycleRequest) {
    return {
      version: 1,
      request,
      step: "red",
      commit: request.commit,
      database: { provider: "postgres", trackBranch: branch, cycleBranch: `${branch}-c1`, dropped: true },
      startedAt: "2026-03-01T11:58:00.000Z",
      finishedAt: "2026-03-01T11:59:00.000Z",
      timingsMs: { fork: 40, migrate: 200, tests: 900, verdict: 5, drop: 20, total: 1165 },
      commands: {},
      tests: request.tests.inTurn.map((t) => ({ ...t, role: "turn", outcome: "failed-assertion", message: "no" })),
      verdict: "verified",
      reasons: [`${request.tests.inTurn[0]!.id} fails by an assertion`],
      warnings: [],
    };
  }

  /** The run's result artifact, served from the blob store GitHub redirects to. */
  function answerArtifact(runId: number, artifactId: number, result: unknown): void {
    github
      .on("GET", `/repos/acme/shop/actions/runs/${runId}/artifacts`, [
        200,
        {
          total_count: 1,
          artifacts: [{ id: artifactId, name: "consort-cycle-result", size_in_bytes: 900, expired: false }],
        },
      ])
      .on("GET", `/repos/acme/shop/actions/artifacts/${artifactId}/zip`, [
        302,
        undefined,
        { Location: `https://blob.example.test/artifacts/${artifactId}.zip` },
      ]);
    nock("https://blob.example.test")
      .get(`/artifacts/${artifactId}.zip`)
      .reply(200, Buffer.from(zipSync({ "cycle-result.json": strToU8(JSON.stringify(result)) })), {
        "content-type": "application/zip",
      });
  }

  it("among runs of the same workflow, ingests only the one whose run-name carries the pending dispatch id", async () => {
    const { track, request, cycle } = atRedVerify();
    const head = track.context.head;
    const dispatchId = track.context.pendingDispatch!.dispatchId;
    expectDefaultConfig(github);
    github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, [
        200,
        { ref: `refs/heads/${branch}`, object: { sha: head, type: "commit" } },
      ])
      .on("GET", "/repos/acme/shop/actions/workflows/consort-cycle.yml/runs", [
        200,
        {
          total_count: 3,
          workflow_runs: [
            run(601, "consort cycle"), // run by hand: names no dispatch
            run(602, `consort cycle ${dispatchId}-other`), // another dispatch
            run(603, `consort cycle ${dispatchId}`),
          ],
        },
      ]);
    answerArtifact(603, 77, redResult(request));
    expectChecks(github, head);
    expectStickyComment(github, branch, head);

    const outcome = await reconcileRepository({ octokit, owner: "acme", repo: "shop", services, log: quiet as never });
    github.verify();

    expect(outcome.tracks).toEqual([
      { trackId: branch, outcome: "repaired", found: ["run 603 finished (valid) but its result was never ingested"] },
    ]);
    expect(github.calls("GET", "/repos/acme/shop/actions/workflows/consort-cycle.yml/runs")[0]!.query).toEqual({
      event: "workflow_dispatch",
      branch: "main",
      created: `>=${cycle.dispatchedAt!.slice(0, 19)}Z`,
      per_page: "100",
    });
    expect(state.state(branch)!.snapshot).toMatchObject({ stage: "green" });
    expect(state.state(branch)!.cycles.find((c) => c.dispatchId === dispatchId)).toMatchObject({
      runId: 603,
      verdict: "valid",
    });
  });

  it("passes over a run listed first that borrowed the dispatch id (its result answers another request) and ingests the dispatched one", async () => {
    const { track, request } = atRedVerify();
    const head = track.context.head;
    const dispatchId = track.context.pendingDispatch!.dispatchId;
    expectDefaultConfig(github);
    github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, [
        200,
        { ref: `refs/heads/${branch}`, object: { sha: head, type: "commit" } },
      ])
      .on("GET", "/repos/acme/shop/actions/workflows/consort-cycle.yml/runs", [
        200,
        {
          total_count: 2,
          workflow_runs: [run(604, `consort cycle ${dispatchId}`), run(603, `consort cycle ${dispatchId}`)],
        },
      ]);
    // Someone ran the default branch's workflow by hand with an input of their own and the borrowed run-name.
    answerArtifact(604, 78, redResult({ ...request, ttlSeconds: 60 }));
    answerArtifact(603, 77, redResult(request));
    expectChecks(github, head);
    expectStickyComment(github, branch, head);

    const outcome = await reconcileRepository({ octokit, owner: "acme", repo: "shop", services, log: quiet as never });
    github.verify();

    expect(outcome.tracks).toEqual([
      { trackId: branch, outcome: "repaired", found: ["run 603 finished (valid) but its result was never ingested"] },
    ]);
    expect(state.state(branch)!.cycles.find((c) => c.dispatchId === dispatchId)).toMatchObject({
      runId: 603,
      verdict: "valid",
    });
  });
});
