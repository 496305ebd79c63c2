import { requestDigest } from "../../src/github/dispatch.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { reach } from "../orchestrator/helpers/reach.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { type FakeStateBranch, inRepo, INSTALLATION_ID } from "./fake-repo.js";
import { testDatabase, type TestDatabase } from "./database.js";
import {
  commitSha,
  createdChecks,
  expectChecks,
  expectConfig,
  expectStickyComment,
  pullRequestPayload,
  simulatedTrack,
  stateOf,
} from "./scenario.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { trackIdForBranch } from "../../src/state/index.js";

let h: Harness;
let state: FakeStateBranch;
let db: TestDatabase;
let branch: string;

beforeEach(async () => {
  db = testDatabase();
  ({ h, state, branch } = trackRepo({ openProvider: db.openProvider }));
});
afterEach(async () => {
  h.github.dispose();
  await db.cleanup([branch]);
});

/** A track at `stories` whose paired database branch really exists, forked from the root. */
async function liveTrack(): Promise<TrackSnapshot> {
  const provider = await db.openProvider({
    provider: "postgres",
    local: {},
    postgres: { urlEnv: "CONSORT_HANDLER_TEST_PG_URL", rootDatabase: db.root },
  });
  try {
    await provider.createBranch(branch, { from: await provider.rootBranch() });
  } finally {
    await provider.close();
  }
  const snapshot = simulatedTrack(branch).snapshot;
  snapshot.context.parentDatabaseBranch = db.root;
  state.seed(stateOf(branch, snapshot));
  return snapshot;
}

describe("tearing a track down", () => {
  it("deleting the branch abandons the track and deletes its database branch", async () => {
    const snapshot = await liveTrack();
    expect(await db.branchExists(branch)).toBe(true);
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectConfig(h.github, db.configYaml);
    expectChecks(h.github, snapshot.context.head);
    h.github.on("GET", "/repos/acme/shop/pulls", [200, []]);

    await h.receive("delete", inRepo({ ...webhookPayload("delete"), ref: branch, ref_type: "branch" }));
    h.github.verify();

    expect(await db.branchExists(branch)).toBe(false);
    expect(state.state(branch)!.snapshot).toMatchObject({
      stage: "abandoned",
      context: { ended: { reason: `branch ${branch} was deleted` } },
    });
  });

  it("merge_group.destroyed ends the track an older version took a merge queue's branch for, and deletes its database branch", async () => {
    const snapshot = await liveTrack();
    const queue = `gh-readonly-queue/main/pr-7-${commitSha("main-tip")}`;
    const trackId = trackIdForBranch(queue);
    state.seed({ ...stateOf(branch, snapshot), trackId, branch: queue });
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectConfig(h.github, db.configYaml);
    expectChecks(h.github, snapshot.context.head);
    h.github.on("GET", "/repos/acme/shop/pulls", [200, []]);
    const example = webhookPayload("merge_group", "checks_requested");
    const payload = inRepo({
      ...example,
      action: "destroyed",
      reason: "merged",
      merge_group: { ...example.merge_group, head_ref: `refs/heads/${queue}`, base_ref: "refs/heads/main" },
    });

    await h.receive("merge_group", payload);
    h.github.verify();

    expect(await db.branchExists(branch)).toBe(false);
    expect(state.state(trackId)!.snapshot).toMatchObject({
      stage: "abandoned",
      context: { ended: { reason: `branch ${queue} was deleted` } },
    });
  });

  it("deleting a branch whose name maps to a track of another branch abandons nothing", async () => {
    const snapshot = await liveTrack();
    // The state under this branch's id belongs to another git branch (an older id rule, or a hash collision).
    state.seed({ ...stateOf(branch, snapshot), branch: `Other/${branch}` });
    const before = state.head;
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectConfig(h.github, db.configYaml);

    await h.receive("delete", inRepo({ ...webhookPayload("delete"), ref: branch, ref_type: "branch" }));
    h.github.verify();

    expect(state.head).toBe(before);
    expect(await db.branchExists(branch)).toBe(true);
    expect(state.state(branch)!.snapshot).toMatchObject({ stage: "stories" });
  });

  it("closing the PR without merging abandons the track and deletes its database branch; every check fails", async () => {
    const snapshot = await liveTrack();
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectConfig(h.github, db.configYaml);
    expectChecks(h.github, snapshot.context.head);
    expectStickyComment(h.github, branch, snapshot.context.head);
    const example = webhookPayload("pull_request", "closed");
    await h.receive(
      "pull_request",
      pullRequestPayload(example, branch, snapshot.context.head, { merged: false, merge_commit_sha: null }),
    );
    h.github.verify();

    expect(await db.branchExists(branch)).toBe(false);
    expect(state.state(branch)!.snapshot).toMatchObject({ stage: "abandoned" });
    for (const [name, check] of Object.entries(createdChecks(h.github))) {
      if (name !== "consort/schema") expect(check.conclusion, name).toBe("failure");
    }
  });
});

describe("merging", () => {
  it("a merged PR after the promote gate dispatches the parent's migration (consort-promote.yml) with one JSON input", async () => {
    const sim = reach("merging");
    const snapshot = structuredClone(sim.snapshot);
    Object.assign(snapshot.context, { trackId: branch, branch, databaseBranch: branch, parentDatabaseBranch: db.root });
    state.seed(stateOf(branch, snapshot));
    const merge = commitSha("merge");
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectConfig(h.github, db.configYaml);
    h.github.on("POST", "/repos/acme/shop/actions/workflows/consort-promote.yml/dispatches", [204]);
    h.github.on(
      "GET",
      /\/repos\/acme\/shop\/commits\/[0-9a-f]{40}\/check-runs/,
      [200, { total_count: 0, check_runs: [] }],
      Infinity,
    );
    h.github.on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], Infinity);
    h.github.on("GET", "/repos/acme/shop/pulls", [200, []]);

    await h.receive(
      "pull_request",
      pullRequestPayload(webhookPayload("pull_request", "closed"), branch, snapshot.context.head, {
        merged: true,
        merge_commit_sha: merge,
      }),
    );
    h.github.verify();

    const after = state.state(branch)!;
    const pending = (after.snapshot as TrackSnapshot).context.pendingDispatch!;
    expect(after.snapshot).toMatchObject({ stage: "promoting" });
    const body = h.github.calls("POST", "/repos/acme/shop/actions/workflows/consort-promote.yml/dispatches")[0]!
      .body as { ref: string; inputs: { request: string } & Record<string, unknown> };
    expect(body.ref).toBe("main");
    expect(body).not.toHaveProperty("return_run_details");
    expect(JSON.parse(body.inputs.request)).toEqual({
      version: 1,
      dispatchId: pending.dispatchId,
      track: branch,
      commit: merge,
      database: { parent: db.root, track: branch },
    });
    // Recorded in the same write as the merge: no run id, and the hash of the very request sent.
    expect(after.cycles.find((c) => c.dispatchId === pending.dispatchId)).toMatchObject({
      runId: null,
      step: "promote",
      requestSha256: requestDigest(JSON.parse(body.inputs.request)),
    });
    expect(state.updates.filter((u) => u.accepted)).toHaveLength(1);
  });
});
