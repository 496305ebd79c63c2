import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { failTampered } from "../../src/app/checks.js";
import { createStateStore, TamperedStateError } from "../../src/state/index.js";
import { GitHubMock, TEST_APP_ID } from "../helpers/github.js";
import { HEAD } from "../report/fixtures.js";
import { contentsReply, contentsUrl, fileText, KEY, octokit, trackState } from "../state/helpers.js";

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

describe("from a tampered state file to failing checks", () => {
  it("every check on the PR head fails saying the file is tampered, with the re-seal button", async () => {
    github.on(
      "GET",
      contentsUrl(),
      contentsReply(fileText(trackState()).replace('"branch": "feature/orders"', '"branch": "main"')),
    );
    const error = await createStateStore({ octokit: octokit(), owner: "acme", repo: "shop", key: KEY })
      .read("feature-orders")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TamperedStateError);

    github
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], 7);
    await failTampered(
      { octokit: octokit(), owner: "acme", repo: "shop", appId: TEST_APP_ID, headSha: HEAD, trackId: "feature-orders" },
      error as TamperedStateError,
      "acme/shop",
      "feature/orders",
    );
    github.verify();
    const bodies = github.calls("POST", "/repos/acme/shop/check-runs").map((c) => c.body as Record<string, unknown>);
    expect(bodies.map((b) => [b.name, b.status, b.conclusion])).toEqual(
      [
        "consort/design",
        "consort/test-list",
        "consort/build",
        "consort/deploy",
        "consort/promote",
        "consort/discipline",
        "consort/schema",
      ].map((n) => [n, "completed", "failure"]),
    );
    for (const body of bodies) {
      expect(body.actions).toEqual([
        { label: "Re-seal state", description: "Admins: restore the last sealed state", identifier: "reseal" },
      ]);
      expect((body.output as { summary: string }).summary).toContain("- signature does not match the content");
    }
  });
});
