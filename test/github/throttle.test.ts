import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Probot, ProbotOctokit } from "probot";
import {
  ConsortOctokit,
  LONGEST_PRIMARY_WAIT_S,
  onRateLimit,
  SECONDARY_LIMIT_RETRIES,
} from "../../src/github/throttle.js";
import { GitHubMock, mockInstallationToken, TEST_APP_ID, testPrivateKey } from "../helpers/github.js";

/**
 * GitHub's rate limits as Probot's installation clients meet them, with the real
 * @octokit/plugin-throttling: its waits are scaled from seconds to milliseconds
 * (`retryAfterBaseValue: 1`), nothing else is changed.
 */

const INSTALLATION = 31;
const CHECK_RUNS = "/repos/acme/shop/check-runs";
const SECONDARY = {
  message:
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
  documentation_url:
    "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
};

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
  mockInstallationToken(github, INSTALLATION);
});
afterEach(() => github.dispose());

/** An installation client as the app's Probot makes it, from `Base`, with the plugin's waits in milliseconds. */
async function installationClient(Base: typeof ProbotOctokit) {
  const probot = new Probot({
    appId: TEST_APP_ID,
    privateKey: testPrivateKey(),
    logLevel: "fatal",
    Octokit: Base.defaults((o: Record<string, unknown>) => ({
      ...o,
      retry: { enabled: false },
      throttle: { ...(o.throttle as object), retryAfterBaseValue: 1 },
    })),
  });
  return probot.auth(INSTALLATION);
}

const createCheck = (octokit: Awaited<ReturnType<typeof installationClient>>) =>
  octokit.rest.checks.create({ owner: "acme", repo: "shop", name: "consort/build", head_sha: "a".repeat(40) });

describe("rate limits on the app's GitHub calls", () => {
  it("a write refused by GitHub's secondary rate limit is retried after Retry-After, and lands", async () => {
    github
      .on("POST", CHECK_RUNS, [403, SECONDARY, { "retry-after": "2" }])
      .on("POST", CHECK_RUNS, [429, SECONDARY, { "retry-after": "1" }])
      .on("POST", CHECK_RUNS, [201, { id: 5 }]);
    const octokit = await installationClient(ConsortOctokit);
    const { status, data } = await createCheck(octokit);
    github.verify();
    expect([status, data.id]).toEqual([201, 5]);
    expect(github.calls("POST", CHECK_RUNS)).toHaveLength(3);
  });

  it("Probot's own options give up at the first secondary limit (why the app brings its own)", async () => {
    github.on("POST", CHECK_RUNS, [403, SECONDARY, { "retry-after": "1" }]);
    const octokit = await installationClient(ProbotOctokit);
    await expect(createCheck(octokit)).rejects.toMatchObject({ status: 403 });
    github.verify();
    expect(github.calls("POST", CHECK_RUNS)).toHaveLength(1);
  });

  it(`gives up after ${SECONDARY_LIMIT_RETRIES} retries, so the failure reaches the check instead of waiting forever`, async () => {
    github.on("POST", CHECK_RUNS, [403, SECONDARY, { "retry-after": "1" }], SECONDARY_LIMIT_RETRIES + 1);
    const octokit = await installationClient(ConsortOctokit);
    await expect(createCheck(octokit)).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining("secondary rate limit"),
    });
    github.verify();
    expect(github.calls("POST", CHECK_RUNS)).toHaveLength(SECONDARY_LIMIT_RETRIES + 1);
  });

  it("a read refused because the hourly quota ran out is retried after x-ratelimit-reset", async () => {
    const reset = String(Math.floor(Date.now() / 1000));
    github
      .on("GET", "/repos/acme/shop/pulls", [
        403,
        { message: "API rate limit exceeded for installation ID 31." },
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset },
      ])
      .on("GET", "/repos/acme/shop/pulls", [200, []]);
    const octokit = await installationClient(ConsortOctokit);
    const { data } = await octokit.rest.pulls.list({ owner: "acme", repo: "shop" });
    github.verify();
    expect(data).toEqual([]);
    expect(github.calls("GET", "/repos/acme/shop/pulls")).toHaveLength(2);
  });

  it("does not wait for a quota that resets more than a quarter of an hour away", () => {
    const log = { warn: () => {} };
    const request = { method: "GET", url: "/repos/acme/shop/pulls" };
    expect(onRateLimit(LONGEST_PRIMARY_WAIT_S, request, { log }, 0)).toBe(true);
    expect(onRateLimit(LONGEST_PRIMARY_WAIT_S + 1, request, { log }, 0)).toBe(false);
  });
});
