import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { checkRequest } from "../helpers/github-api.js";
import { GitHubMock } from "../helpers/github.js";
import { webhookPayload } from "../helpers/webhooks.js";

const octokit = () => new Octokit({ auth: "ghs_test", request: { retries: 0 } });

describe("the GitHub mock checks requests against GitHub's REST description", () => {
  let github: GitHubMock;
  afterEach(() => github.dispose());

  it("accepts a documented check-run creation and records its whole body", async () => {
    github = new GitHubMock().on("POST", "/repos/acme/shop/check-runs", [201, { id: 7 }]);
    const result = await octokit().rest.checks.create({
      owner: "acme",
      repo: "shop",
      name: "consort/design",
      head_sha: "a".repeat(40),
      status: "completed",
      conclusion: "failure",
      output: { title: "Design gate", summary: "Waiting for approval" },
    });
    expect(result.data.id).toBe(7);
    github.verify();
    expect(github.requests).toEqual([
      {
        method: "POST",
        path: "/repos/acme/shop/check-runs",
        query: {},
        operationId: "checks/create",
        body: {
          name: "consort/design",
          head_sha: "a".repeat(40),
          status: "completed",
          conclusion: "failure",
          output: { title: "Design gate", summary: "Waiting for approval" },
        },
        // The headers are recorded too, so a test can answer a conditional read (If-None-Match) with 304.
        headers: expect.objectContaining({
          authorization: "token ghs_test",
          "content-type": "application/json; charset=utf-8",
        }),
      },
    ]);
  });

  it("catches a request whose body has a wrong type", async () => {
    github = new GitHubMock().on("POST", "/repos/acme/shop/check-runs", [201, { id: 7 }]);
    // Typed as unknown on purpose: the point is a body TypeScript would have refused.
    await octokit().request("POST /repos/{owner}/{repo}/check-runs", {
      owner: "acme",
      repo: "shop",
      name: "consort/design",
      head_sha: "a".repeat(40),
      conclusion: "maybe",
    } as never);
    expect(() => github.verify()).toThrow(/body does not match checks\/create.*conclusion/s);
  });

  it("catches a request missing a required body field", async () => {
    github = new GitHubMock().on("POST", "/repos/acme/shop/check-runs", [201, { id: 7 }]);
    await octokit().request("POST /repos/{owner}/{repo}/check-runs", {
      owner: "acme",
      repo: "shop",
      name: "x",
    } as never);
    expect(() => github.verify()).toThrow(/must have required property 'head_sha'/);
  });

  it("catches an endpoint GitHub does not have", () => {
    expect(() => new GitHubMock().on("POST", "/repos/acme/shop/approve-everything", [200, {}])).toThrow(
      /no such endpoint/,
    );
    github = new GitHubMock();
  });

  it("catches a request no mock answers, and a mock never called", async () => {
    github = new GitHubMock().on("GET", "/repos/acme/shop", [200, {}]);
    await expect(octokit().rest.pulls.get({ owner: "acme", repo: "shop", pull_number: 1 })).rejects.toThrow();
    expect(() => github.verify()).toThrow(
      /GET \/repos\/acme\/shop\/pulls\/1: no mock answers[\s\S]*GET \/repos\/acme\/shop: expected 1 call\(s\), got 0/,
    );
  });

  it("checks path and query parameter types", () => {
    expect(checkRequest("GET", "/repos/acme/shop/check-runs/abc", undefined).violations).toEqual([
      expect.stringMatching(/path parameter check_run_id: expected integer/),
    ]);
    expect(checkRequest("GET", "/repos/acme/shop/pulls?state=sideways", undefined).violations).toEqual([
      expect.stringMatching(/query parameter state/),
    ]);
    expect(checkRequest("GET", "/repos/acme/shop/pulls?colour=red", undefined).violations).toEqual([
      expect.stringMatching(/query parameter colour is not documented/),
    ]);
    expect(
      checkRequest("PATCH", "/repos/acme/shop/git/refs/heads%2Fconsort%2Fstate", { sha: "b".repeat(40), force: false })
        .violations,
    ).toEqual([]);
  });

  it("refuses a success status GitHub does not document for the endpoint", () => {
    expect(() => new GitHubMock().on("POST", "/repos/acme/shop/check-runs", [200, {}])).toThrow(/documents 201/);
    github = new GitHubMock();
  });
});

describe("webhook payloads come from GitHub's recorded examples", () => {
  it("loads a pull_request.opened payload by event and action", () => {
    const payload = webhookPayload("pull_request", "opened");
    expect(payload.action).toBe("opened");
    expect(payload.pull_request.head.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(payload.repository.full_name).toContain("/");
  });

  it("gives a fresh copy each time, so a scenario's edits do not leak", () => {
    const first = webhookPayload("push");
    first.ref = "refs/heads/changed";
    expect(webhookPayload("push").ref).not.toBe("refs/heads/changed");
  });

  it("names the actions that exist when asked for one that does not", () => {
    expect(() => webhookPayload("pull_request_review", "approved")).toThrow(/actions: dismissed, edited, submitted/);
  });
});
