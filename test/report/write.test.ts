import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderCheckRuns, renderComment, upsertStickyComment, writeCheckRuns } from "../../src/report/index.js";
import { truncate, utf8Bytes } from "../../src/report/markdown.js";
import { CHECK_OUTPUT_BYTES, COMMENT_BYTES, GitHubMock, refusedByGitHub, TEST_APP_ID } from "../helpers/github.js";
import { octokit } from "../app/state-helpers.js";
import { HEAD, midBuildReport } from "../app/report-fixtures.js";

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

/** A track 500 tests long, every one verified RED and GREEN, with long titles: tables full of ✅. */
function fiveHundredTestReport() {
  const report = midBuildReport();
  const run = (id: number) => `https://github.com/acme/shop/actions/runs/${id}`;
  report.tests = Array.from({ length: 500 }, (_, i) => ({
    id: `T${i + 1}`,
    title: `stock ${i + 1}: a location keeps its count through a transfer ✅ and a refusal ❌ — ${"é".repeat(40)}`,
    file: `test/stock-${Math.floor(i / 20)}.test.ts`,
    acceptanceCriterion: `S${Math.floor(i / 10) + 1}-AC${(i % 10) + 1}`,
    status: "reviewed" as const,
    red: { verdict: "valid" as const, commit: "1".repeat(40), runUrl: run(1000 + i), summary: "fails by assertion ❌" },
    green: { verdict: "valid" as const, commit: "2".repeat(40), runUrl: run(2000 + i), summary: "passes ✅" },
  }));
  return report;
}

describe("GitHub's limits on what Consort writes", () => {
  it("a 500-test track's seven checks and its comment are accepted by the double with GitHub's byte limits enforced", async () => {
    const report = fiveHundredTestReport();
    const runs = renderCheckRuns(report);
    const body = renderComment(report);
    // The rendering is long enough to matter: the build check's table alone passes GitHub's limit uncut.
    expect(report.tests.map((t) => t.title.length + 200).reduce((a, b) => a + b, 0) * 3).toBeGreaterThan(
      CHECK_OUTPUT_BYTES,
    );
    github.on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }]);
    github.on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], runs.length);
    github.on("GET", "/repos/acme/shop/issues/7/comments", [200, []]);
    github.on("POST", "/repos/acme/shop/issues/7/comments", [201, { id: 9 }]);

    await writeCheckRuns(octokit(), { owner: "acme", repo: "shop", appId: TEST_APP_ID, headSha: HEAD }, runs);
    await upsertStickyComment(
      octokit(),
      { owner: "acme", repo: "shop", issueNumber: 7, trackId: report.trackId, appId: TEST_APP_ID },
      body,
    );
    github.verify();
    const summaries = github
      .calls("POST", "/repos/acme/shop/check-runs")
      .map((r) => (r.body as { output: { summary: string } }).output.summary);
    expect(Math.max(...summaries.map(utf8Bytes))).toBeLessThanOrEqual(CHECK_OUTPUT_BYTES);
    expect(summaries.some((s) => s.includes("**Truncated:**"))).toBe(true);
    expect(utf8Bytes(body)).toBeLessThanOrEqual(COMMENT_BYTES);
  });

  it("the double refuses what GitHub refuses: a summary over 65,535 bytes though under 65,535 characters", () => {
    const summary = "✅".repeat(30_000); // 30,000 characters, 90,000 bytes
    expect(refusedByGitHub("POST", "/repos/acme/shop/check-runs", { output: { summary } })).toBe(
      "output.summary is 90000 bytes; the maximum is 65535",
    );
    expect(refusedByGitHub("POST", "/repos/acme/shop/check-runs", { actions: [1, 2, 3, 4] })).toBe(
      "4 actions; at most 3",
    );
    expect(
      refusedByGitHub("PATCH", "/repos/acme/shop/check-runs/5", { output: { annotations: Array(51).fill({}) } }),
    ).toBe("51 annotations; at most 50 per request");
    expect(refusedByGitHub("POST", "/repos/acme/shop/issues/7/comments", { body: "❌".repeat(22_000) })).toBe(
      "body is 66000 bytes; the maximum is 65536",
    );
    expect(
      refusedByGitHub("POST", "/repos/acme/shop/actions/workflows/consort-cycle.yml/dispatches", {
        ref: "main",
        inputs: { request: "x".repeat(65_530) },
      }),
    ).toBe("inputs are 65544 characters; the maximum is 65535");
  });

  it("truncate counts UTF-8 bytes and never splits a character", () => {
    const text = Array.from({ length: 4000 }, (_, i) => `| T${i} | ✅ | passes |`).join("\n");
    const cut = truncate(text, 10_000, "on consort/state");
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(10_000);
    expect(cut).not.toContain("\uFFFD");
    expect(cut).toMatch(
      /> \*\*Truncated:\*\* \d+ bytes did not fit GitHub's limit of 10000\. The full record is on consort\/state\.$/,
    );
  });
});
