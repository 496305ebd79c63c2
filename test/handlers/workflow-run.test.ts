import { zipSync, strToU8 } from "fflate";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requestDigest } from "../../src/github/dispatch.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import type { CycleResult } from "../../src/contracts/cycle-result.js";
import { webhookPayload } from "../helpers/webhooks.js";
import type { TrackSim } from "../orchestrator/helpers/track.js";
import { createHarness, type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { FakeStateBranch, inRepo, INSTALLATION_ID, REPOSITORY_ID } from "./fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  simulatedTrack,
  stateOf,
} from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let branch: string;
let sim: TrackSim;
const RUN_ID = 987;

/** A track whose T1 RED commit was pushed: the RED cycle is dispatched and run 987 recorded. */
function atRedVerify(): TrackSim {
  const track = simulatedTrack(branch).throughDesign();
  const unit = track.context.units[track.context.unitIndex]!;
  const files = Object.fromEntries(
    unit.tests.map((t) => [t.file, `it(${JSON.stringify(t.title)}, () => expect(1).toBe(2));\n`]),
  );
  track.expectAccepted(track.push({ role: "navigator", files }));
  expect(track.stage).toBe("red-verify");
  return track;
}

/** The request Consort dispatched for the pending RED cycle, as the runner parses it. */
function dispatchedRequest(): CycleRequest {
  const pending = sim.context.pendingDispatch!;
  const unit = sim.context.units[sim.context.unitIndex]!;
  const tests = unit.tests.map((t) => ({ id: t.id, file: t.file, title: t.title }));
  return CycleRequest.parse({
    version: 1,
    dispatchId: pending.dispatchId,
    track: branch,
    step: "red",
    commit: pending.commit,
    tests: { inTurn: tests, earlierGreen: [] },
    frozenTestFiles: [],
    database: { branch },
    ttlSeconds: 3600,
  });
}

/** The track as the dispatch left it: the request's hash recorded with the step, no run id (the run-name carries the dispatch id). */
function seed(runId: number | null = null) {
  const seeded = stateOf(branch, sim.snapshot);
  const requestSha256 = requestDigest(dispatchedRequest());
  seeded.cycles = seeded.cycles.map((c) =>
    c.dispatchId === sim.context.pendingDispatch!.dispatchId ? { ...c, runId, requestSha256 } : c,
  );
  state.seed(seeded);
}

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  sim = atRedVerify();
  seed();
});
afterEach(() => h.github.dispose());

function runPayload(overrides: Record<string, unknown> = {}) {
  // The recording that carries `actor` and `triggering_actor`, as GitHub's payload schema requires.
  const example = webhookPayload("workflow_run", "completed", 1);
  const bot = { ...example.workflow_run.actor, login: "consort[bot]", type: "Bot" };
  return inRepo({
    ...example,
    workflow: { ...example.workflow, path: ".github/workflows/consort-cycle.yml" },
    workflow_run: {
      ...example.workflow_run,
      id: RUN_ID,
      path: ".github/workflows/consort-cycle.yml",
      event: "workflow_dispatch",
      status: "completed",
      conclusion: "success",
      head_branch: "main",
      head_repository: { ...example.workflow_run.head_repository, id: REPOSITORY_ID },
      html_url: `https://github.com/acme/shop/actions/runs/${RUN_ID}`,
      display_title: `consort cycle ${sim.context.pendingDispatch!.dispatchId}`,
      actor: bot,
      triggering_actor: bot,
      ...overrides,
    },
  });
}

function cycleResult(commit: string, verdict: "verified" | "refused" = "verified"): CycleResult {
  const request = dispatchedRequest();
  const tests = request.tests.inTurn;
  return {
    version: 1,
    request,
    step: "red",
    commit,
    database: { provider: "postgres", trackBranch: branch, cycleBranch: `${branch}-c1`, dropped: true },
    startedAt: "2026-03-01T11:58:00.000Z",
    finishedAt: "2026-03-01T11:59:00.000Z",
    timingsMs: { fork: 40, migrate: 200, tests: 900, verdict: 5, drop: 20, total: 1165 },
    commands: {},
    tests: tests.map((t) => ({
      ...t,
      role: "turn" as const,
      outcome: "failed-assertion" as const,
      message: "expected 1 to be 2",
    })),
    verdict,
    reasons:
      verdict === "verified"
        ? [`${tests[0]!.id} fails by an assertion`]
        : ["T1 failed with a TypeError, not an assertion"],
    warnings: [],
  };
}

/** The run's artifact, served from the blob store GitHub redirects to. */
function expectArtifact(result: unknown) {
  h.github
    .on("GET", `/repos/acme/shop/actions/runs/${RUN_ID}/artifacts`, [
      200,
      { total_count: 1, artifacts: [{ id: 55, name: "consort-cycle-result", size_in_bytes: 900, expired: false }] },
    ])
    .on("GET", "/repos/acme/shop/actions/artifacts/55/zip", [
      302,
      undefined,
      { Location: "https://blob.example.test/artifacts/55.zip" },
    ]);
  nock("https://blob.example.test")
    .get("/artifacts/55.zip")
    .reply(200, Buffer.from(zipSync({ "cycle-result.json": strToU8(JSON.stringify(result)) })), {
      "content-type": "application/zip",
    });
}

describe("workflow_run.completed", () => {
  it("a verified RED from the run Consort dispatched advances the track to GREEN, with the run linked as evidence", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    const commit = sim.context.pendingDispatch!.commit;
    expectArtifact(cycleResult(commit));
    expectDefaultConfig(h.github);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);

    await h.receive("workflow_run", runPayload());
    h.github.verify();

    const after = state.state(branch)!;
    expect(after.snapshot).toMatchObject({ stage: "green" });
    expect(after.cycles.at(-1)).toMatchObject({ runId: RUN_ID, verdict: "valid", commit });
    // The build waits on the next test now: in progress on this head, never success; the comment links the evidence.
    expect([
      createdChecks(h.github)["consort/build"]?.status,
      createdChecks(h.github)["consort/build"]?.conclusion,
    ]).toEqual(["in_progress", undefined]);
    const comment = h.github.calls("POST", "/repos/acme/shop/issues/7/comments")[0]!.body as { body: string };
    expect(comment.body).toContain(`actions/runs/${RUN_ID}`);
  });

  it("a run whose run-name names no dispatch (run by hand) is ignored without reading any state", async () => {
    const before = state.head;
    await h.receive("workflow_run", runPayload({ display_title: "consort cycle" }));
    h.github.verify();
    expect(state.head).toBe(before);
    expect(h.github.requests).toHaveLength(0);
  });

  it("a run naming a dispatch the track never made is ignored", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    const before = state.head;
    await h.receive("workflow_run", runPayload({ display_title: `consort cycle ${branch}#999` }));
    h.github.verify();
    expect(state.head).toBe(before);
    expect(h.github.calls("GET", /artifacts/)).toHaveLength(0);
  });

  it("a second run naming a dispatch whose run already reported is ignored", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    seed(RUN_ID + 1);
    const before = state.head;
    await h.receive("workflow_run", runPayload());
    h.github.verify();
    expect(state.head).toBe(before);
    expect(h.github.calls("GET", /artifacts/)).toHaveLength(0);
  });

  /** Expect the track's checks and comment to be written again, naming the ignored run. */
  function expectNamed(): void {
    expectDefaultConfig(h.github);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);
  }
  const named = (reason: string) =>
    `Ignored run ${RUN_ID} (https://github.com/acme/shop/actions/runs/${RUN_ID}): ${reason}. Consort still waits for the run it dispatched as ${sim.context.pendingDispatch!.dispatchId}.`;

  it("a run of the workflow as a track rewrote it (not from the default branch) is ignored and named on the build check", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectNamed();
    const before = state.head;
    await h.receive("workflow_run", runPayload({ head_branch: branch }));
    h.github.verify();
    expect(state.head).toBe(before);
    expect(h.github.calls("GET", /artifacts/)).toHaveLength(0);
    expect(createdChecks(h.github)["consort/build"]?.output.summary).toContain(
      named(`run ${RUN_ID} ran .github/workflows/consort-cycle.yml from "${branch}", not from the default branch main`),
    );
  });

  it("a result about another commit than the one Consort asked to test is ignored and named on the build check", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectNamed();
    const before = state.head;
    expectArtifact(cycleResult("f".repeat(40)));
    await h.receive("workflow_run", runPayload());
    h.github.verify();
    expect(state.head).toBe(before);
    expect(createdChecks(h.github)["consort/build"]?.status).toBe("in_progress");
  });

  it("without the app's login to judge who started a run, a result for another request does not end the dispatch: it is named and the track waits", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectNamed();
    const before = state.head;
    const result = cycleResult(sim.context.pendingDispatch!.commit);
    const altered = { ...result.request, ttlSeconds: 60 };
    expectArtifact({ ...result, request: altered });
    await h.receive("workflow_run", runPayload());
    h.github.verify();
    expect(state.head).toBe(before);
    const dispatched = requestDigest(dispatchedRequest());
    expect(createdChecks(h.github)["consort/build"]?.output.summary).toContain(
      named(
        `run ${RUN_ID}'s result answers another request than the one Consort dispatched (sha256 ${requestDigest(altered).slice(0, 12)}, dispatched ${dispatched.slice(0, 12)})`,
      ),
    );
  });

  it("a run of another workflow costs no API call at all", async () => {
    await h.receive("workflow_run", runPayload({ path: ".github/workflows/ci.yml" }));
    h.github.verify();
    expect(h.github.requests).toHaveLength(0);
  });

  it("a trusted run that left no result ends the cycle as an error: the build check fails with a re-run button", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    h.github.on("GET", `/repos/acme/shop/actions/runs/${RUN_ID}/artifacts`, [200, { total_count: 0, artifacts: [] }]);
    expectDefaultConfig(h.github);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);

    await h.receive("workflow_run", runPayload({ conclusion: "failure" }));
    h.github.verify();

    const after = state.state(branch)!;
    expect(after.cycles.at(-1)).toMatchObject({ runId: RUN_ID, verdict: "error" });
    const build = createdChecks(h.github)["consort/build"]!;
    expect(build).toMatchObject({ conclusion: "failure", actions: [{ identifier: "rerun-cycle" }] });
    expect(build.output.summary).toContain("uploaded no");
  });
});

describe("a cycle that never reports", () => {
  it("ends as a failing build check saying so, with a re-run button, on the next event that notices it", async () => {
    h.github.dispose();
    h = createHarness({ clock: () => new Date(Date.parse(sim.context.cycles.at(-1)!.dispatchedAt) + 31 * 60_000) });
    state = new FakeStateBranch(h.github);
    seed();
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectDefaultConfig(h.github);
    expectChecks(h.github, sim.context.head);
    expectStickyComment(h.github, branch, sim.context.head);
    const example = webhookPayload("pull_request", "synchronize");
    const payload = inRepo({
      ...example,
      number: 7,
      pull_request: {
        ...example.pull_request,
        number: 7,
        head: {
          ...example.pull_request.head,
          ref: branch,
          sha: sim.context.head,
          repo: { ...example.pull_request.head.repo, id: REPOSITORY_ID },
        },
        base: { ...example.pull_request.base, ref: "main" },
      },
    });

    await h.receive("pull_request", payload);
    h.github.verify();

    expect(state.state(branch)!.cycles.at(-1)).toMatchObject({ verdict: "error" });
    const build = createdChecks(h.github)["consort/build"]!;
    expect(build).toMatchObject({ conclusion: "failure", actions: [{ identifier: "rerun-cycle" }] });
    expect(build.output.summary).toContain("has not reported a result within 30 minutes");
  });
});
