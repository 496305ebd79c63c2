import { requestDigest } from "../../src/github/dispatch.js";
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
  stateOf,
} from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let branch: string;
let sim: TrackSim;

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  sim = afterErroredRed(branch);
  state.seed(stateOf(branch, sim.snapshot));
});
afterEach(() => h.github.dispose());

function click(
  identifier: string,
  sender: string,
  action: "requested_action" | "rerequested" = "requested_action",
  appId = TEST_APP_ID,
) {
  const example = webhookPayload("check_run", action);
  return inRepo({
    ...example,
    action,
    sender: { ...example.sender, login: sender },
    check_run: {
      ...example.check_run,
      name: "consort/build",
      head_sha: sim.context.head,
      app: { ...example.check_run.app, id: appId },
      check_suite: { ...example.check_run.check_suite, head_branch: branch },
    },
    ...(action === "requested_action" ? { requested_action: { identifier } } : {}),
  });
}

const permission = (user: string, level: string, times = 1) =>
  h.github.on(
    "GET",
    `/repos/acme/shop/collaborators/${user}/permission`,
    [200, { permission: level, role_name: level, user: { login: user } }],
    times,
  );

describe("check_run buttons", () => {
  it("Re-run cycle by a writer dispatches the cycle again at the default branch, recording the request's hash in the same state write", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("lead-human", "write");
    expectDefaultConfig(h.github);
    h.github.on("POST", "/repos/acme/shop/actions/workflows/consort-cycle.yml/dispatches", [204]);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);

    await h.receive("check_run", click("rerun-cycle", "lead-human"));
    h.github.verify();

    const after = state.state(branch)!;
    const pending = (after.snapshot as { context: { pendingDispatch: { dispatchId: string } } }).context
      .pendingDispatch;
    const unit = sim.context.units[0]!;
    const dispatch = h.github.calls("POST", "/repos/acme/shop/actions/workflows/consort-cycle.yml/dispatches")[0]!
      .body as { ref: string; inputs: { request: string } & Record<string, unknown> };
    expect(dispatch.ref).toBe("main");
    expect(dispatch).not.toHaveProperty("return_run_details");
    expect(Object.keys(dispatch.inputs)).toEqual(["request"]);
    expect(JSON.parse(dispatch.inputs.request)).toEqual({
      version: 1,
      dispatchId: pending.dispatchId,
      track: branch,
      step: "red",
      commit: sim.context.head,
      // The tests by id in the approved list, never their titles: the job reads those from git.
      tests: { inTurn: [], earlierGreen: [] },
      testList: {
        path: ".consort/test-list.json",
        sha256: sim.context.gates["test-list"].files[".consort/test-list.json"],
        inTurn: unit.tests.map((t) => t.id),
        earlierGreen: [],
      },
      frozenTestFiles: [],
      // The approved architecture and the commit the design gate approved: the job tells new modules from git.
      architecture: {
        path: ".consort/architecture.json",
        sha256: sim.context.gates.design.files[".consort/architecture.json"],
        approvedAt: sim.context.gates.design.approvals.at(-1)!.commit,
      },
      database: { branch },
      base: { branch: "main" },
      ttlSeconds: 3600,
    });
    expect(after.cycles.find((c) => c.dispatchId === pending.dispatchId)).toMatchObject({
      runId: null,
      verdict: null,
      requestSha256: requestDigest(JSON.parse(dispatch.inputs.request)),
    });
    expect(state.updates.filter((u) => u.accepted)).toHaveLength(1);
  });

  it("a dispatch GitHub refuses fails consort/build saying what failed, with the Re-run cycle button, and the state records it", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("lead-human", "write");
    expectDefaultConfig(h.github);
    h.github.on("POST", "/repos/acme/shop/actions/workflows/consort-cycle.yml/dispatches", [
      422,
      { message: "Workflow does not have 'workflow_dispatch' trigger" },
    ]);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);

    await expect(h.receive("check_run", click("rerun-cycle", "lead-human"))).rejects.toThrow(/dispatchCycle/);
    h.github.verify();

    const build = createdChecks(h.github)["consort/build"]!;
    expect(build).toMatchObject({
      status: "completed",
      conclusion: "failure",
      output: { title: "Workflow dispatch failed" },
      actions: [{ identifier: "rerun-cycle" }],
    });
    expect(build.output.summary).toMatch(/The red workflow \(.+\) was not dispatched: .*workflow_dispatch/);
    expect(build.output.summary).toContain("presses Re-run cycle on consort/build");
    const problems = (state.state(branch)!.snapshot as { context: { lastProblem: string[] } }).context.lastProblem;
    expect(problems.join("\n")).toMatch(/was not dispatched/);
  });

  it("a click by a user without write access changes nothing", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("visitor", "read");
    const before = state.head;
    await h.receive("check_run", click("rerun-cycle", "visitor"));
    h.github.verify();
    expect(state.head).toBe(before);
  });

  it("GitHub's own re-run (rerequested) is a re-run, with the same permission check", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("visitor", "triage");
    const before = state.head;
    await h.receive("check_run", click("", "visitor", "rerequested"));
    h.github.verify();
    expect(state.head).toBe(before);
  });

  it("a click on another app's check run is not ours to act on", async () => {
    await h.receive("check_run", click("rerun-cycle", "lead-human", "requested_action", 999));
    h.github.verify();
    expect(h.github.requests).toHaveLength(0);
  });

  it("Re-seal by an admin restores the last version the app sealed (never the edited one), and the checks come back", async () => {
    const path = `tracks/${branch}.json`;
    const sealed = state.text(path)!;
    state.write(path, sealed.replace(/"updatedAt": "[^"]+"/, '"updatedAt": "2026-03-01T11:11:11.000Z"'));
    expect(() => state.state(branch)).toThrow(/signature/);
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("owner-admin", "admin");
    expectDefaultConfig(h.github);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);

    await h.receive("check_run", click("reseal", "owner-admin"));
    h.github.verify();

    const after = state.state(branch)!;
    expect(after.reseals).toEqual([
      { actor: "owner-admin", at: expect.any(String), reason: "re-sealed from the consort/build check" },
    ]);
    expect(state.text(path)).not.toContain("2026-03-01T11:11:11.000Z");
    expect(after.previousSeal).toBe((JSON.parse(sealed) as { signature: string }).signature);
    expect(createdChecks(h.github)["consort/build"]).toMatchObject({
      conclusion: "failure",
      actions: [{ identifier: "rerun-cycle" }],
    });
  });

  it("Re-seal by a writer who is not an admin is refused and the file stays tampered", async () => {
    const path = `tracks/${branch}.json`;
    state.write(path, state.text(path)!.replace(/"updatedAt": "[^"]+"/, '"updatedAt": "2026-03-01T11:11:11.000Z"'));
    const before = state.head;
    mockInstallationToken(h.github, INSTALLATION_ID);
    permission("writer", "write");
    await h.receive("check_run", click("reseal", "writer"));
    h.github.verify();
    expect(state.head).toBe(before);
    expect(() => state.state(branch)).toThrow(/signature/);
  });
});
