import { Octokit } from "@octokit/rest";
import { strToU8, zipSync } from "fflate";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requestDigest } from "../../src/github/dispatch.js";
import { reportedEvent, trustedReport, type Report } from "../../src/engine/ingest.js";
import type { EngineDeps } from "../../src/engine/track.js";
import type { RecordedRun, ReportedRun } from "../../src/engine/provenance.js";
import { trackReport } from "../../src/app/report-view.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { confinementLine } from "../../src/cycle/summary.js";
import { DeployEvidence, PROMOTE_RESULT_FILE, PromoteRequest, PromoteResult } from "../../src/contracts/deploy.js";
import { renderCheckRuns } from "../../src/report/render.js";
import { GitHubMock } from "../helpers/github.js";
import { TrackSim } from "../orchestrator/helpers/track.js";

/** What the app makes of a release's evidence: the consort/deploy check says how its commands ran. */

const config = ConsortConfig.parse({});
const RUN_ID = 4321;

/** A successful run of the deploy workflow from the default branch, naming `dispatchId`. */
function reportedRunOf(dispatchId: string): ReportedRun {
  return {
    id: RUN_ID,
    path: ".github/workflows/consort-deploy.yml",
    event: "workflow_dispatch",
    headBranch: "main",
    headRepositoryId: 1,
    repositoryId: 1,
    conclusion: "success",
    htmlUrl: `https://github.com/acme/stockflow/actions/runs/${RUN_ID}`,
    dispatchId,
    actor: "consort[bot]",
    triggeringActor: "consort[bot]",
  };
}

/** A two-test track at its release: every unit verified, the release cycle dispatched. */
function atRelease(): TrackSim {
  const sim = new TrackSim().throughDesign();
  sim.throughUnit().throughUnit();
  expect(sim.stage).toBe("deploying");
  return sim;
}

/** The release job's evidence for the pending dispatch, verified, with its confinement as given. */
function releaseEvidence(sim: TrackSim, confinement: DeployEvidence["confinement"]): DeployEvidence {
  const pending = sim.context.pendingDispatch!;
  return DeployEvidence.parse({
    version: 1,
    request: {
      version: 1,
      dispatchId: pending.dispatchId,
      track: sim.context.branch,
      commit: pending.commit,
      database: { branch: sim.context.databaseBranch, parent: sim.context.parentDatabaseBranch },
    },
    commit: pending.commit,
    mode: "preview",
    database: { provider: "postgres", branch: sim.context.databaseBranch, parent: sim.context.parentDatabaseBranch },
    migrationsApplied: [],
    verify: { outcome: "passed", command: "npm run smoke" },
    previewUrl: null,
    startedAt: "2026-12-01T12:00:00.000Z",
    finishedAt: "2026-12-01T12:01:00.000Z",
    ...(confinement ? { confinement } : {}),
    verdict: "verified",
    reasons: [],
    warnings: [],
  });
}

/** The consort/deploy check's summary after the app took the release's report. */
function deployCheckAfter(confinement: DeployEvidence["confinement"]): string {
  const sim = atRelease();
  const pending = sim.context.pendingDispatch!;
  const deploy = releaseEvidence(sim, confinement);
  const report: Report = { outcome: "valid", reasons: [], commit: pending.commit, deploy };
  const recorded: RecordedRun = {
    runId: RUN_ID,
    workflow: "deploy",
    commit: pending.commit,
    dispatchId: pending.dispatchId,
    requestSha256: undefined,
  };
  const run = reportedRunOf(pending.dispatchId);
  const event = reportedEvent(sim.snapshot, recorded, run, report, "2026-12-01T12:02:00.000Z");
  expect(event?.type).toBe("deploy.reported");
  sim.expectAccepted(sim.send(event!));
  expect(sim.stage).toBe("deploy-gate");
  const runs = renderCheckRuns(
    trackReport({ repository: "acme/stockflow", snapshot: sim.snapshot, headSha: sim.context.head, config }),
  );
  return runs.find((r) => r.name === "consort/deploy")!.output.summary;
}

describe("a release's confinement in the consort/deploy check", () => {
  it("a release whose commands ran unconfined says so plainly beside its verdict", () => {
    const reason = "the job runs as an ordinary user without passwordless sudo";
    const summary = deployCheckAfter({ confined: false, reason });
    expect(summary).toContain(`> ${confinementLine({ confined: false, reason })}`);
  });

  it("a release from an action that records no confinement is read as unconfined", () => {
    expect(deployCheckAfter(undefined)).toContain(`> ${confinementLine(undefined)}`);
  });

  it("a confined release carries no warning", () => {
    const summary = deployCheckAfter({ confined: true, user: "consort-untrusted", uid: 999 });
    expect(summary).not.toContain("Ran unconfined");
    expect(summary).not.toContain("> ");
  });
});

describe("a promotion's confinement in the closing comment", () => {
  let github: GitHubMock;
  beforeEach(() => {
    github = new GitHubMock();
  });
  afterEach(() => github.dispose());

  /** The track after the merge: the promotion dispatched and waiting for its run. */
  function atPromotion(): TrackSim {
    const sim = atRelease();
    sim.expectAccepted(sim.report("valid"));
    sim.expectAccepted(sim.approve("deploy"));
    sim.expectAccepted(sim.approve("promote"));
    sim.expectAccepted(sim.send({ type: "merged", at: "2026-12-01T12:03:00.000Z", commit: sim.context.head }));
    expect(sim.stage).toBe("promoting");
    return sim;
  }

  it("a promotion whose migrate command ran unconfined says so in the Done comment", async () => {
    const sim = atPromotion();
    const pending = sim.context.pendingDispatch!;
    const request = PromoteRequest.parse({
      version: 1,
      dispatchId: pending.dispatchId,
      track: sim.context.branch,
      commit: pending.commit,
      database: { parent: sim.context.parentDatabaseBranch, track: sim.context.databaseBranch },
    });
    const reason = "the job runs as an ordinary user without passwordless sudo";
    const result = PromoteResult.parse({
      version: 1,
      request,
      commit: pending.commit,
      database: { provider: "postgres", parent: "main", snapshot: "main-pre-c0000000", snapshotKept: false },
      migrate: { command: "npm run migrate", exitCode: 0, durationMs: 900, outputTail: "migrated" },
      startedAt: "2026-12-01T12:04:00.000Z",
      finishedAt: "2026-12-01T12:05:00.000Z",
      confinement: { confined: false, reason },
      verdict: "promoted",
      reasons: [],
      warnings: [],
    });
    const zip = zipSync({ [PROMOTE_RESULT_FILE]: strToU8(JSON.stringify(result)) });
    github
      .on("GET", `/repos/acme/stockflow/actions/runs/${RUN_ID}/artifacts`, [
        200,
        {
          total_count: 1,
          artifacts: [
            {
              id: 77,
              node_id: "A",
              name: "consort-cycle-result",
              size_in_bytes: zip.length,
              url: "",
              archive_download_url: "",
              expired: false,
              created_at: null,
              expires_at: null,
              updated_at: null,
            },
          ],
        },
      ])
      .on("GET", "/repos/acme/stockflow/actions/artifacts/77/zip", [
        302,
        undefined,
        { Location: "https://blob.example.test/zip/77" },
      ]);
    const blob = nock("https://blob.example.test")
      .get("/zip/77")
      .reply(200, Buffer.from(zip), { "content-type": "application/zip" });
    const run = { ...reportedRunOf(pending.dispatchId), path: ".github/workflows/consort-promote.yml" };
    const recorded: RecordedRun = {
      runId: RUN_ID,
      workflow: "promote",
      commit: pending.commit,
      dispatchId: pending.dispatchId,
      requestSha256: requestDigest(request),
    };
    const deps: EngineDeps = {
      octokit: new Octokit({ auth: "ghs_test", log: { debug() {}, info() {}, warn() {}, error() {} } }),
      log: { debug() {}, info() {}, warn() {}, error() {} },
      services: {
        appId: 1,
        stateKey: "k",
        clock: () => new Date(),
        openProvider: () => Promise.reject(new Error("no provider")),
      },
      deliveryId: "d-1",
      repo: { owner: "acme", repo: "stockflow", fullName: "acme/stockflow", defaultBranch: "main" },
    };

    const trusted = await trustedReport(deps, run, recorded);
    expect(trusted).toEqual({
      trusted: true,
      report: { outcome: "valid", reasons: [confinementLine({ confined: false, reason })], commit: pending.commit },
    });
    const report = (trusted as { report: Report }).report;
    sim.expectAccepted(sim.send(reportedEvent(sim.snapshot, recorded, run, report, "2026-12-01T12:06:00.000Z")!));
    expect(sim.stage).toBe("done");
    const comments = sim.last.effects.filter((e) => e.type === "comment").map((e) => e.body);
    expect(comments).toEqual([
      `**Done.** ${confinementLine({ confined: false, reason })} The track's database branch is deleted.`,
    ]);
    expect(blob.isDone()).toBe(true);
    github.verify();
  });
});
