import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApproversConfig } from "../../src/config/consort-config.js";
import { gateApproval } from "../../src/gates/approval.js";
import {
  approvalViews,
  frozenViews,
  gateViewOf,
  renderCheckRuns,
  renderTamperedCheckRuns,
  tamperedViewOf,
  writeCheckRuns,
} from "../../src/report/index.js";
import { createStateStore, TamperedStateError } from "../../src/state/index.js";
import { GitHubMock, TEST_APP_ID } from "../helpers/github.js";
import { HEAD, midBuildReport } from "./report-fixtures.js";
import { contentsReply, contentsUrl, fileText, KEY, octokit, sha, trackState } from "./state-helpers.js";

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

    const runs = renderTamperedCheckRuns(
      tamperedViewOf(error as TamperedStateError, { repository: "acme/shop", branch: "feature/orders", headSha: HEAD }),
    );
    github
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], 7);
    await writeCheckRuns(octokit(), { owner: "acme", repo: "shop", appId: TEST_APP_ID, headSha: HEAD }, runs);
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
        { label: "Re-seal state", description: "Admins: vouch for the state file", identifier: "reseal" },
      ]);
      expect((body.output as { summary: string }).summary).toContain("- signature does not match the content");
    }
  });
});

describe("from an approval decision to the gate's check", () => {
  const H = "a".repeat(40);
  const PENDING = "d".repeat(64);
  const ctx = {
    gate: "design" as const,
    org: "acme",
    pendingHash: PENDING,
    hashAtCommit: new Map([[H, PENDING]]),
    approvers: ApproversConfig.parse({ users: ["lee", "dana"] }),
    codeowners: undefined,
    commits: [{ sha: "2".repeat(40), authorLogin: "dana" }],
    reviewers: new Map([
      ["dana", { permission: "write" as const, teams: [] }],
      ["lee", { permission: "write" as const, teams: [] }],
    ]),
  };

  it("a self-approval leaves the gate waiting and the check names why the review does not count", () => {
    const decision = gateApproval(
      [{ id: 9, user: "dana", state: "APPROVED", commitId: H, submittedAt: "2026-11-30T06:00:00Z" }],
      ctx,
    );
    const report = midBuildReport();
    report.gates.design = gateViewOf(decision, PENDING);
    const design = renderCheckRuns(report)[0]!;
    expect(design.status).toBe("in_progress");
    expect(design.output.title).toBe("Waiting for approval at ddddddd");
    expect(design.output.summary).toContain(
      "- @dana: dana authored 2222222 under approval and cannot approve their own work",
    );
  });

  it("an approval from someone else passes the gate at the current hash only", () => {
    const decision = gateApproval(
      [{ id: 10, user: "lee", state: "APPROVED", commitId: H, submittedAt: "2026-11-30T06:00:00Z" }],
      ctx,
    );
    expect(gateViewOf(decision, PENDING)).toEqual({
      state: "approved",
      approvedHash: PENDING,
      currentHash: PENDING,
      by: ["lee"],
    });
    const report = midBuildReport();
    report.gates.design = gateViewOf(decision, "f".repeat(64));
    expect(renderCheckRuns(report)[0]).toMatchObject({ status: "completed", conclusion: "failure" });
  });
});

describe("from the state file to the view", () => {
  it("maps approvals with review links and frozen manifests with sorted files", () => {
    const state = trackState();
    expect(approvalViews(state.approvals, { repository: "acme/shop", pullNumber: 7 })).toEqual([
      {
        gate: "design",
        user: "octo-lead",
        at: "2026-11-30T05:20:00.000Z",
        commit: sha("a"),
        hash: "d".repeat(64),
        reviewUrl: "https://github.com/acme/shop/pull/7#pullrequestreview-80",
      },
    ]);
    expect(frozenViews(state.frozen)).toEqual([
      {
        gate: "design",
        manifestHash: "d".repeat(64),
        commit: sha("a"),
        files: [
          { path: ".consort/architecture.json", hash: "2".repeat(64) },
          { path: ".consort/spec.json", hash: "1".repeat(64) },
        ],
      },
    ]);
  });
});
