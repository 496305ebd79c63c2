import { createHash } from "node:crypto";
import { Octokit } from "@octokit/rest";
import { zipSync, strToU8 } from "fflate";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dispatchIdOfRunName, dispatchWorkflow } from "../../src/github/dispatch.js";
import { ArtifactError, artifactJson, downloadRunArtifact } from "../../src/github/artifacts.js";
import { isOverdue } from "../../src/engine/timeout.js";
import { GitHubMock } from "../helpers/github.js";

const owner = "acme";
const repo = "shop";
let github: GitHubMock;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const octokit = new Octokit({ auth: "ghs_test", log: quiet });

beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

describe("dispatch", () => {
  it("dispatches consort-cycle.yml at the default branch with one JSON input, without asking GitHub for run details", async () => {
    github.on("POST", "/repos/acme/shop/actions/workflows/consort-cycle.yml/dispatches", [204]);
    const request = { track: "feature-x", step: "red", commit: "a".repeat(40) };
    const run = await dispatchWorkflow({
      octokit,
      owner,
      repo,
      defaultBranch: "main",
      workflow: "cycle",
      request,
      now: new Date("2026-01-01T00:00:00Z"),
    });
    expect(run).toEqual({
      workflow: "cycle",
      dispatchedAt: "2026-01-01T00:00:00.000Z",
      requestSha256: createHash("sha256").update(JSON.stringify(request)).digest("hex"),
    });
    expect(github.requests[0]!.body).toEqual({
      ref: "main",
      inputs: { request: JSON.stringify(request) },
    });
    github.verify();
  });

  it("a request over GitHub's 65,535-character input limit is never sent: the dispatch fails with the reason", async () => {
    const request = { track: "feature-x", step: "red", commit: "a".repeat(40), note: "x".repeat(65_500) };
    const size = JSON.stringify({ request: JSON.stringify(request) }).length;
    await expect(
      dispatchWorkflow({
        octokit,
        owner,
        repo,
        defaultBranch: "main",
        workflow: "cycle",
        request,
        now: new Date("2026-01-01T00:00:00Z"),
      }),
    ).rejects.toThrow(
      `the .github/workflows/consort-cycle.yml request is ${size} characters, more than the 65535 GitHub accepts as workflow_dispatch inputs, so it was not sent`,
    );
    expect(github.requests).toEqual([]);
    github.verify();
  });

  it("a run's run-name names its dispatch id; any other title names none", () => {
    expect(dispatchIdOfRunName("consort cycle feature-x#12")).toBe("feature-x#12");
    expect(dispatchIdOfRunName("consort promote feature-x#3")).toBe("feature-x#3");
    expect(dispatchIdOfRunName("consort cycle")).toBeUndefined();
    expect(dispatchIdOfRunName("CI on feature-x#12")).toBeUndefined();
    expect(dispatchIdOfRunName(null)).toBeUndefined();
  });
});

describe("result artifacts", () => {
  const listing = (artifacts: unknown[]) => [200, { total_count: artifacts.length, artifacts }] as [number, unknown];
  const artifact = {
    id: 55,
    node_id: "A",
    name: "consort-cycle-result",
    size_in_bytes: 300,
    url: "",
    archive_download_url: "",
    expired: false,
    created_at: null,
    expires_at: null,
    updated_at: null,
  };

  it("downloads the run's consort-cycle-result zip and reads cycle-result.json from it", async () => {
    const zip = zipSync({ "cycle-result.json": strToU8(JSON.stringify({ verdict: "red" })) });
    github.on("GET", "/repos/acme/shop/actions/runs/987/artifacts", listing([artifact]));
    github.on("GET", "/repos/acme/shop/actions/artifacts/55/zip", [
      302,
      undefined,
      { Location: "https://blob.example.test/zip/55" },
    ]);
    const blob = nock("https://blob.example.test")
      .get("/zip/55")
      .reply(200, Buffer.from(zip), { "content-type": "application/zip" });
    const files = await downloadRunArtifact({ octokit, owner, repo, runId: 987, files: ["cycle-result.json"] });
    expect(artifactJson(files, "cycle-result.json", 987)).toEqual({ verdict: "red" });
    expect(github.requests[0]!.query).toMatchObject({ name: "consort-cycle-result" });
    expect(blob.isDone()).toBe(true);
    github.verify();
  });

  it("a run that uploaded no result is an artifact error", async () => {
    github.on("GET", "/repos/acme/shop/actions/runs/987/artifacts", listing([]));
    await expect(
      downloadRunArtifact({ octokit, owner, repo, runId: 987, files: ["cycle-result.json"] }),
    ).rejects.toBeInstanceOf(ArtifactError);
    github.verify();
  });
});

describe("the timeout rule", () => {
  const run = { dispatchId: "feature-x#1", runId: null, dispatchedAt: "2026-01-01T00:00:00Z" };
  it("a run is overdue only after the configured minutes", () => {
    expect(isOverdue(run, new Date("2026-01-01T00:29:59Z"), 30)).toBe(false);
    expect(isOverdue(run, new Date("2026-01-01T00:30:01Z"), 30)).toBe(true);
  });
  it("a record whose dispatch time cannot be read counts as overdue", () => {
    expect(isOverdue({ dispatchId: "feature-x#1", runId: null, dispatchedAt: "yesterday-ish" }, new Date(), 30)).toBe(
      true,
    );
  });
});
