import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { edited } from "../orchestrator/fixtures/stockflow.js";
import { smallDesign } from "../orchestrator/helpers/track.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { contentFile, type FakeStateBranch, inRepo, INSTALLATION_ID } from "./fake-repo.js";
import {
  commitSha,
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  expectVerifiedPush,
  simulatedTrack,
  stateOf,
} from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let branch: string;
const START = commitSha("start");
const STORIES = commitSha("stories");
const storiesText = edited(smallDesign.spec, (j) => delete j.nfrs);
const message = (role: string | null) => `A step\n\n${role ? `Consort-Role: ${role}\n` : ""}`;
/** The stories commit as git holds it (compare lists it with the message the payload carries). */
const STORIES_COMMIT = { sha: STORIES, message: message("product-owner") };

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  state.seed(stateOf(branch, simulatedTrack(branch).snapshot));
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

function pushPayload(
  commits: Array<{ id: string; role: string | null; author: string; added?: string[]; modified?: string[] }>,
  before = START,
) {
  const example = webhookPayload("push");
  return inRepo({
    ...example,
    ref: `refs/heads/${branch}`,
    before,
    after: commits.at(-1)!.id,
    created: false,
    deleted: false,
    forced: false,
    commits: commits.map((c) => ({
      ...example.head_commit,
      id: c.id,
      message: message(c.role),
      author: { name: c.author, email: `${c.author}@example.test`, username: c.author },
      added: c.added ?? [],
      modified: c.modified ?? [],
      removed: [],
    })),
  });
}

describe("push", () => {
  it("classifies the product owner's stories commit, advances to the spec, and updates the checks and the ONE sticky comment", async () => {
    expectDefaultConfig(h.github);
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT]);
    h.github.on("GET", `/repos/acme/shop/contents/.consort%2Fspec.json`, contentFile(ARTIFACT_PATHS.spec, storiesText));
    expectChecks(h.github, STORIES);
    expectStickyComment(h.github, branch, STORIES);

    await h.receive(
      "push",
      pushPayload([{ id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] }]),
    );
    h.github.verify();

    // The artifact was read at the pushed commit.
    expect(h.github.calls("GET", "/repos/acme/shop/contents/.consort%2Fspec.json")[0]!.query).toEqual({ ref: STORIES });
    const after = state.state(branch)!;
    expect(after.snapshot).toMatchObject({ stage: "spec", context: { head: STORIES, rejectedHead: null } });
    const checks = createdChecks(h.github);
    expect(checks["consort/discipline"]).toMatchObject({ status: "completed", conclusion: "success" });
    // The design gate is only waiting: on a new head a missing required check blocks as in-progress would.
    expect(checks["consort/design"]).toBeUndefined();
    // The schema waits too: on the default `local` with hosted runners only the release job can compute it.
    expect(Object.keys(checks).sort()).toEqual(["consort/discipline"]);
    const comment = h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string };
    expect(comment.body.startsWith(`<!-- consort:sticky track=${branch} -->`)).toBe(true);
    expect(comment.body).toContain("spec-author");
  });

  it("refuses a commit by the wrong role: the track does not advance and discipline fails with the reason", async () => {
    expectDefaultConfig(h.github);
    const wrong = commitSha("wrong-role");
    expectVerifiedPush(h.github, state, START, [{ sha: wrong, message: message("driver") }]);
    expectChecks(h.github, wrong);
    expectStickyComment(h.github, branch, wrong);
    // Code files are read too: the classifier refuses test code in production code.
    h.github.on("GET", "/repos/acme/shop/contents/src%2Fapp.ts", contentFile("src/app.ts", "export {};\n"));

    await h.receive(
      "push",
      pushPayload([{ id: wrong, role: "driver", author: "driver-bot[bot]", added: ["src/app.ts"] }]),
    );
    h.github.verify();

    const after = state.state(branch)!;
    expect(after.snapshot).toMatchObject({ stage: "stories", context: { head: START, rejectedHead: { sha: wrong } } });
    const discipline = createdChecks(h.github)["consort/discipline"]!;
    expect(discipline.conclusion).toBe("failure");
    expect(discipline.output.summary).toMatch(/driver/);
  });

  it("a force-push back to the last accepted commit clears the refusal, so the track can go on", async () => {
    const track = simulatedTrack(branch);
    track.push({ role: "driver", files: { "src/app.ts": "x" } });
    expect(track.context.rejectedHead).not.toBeNull();
    state.seed(stateOf(branch, track.snapshot));
    expectDefaultConfig(h.github);
    expectVerifiedPush(h.github, state, track.context.rejectedHead!.sha, [], { after: START, status: "behind" });
    expectChecks(h.github, START);
    expectStickyComment(h.github, branch, START);

    await h.receive(
      "push",
      inRepo({
        ...webhookPayload("push"),
        ref: `refs/heads/${branch}`,
        before: track.context.rejectedHead!.sha,
        after: START,
        created: false,
        deleted: false,
        forced: true,
        commits: [],
        head_commit: null,
      }),
    );
    h.github.verify();

    expect(state.state(branch)!.snapshot).toMatchObject({
      stage: "stories",
      context: { head: START, rejectedHead: null },
    });
    expect(createdChecks(h.github)["consort/discipline"]).toMatchObject({ status: "completed", conclusion: "success" });
  });

  it("a redelivered push changes nothing", async () => {
    expectDefaultConfig(h.github, 2);
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT], { times: 2 });
    h.github.on(
      "GET",
      `/repos/acme/shop/contents/.consort%2Fspec.json`,
      contentFile(ARTIFACT_PATHS.spec, storiesText),
      2,
    );
    expectChecks(h.github, STORIES);
    expectStickyComment(h.github, branch, STORIES);
    const payload = pushPayload([
      { id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] },
    ]);
    const delivery = await h.receive("push", payload);
    const head = state.head;
    await h.receive("push", payload, delivery);
    h.github.verify();
    expect(state.head).toBe(head);
    expect(state.updates.filter((u) => u.accepted)).toHaveLength(1);
  });

  it("a tampered state file fails every check with the re-seal button and advances nothing", async () => {
    const path = `tracks/${branch}.json`;
    state.write(path, state.text(path)!.replace('"stage": "stories"', '"stage": "test-list-gate"'));
    const tampered = state.head;
    expectDefaultConfig(h.github);
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT]);
    h.github.on("GET", `/repos/acme/shop/contents/.consort%2Fspec.json`, contentFile(ARTIFACT_PATHS.spec, storiesText));
    expectChecks(h.github, STORIES);

    await h.receive(
      "push",
      pushPayload([{ id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] }]),
    );
    h.github.verify();

    expect(state.head).toBe(tampered);
    for (const check of Object.values(createdChecks(h.github))) {
      expect(check).toMatchObject({
        conclusion: "failure",
        output: { title: "State file is tampered" },
        actions: [{ identifier: "reseal" }],
      });
      expect(check.output.summary).toContain("signature");
    }
  });

  it("a concurrent writer that wins every compare-and-swap fails the checks saying so, and nothing is applied", async () => {
    state.racesBeforeUpdate = 5;
    expectDefaultConfig(h.github);
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT]);
    h.github.on("GET", `/repos/acme/shop/contents/.consort%2Fspec.json`, contentFile(ARTIFACT_PATHS.spec, storiesText));
    expectChecks(h.github, STORIES);

    await h.receive(
      "push",
      pushPayload([{ id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] }]),
    );
    h.github.verify();

    expect(state.updates.map((u) => u.accepted)).toEqual([false, false, false, false, false]);
    expect(state.state(branch)!.snapshot).toMatchObject({ stage: "stories" });
    for (const check of Object.values(createdChecks(h.github))) {
      expect(check).toMatchObject({
        conclusion: "failure",
        output: { title: "Consort could not record this event" },
        actions: [{ identifier: "rerun-cycle" }],
      });
    }
  });

  it("one lost compare-and-swap is re-read and re-applied", async () => {
    state.racesBeforeUpdate = 1;
    expectDefaultConfig(h.github);
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT]);
    h.github.on("GET", `/repos/acme/shop/contents/.consort%2Fspec.json`, contentFile(ARTIFACT_PATHS.spec, storiesText));
    expectChecks(h.github, STORIES);
    expectStickyComment(h.github, branch, STORIES);
    await h.receive(
      "push",
      pushPayload([{ id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] }]),
    );
    h.github.verify();
    // The other replica rewrote the track's file first: ours lost its compare-and-swap, then was re-applied on top.
    expect(state.updates.map((u) => u.accepted)).toEqual([false, true]);
    expect(state.state(branch)!.snapshot).toMatchObject({ stage: "spec" });
  });

  it("a push to a branch that is not a track changes nothing", async () => {
    expectDefaultConfig(h.github);
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT]);
    h.github.on("GET", `/repos/acme/shop/contents/.consort%2Fspec.json`, contentFile(ARTIFACT_PATHS.spec, storiesText));
    const payload = pushPayload([
      { id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] },
    ]);
    await h.receive("push", { ...payload, ref: "refs/heads/not-a-track" });
    h.github.verify();
    expect(state.updates).toHaveLength(0);
  });
});

describe("push with agents enabled", () => {
  it("dispatches consort-agent.yml at the default branch for the next role, with the NextAction as the one input", async () => {
    h.github.on(
      "GET",
      "/repos/acme/shop/contents/.github%2Fconsort.yml",
      contentFile(".github/consort.yml", "agents:\n  enabled: true\n  command: claude -p\n"),
    );
    expectVerifiedPush(h.github, state, START, [STORIES_COMMIT]);
    h.github.on("GET", `/repos/acme/shop/contents/.consort%2Fspec.json`, contentFile(ARTIFACT_PATHS.spec, storiesText));
    h.github.on("POST", "/repos/acme/shop/actions/workflows/consort-agent.yml/dispatches", [
      200,
      {
        workflow_run_id: 31,
        run_url: "https://api.github.com/repos/acme/shop/actions/runs/31",
        html_url: "https://github.com/acme/shop/actions/runs/31",
      },
    ]);
    expectChecks(h.github, STORIES);
    expectStickyComment(h.github, branch, STORIES);

    await h.receive(
      "push",
      pushPayload([{ id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] }]),
    );
    h.github.verify();

    const body = h.github.calls("POST", "/repos/acme/shop/actions/workflows/consort-agent.yml/dispatches")[0]!.body as {
      ref: string;
      inputs: { request: string };
      return_run_details: boolean;
    };
    expect(body.ref).toBe("main");
    expect(Object.keys(body.inputs)).toEqual(["request"]);
    const request = JSON.parse(body.inputs.request);
    expect(request).toEqual({
      version: 1,
      track: branch,
      role: "spec-author",
      commit: STORIES,
      nextAction: expect.objectContaining({ role: "spec-author", stage: "spec" }),
      allowedPaths: request.nextAction.allowedPaths,
    });
    expect(request.allowedPaths.length).toBeGreaterThan(0);
  });
});

describe("payloads are parsed at the edge", () => {
  it("a push payload without its commits is refused before any API call", async () => {
    const payload = pushPayload([
      { id: STORIES, role: "product-owner", author: "po-bot[bot]", added: [ARTIFACT_PATHS.spec] },
    ]) as Record<string, unknown>;
    delete payload.commits;
    await expect(h.receive("push", payload)).rejects.toThrow(/unexpected payload: commits/);
    expect(h.github.requests).toHaveLength(0);
    expect(state.updates).toHaveLength(0);
  });
});
