import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { TEST_APP_ID } from "../helpers/github.js";
import type { TrackSim } from "../orchestrator/helpers/track.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { type FakeStateBranch, inRepo, INSTALLATION_ID } from "./fake-repo.js";
import {
  afterErroredRed,
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  simulatedTrack,
  stateOf,
} from "./scenario.js";

/** "Re-run all checks" on Consort's check suite of a track's head (`check_suite.rerequested`). */

let h: Harness;
let state: FakeStateBranch;
let branch: string;
let sim: TrackSim;

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
});
afterEach(() => h.github.dispose());

const DISPATCHES = "/repos/acme/shop/actions/workflows/consort-cycle.yml/dispatches";

function rerunAll(sender: string, appId = TEST_APP_ID) {
  const example = webhookPayload("check_suite", "rerequested");
  return inRepo({
    ...example,
    sender: { ...example.sender, login: sender },
    check_suite: { ...example.check_suite, head_branch: branch, head_sha: sim.context.head, app: { id: appId } },
  });
}

const permission = (user: string, level: string) =>
  h.github.on("GET", `/repos/acme/shop/collaborators/${user}/permission`, [
    200,
    { permission: level, role_name: level, user: { login: user } },
  ]);

describe("check_suite.rerequested", () => {
  it("by a writer, re-dispatches a cycle that errored, as Re-run cycle does, and writes the checks again", async () => {
    sim = afterErroredRed(branch);
    state.seed(stateOf(branch, sim.snapshot));
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("lead-human", "write");
    expectDefaultConfig(h.github);
    h.github.on("POST", DISPATCHES, [204]);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);

    await h.receive("check_suite", rerunAll("lead-human"));
    h.github.verify();

    const after = state.state(branch)!;
    const pending = (after.snapshot as { context: { pendingDispatch: { dispatchId: string; step: string } | null } })
      .context.pendingDispatch;
    expect(pending).toMatchObject({ step: "red" });
    const request = JSON.parse(
      (h.github.calls("POST", DISPATCHES)[0]!.body as { inputs: { request: string } }).inputs.request,
    ) as { dispatchId: string; commit: string };
    expect([request.dispatchId, request.commit]).toEqual([pending!.dispatchId, sim.context.head]);
    expect(state.updates.filter((u) => u.accepted)).toHaveLength(1);
  });

  it("by a writer on a track with nothing to retry, writes the checks again as the state stands and no state", async () => {
    sim = simulatedTrack(branch);
    state.seed(stateOf(branch, sim.snapshot));
    const before = state.head;
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("lead-human", "write");
    expectDefaultConfig(h.github);
    expectChecks(h.github, sim.context.head, 1);
    expectStickyComment(h.github, branch, sim.context.head);

    await h.receive("check_suite", rerunAll("lead-human"));
    h.github.verify();

    expect(state.head).toBe(before);
    expect(h.github.calls("POST", DISPATCHES)).toHaveLength(0);
    // The schema waits: on the default `local` with hosted runners only the release job can compute it.
    expect(Object.keys(createdChecks(h.github)).sort()).toEqual(["consort/discipline"]);
    // Nothing the machine refused is shown as a refusal: the comment carries no "Refused" note.
    const comment = h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string };
    expect(comment.body).not.toContain("Refused");
  });

  it("by a reader changes nothing and dispatches nothing", async () => {
    sim = afterErroredRed(branch);
    state.seed(stateOf(branch, sim.snapshot));
    const before = state.head;
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("drive-by", "read");

    await h.receive("check_suite", rerunAll("drive-by"));
    h.github.verify();

    expect(state.head).toBe(before);
    expect(h.github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /app/installations/${INSTALLATION_ID}/access_tokens`,
      "GET /repos/acme/shop/collaborators/drive-by/permission",
    ]);
  });

  it("another app's suite on the same head is not Consort's to re-run", async () => {
    sim = afterErroredRed(branch);
    state.seed(stateOf(branch, sim.snapshot));
    await h.receive("check_suite", rerunAll("lead-human", TEST_APP_ID + 1));
    h.github.verify();
    expect(h.github.requests).toHaveLength(0);
  });
});
