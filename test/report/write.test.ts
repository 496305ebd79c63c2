import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CHECK_ACTIONS,
  renderCheckRuns,
  renderComment,
  upsertStickyComment,
  writeCheckRun,
  writeCheckRuns,
  type RenderedCheckRun,
} from "../../src/report/index.js";
import { truncate, utf8Bytes } from "../../src/report/markdown.js";
import { CHECK_OUTPUT_BYTES, COMMENT_BYTES, GitHubMock, refusedByGitHub, TEST_APP_ID } from "../helpers/github.js";
import { octokit } from "../state/helpers.js";
import type { RememberedComments } from "../../src/report/write.js";
import { check, HEAD, midBuildReport } from "./fixtures.js";

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

const target = { owner: "acme", repo: "shop", appId: TEST_APP_ID, headSha: HEAD };
const LIST = `/repos/acme/shop/commits/${HEAD}/check-runs`;
const CREATE = "/repos/acme/shop/check-runs";

/** How GitHub lists a run the writer made from `body` (the listing omits buttons). */
function listed(
  id: number,
  body: { name?: string; status: string; conclusion?: string; output: { title: string; summary: string } },
  name = body.name,
) {
  return {
    id,
    name,
    head_sha: HEAD,
    status: body.status,
    conclusion: body.conclusion ?? null,
    output: {
      title: body.output.title,
      summary: body.output.summary,
      text: null,
      annotations_count: 0,
      annotations_url: "",
    },
    app: { id: TEST_APP_ID },
  };
}

describe("writing check runs only when their content changes", () => {
  it("creates each check that says something on a commit that has none (a conclusion, or the test the build is on), with whole bodies", async () => {
    github
      .on("GET", LIST, [200, { total_count: 0, check_runs: [] }])
      .on(
        "POST",
        CREATE,
        (req) => [201, { id: 700 + github.calls("POST", CREATE).length, name: (req.body as { name: string }).name }],
        5,
      );
    const runs = renderCheckRuns(midBuildReport());
    const written = await writeCheckRuns(octokit(), target, runs);
    github.verify();
    expect(written.map((w) => [w.name, w.action])).toEqual([
      ["consort/design", "created"],
      ["consort/test-list", "created"],
      ["consort/build", "created"],
      ["consort/deploy", "absent"],
      ["consort/promote", "absent"],
      ["consort/discipline", "created"],
      ["consort/schema", "created"],
    ]);
    expect(github.calls("GET", LIST)[0]!.query).toEqual({
      app_id: String(TEST_APP_ID),
      filter: "latest",
      per_page: "100",
    });
    const design = runs[0]!;
    expect(github.calls("POST", CREATE)[0]!.body).toEqual({
      name: "consort/design",
      head_sha: HEAD,
      status: "completed",
      conclusion: "success",
      output: {
        title: "Approved by @lee at 5d1e6a7",
        summary: expect.stringMatching(
          /^Track `feature-orders-1a2b3c4d`[\s\S]*\n\n<!-- consort:content [0-9a-f]{64} -->$/,
        ),
      },
      actions: [],
    });
    expect(
      (github.calls("POST", CREATE)[0]!.body as { output: { summary: string } }).output.summary.startsWith(
        design.output.summary,
      ),
    ).toBe(true);
    expect(github.calls("POST", CREATE).map((c) => (c.body as { status: string }).status)).toEqual([
      "completed",
      "completed",
      "in_progress",
      "completed",
      "completed",
    ]);
  });

  it("leaves a placeholder check unwritten on a head with none of ours: a missing required check blocks the merge as an in-progress one does", async () => {
    const waiting = renderCheckRuns(midBuildReport()).find((r) => r.name === "consort/deploy")!;
    expect(waiting.status).toBe("in_progress");
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]);
    await expect(writeCheckRun(octokit(), target, waiting)).resolves.toEqual({
      name: "consort/deploy",
      action: "absent",
    });
    github.verify();
    expect(github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${LIST}`]);
  });

  it("a waiting check still replaces a success of ours on the head, so the success does not outlive the state that earned it", async () => {
    const approved: RenderedCheckRun = {
      name: "consort/promote",
      status: "completed",
      conclusion: "success",
      output: { title: "Approved by @lee at 5d1e6a7", summary: "Approved at the current frozen hash." },
      actions: [],
    };
    const waiting = renderCheckRuns(midBuildReport()).find((r) => r.name === "consort/promote")!;
    github
      .on("GET", LIST, [200, { total_count: 1, check_runs: [listed(910, approved)] }])
      .on("POST", CREATE, [201, { id: 911 }]);
    await expect(writeCheckRun(octokit(), target, waiting)).resolves.toEqual({
      name: "consort/promote",
      action: "created",
      id: 911,
    });
    github.verify();
    expect(github.calls("POST", CREATE)[0]!.body).toMatchObject({ name: "consort/promote", status: "in_progress" });
    expect(github.calls("POST", CREATE)[0]!.body).not.toHaveProperty("conclusion");
  });

  it("writes nothing when every run already shows the same content", async () => {
    // First pass: record what the writer sends.
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]).on("POST", CREATE, [201, { id: 1 }], 5);
    const runs = renderCheckRuns(midBuildReport());
    await writeCheckRuns(octokit(), target, runs);
    const sent = github.calls("POST", CREATE).map((c, i) => listed(800 + i, c.body as never));
    github.verify();
    github.dispose();

    github = new GitHubMock().on("GET", LIST, [200, { total_count: 5, check_runs: sent }]);
    const again = await writeCheckRuns(octokit(), target, renderCheckRuns(midBuildReport()));
    github.verify();
    expect(again.map((w) => w.action)).toEqual([
      "unchanged",
      "unchanged",
      "unchanged",
      "absent",
      "absent",
      "unchanged",
      "unchanged",
    ]);
    expect(github.requests).toHaveLength(1);
  });

  it("a step that only moves the lane rewrites no check: where the lane stands is the comment's to say", async () => {
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]).on("POST", CREATE, [201, { id: 1 }], 5);
    await writeCheckRuns(octokit(), target, renderCheckRuns(midBuildReport()));
    const sent = github.calls("POST", CREATE).map((c, i) => listed(800 + i, c.body as never));
    github.dispose();

    const moved = midBuildReport();
    moved.lane = { ...moved.lane, now: { id: "T2:review", label: "T2 review", detail: "navigator reviews T2" } };
    github = new GitHubMock().on("GET", LIST, [200, { total_count: 5, check_runs: sent }]);
    const again = await writeCheckRuns(octokit(), target, renderCheckRuns(moved));
    github.verify();
    expect(again.filter((w) => w.action !== "unchanged" && w.action !== "absent")).toEqual([]);
    expect(renderComment(moved)).not.toBe(renderComment(midBuildReport()));
  });

  it("updates only the run whose content changed", async () => {
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]).on("POST", CREATE, [201, { id: 1 }], 5);
    await writeCheckRuns(octokit(), target, renderCheckRuns(midBuildReport()));
    // design 800, test-list 801, build 802, discipline 803, schema 804: the two placeholders were not created.
    const sent = github.calls("POST", CREATE).map((c, i) => listed(800 + i, c.body as never));
    github.dispose();

    const report = midBuildReport();
    report.checks["consort/discipline"] = check(
      "failure",
      "Commit c0ffee0 refused: reset the branch to 1111111",
      "the navigator touched app code",
    );
    report.discipline = {
      violations: [
        { commit: HEAD, rule: "role-paths", path: "src/orders.ts", message: "the navigator touched app code" },
      ],
    };
    github = new GitHubMock()
      .on("GET", LIST, [200, { total_count: 5, check_runs: sent }])
      .on("PATCH", "/repos/acme/shop/check-runs/803", [200, { id: 803 }]);
    const written = await writeCheckRuns(octokit(), target, renderCheckRuns(report));
    github.verify();
    expect(written.filter((w) => w.action !== "unchanged")).toEqual([
      ...["consort/deploy", "consort/promote"].map((name) => ({ name, action: "absent" })),
      { name: "consort/discipline", action: "updated", id: 803 },
    ]);
    expect(github.calls("PATCH", "/repos/acme/shop/check-runs/803")[0]!.body).toEqual({
      status: "completed",
      conclusion: "failure",
      output: {
        title: "Commit c0ffee0 refused: reset the branch to 1111111",
        summary: expect.stringContaining("| `role-paths` | `src/orders.ts` | the navigator touched app code |"),
      },
      actions: [],
    });
  });

  it("a change of buttons alone is a change, although GitHub's listing does not show buttons", async () => {
    const report = midBuildReport();
    report.checks["consort/build"] = check("failure", "T2 (2 of 3): green", "Run 904 never reported.");
    const [before] = renderCheckRuns(report).filter((r) => r.name === "consort/build");
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]).on("POST", CREATE, [201, { id: 1 }]);
    await writeCheckRun(octokit(), target, before!);
    const sent = listed(900, github.calls("POST", CREATE)[0]!.body as never);
    github.dispose();

    report.checks["consort/build"] = {
      ...check("failure", "T2 (2 of 3): green", "Run 904 never reported."),
      actions: [CHECK_ACTIONS.rerunCycle],
    };
    const [after] = renderCheckRuns(report).filter((r) => r.name === "consort/build");
    github = new GitHubMock()
      .on("GET", LIST, [200, { total_count: 1, check_runs: [sent] }])
      .on("PATCH", "/repos/acme/shop/check-runs/900", [200, { id: 900 }]);
    await expect(writeCheckRun(octokit(), target, after!)).resolves.toEqual({
      name: "consort/build",
      action: "updated",
      id: 900,
    });
    github.verify();
    expect(github.calls("GET", LIST)[0]!.query).toEqual({
      app_id: String(TEST_APP_ID),
      filter: "latest",
      per_page: "100",
      check_name: "consort/build",
    });
    expect((github.calls("PATCH", "/repos/acme/shop/check-runs/900")[0]!.body as { actions: unknown }).actions).toEqual(
      [{ label: "Re-run cycle", description: "Dispatch the last cycle again", identifier: "rerun-cycle" }],
    );
  });

  it("starts a new run when a completed one must go back to in progress (GitHub cannot reopen a completed run)", async () => {
    const completed: RenderedCheckRun = {
      name: "consort/build",
      status: "completed",
      conclusion: "failure",
      output: { title: "Build failed", summary: "old" },
      actions: [],
    };
    const running: RenderedCheckRun = {
      name: "consort/build",
      status: "in_progress",
      output: { title: "Building", summary: "T2 GREEN re-run dispatched." },
      actions: [],
    };
    github
      .on("GET", LIST, [200, { total_count: 1, check_runs: [listed(901, completed)] }])
      .on("POST", CREATE, [201, { id: 902 }]);
    await expect(writeCheckRun(octokit(), target, running)).resolves.toEqual({
      name: "consort/build",
      action: "created",
      id: 902,
    });
    github.verify();
    expect(github.calls("POST", CREATE)[0]!.body).toEqual({
      name: "consort/build",
      head_sha: HEAD,
      status: "in_progress",
      output: {
        title: "Building",
        summary: expect.stringMatching(/^T2 GREEN re-run dispatched\.\n\n<!-- consort:content [0-9a-f]{64} -->$/),
      },
      actions: [],
    });
  });
});

describe("the one sticky comment", () => {
  const COMMENTS = "/repos/acme/shop/issues/7/comments";
  const body = renderComment(midBuildReport());
  const sticky = {
    owner: "acme",
    repo: "shop",
    issueNumber: 7,
    trackId: "feature-orders-1a2b3c4d",
    appId: TEST_APP_ID,
  };
  const comment = (id: number, text: string, app: number | null, login = "consort-app[bot]") => ({
    id,
    body: text,
    user: { login, type: app ? "Bot" : "User" },
    performed_via_github_app: app ? { id: app } : null,
  });

  it("is created when the PR has none, ignoring a person's comment that copies the marker", async () => {
    github
      .on("GET", COMMENTS, [
        200,
        [comment(1, "LGTM", null, "lee"), comment(2, `${body}\n(pasted by a person)`, null, "mallory")],
      ])
      .on("POST", COMMENTS, [201, { id: 3 }]);
    await expect(upsertStickyComment(octokit(), sticky, body)).resolves.toEqual({
      action: "created",
      id: 3,
      deleted: [],
    });
    github.verify();
    expect(github.calls("POST", COMMENTS)[0]!.body).toEqual({ body });
    expect(github.calls("GET", COMMENTS)[0]!.query).toEqual({ per_page: "100" });
  });

  it("is updated in place when its content changed, and left alone when it did not", async () => {
    github
      .on("GET", COMMENTS, [200, [comment(5, body.replace("T2 green", "T2 red"), TEST_APP_ID)]])
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [200, { id: 5 }]);
    await expect(upsertStickyComment(octokit(), sticky, body)).resolves.toEqual({
      action: "updated",
      id: 5,
      deleted: [],
    });
    expect(github.calls("PATCH", "/repos/acme/shop/issues/comments/5")[0]!.body).toEqual({ body });
    github.verify();
    github.dispose();

    github = new GitHubMock().on("GET", COMMENTS, [200, [comment(5, body, TEST_APP_ID)]]);
    await expect(upsertStickyComment(octokit(), sticky, body)).resolves.toEqual({
      action: "unchanged",
      id: 5,
      deleted: [],
    });
    github.verify();
  });

  it("deletes a duplicate two replicas created at once, keeping the oldest", async () => {
    github
      .on("GET", COMMENTS, [200, [comment(5, body, TEST_APP_ID), comment(6, body, TEST_APP_ID)]])
      .on("DELETE", "/repos/acme/shop/issues/comments/6", [204]);
    await expect(upsertStickyComment(octokit(), sticky, body)).resolves.toEqual({
      action: "unchanged",
      id: 5,
      deleted: [6],
    });
    github.verify();
  });
});

describe("the sticky comment a process remembers", () => {
  const COMMENTS = "/repos/acme/shop/issues/7/comments";
  const body = renderComment(midBuildReport());
  const older = body.replace("T2 green", "T2 red");
  const sticky = {
    owner: "acme",
    repo: "shop",
    issueNumber: 7,
    trackId: "feature-orders-1a2b3c4d",
    appId: TEST_APP_ID,
  };
  const ours = (id: number, text: string) => ({
    id,
    body: text,
    user: { login: "consort-app[bot]", type: "Bot" },
    performed_via_github_app: { id: TEST_APP_ID },
  });

  it("a changed body is written to the comment a listing found, by one update and no listing", async () => {
    const remembered: RememberedComments = new Map();
    github
      .on("GET", COMMENTS, [200, [ours(5, older)]])
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [200, { id: 5 }], 2);
    await upsertStickyComment(octokit(), sticky, body, remembered);
    await expect(upsertStickyComment(octokit(), sticky, older, remembered)).resolves.toEqual({
      action: "updated",
      id: 5,
      deleted: [],
    });
    github.verify();
    expect(github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${COMMENTS}`,
      "PATCH /repos/acme/shop/issues/comments/5",
      "PATCH /repos/acme/shop/issues/comments/5",
    ]);
  });

  it("a remembered comment someone deleted is looked for again and created, and the new one is not remembered", async () => {
    const remembered: RememberedComments = new Map([[`acme/shop#7 ${sticky.trackId}`, { id: 5, body: older }]]);
    github
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [404, { message: "Not Found" }])
      .on("GET", COMMENTS, [200, []])
      .on("POST", COMMENTS, [201, { id: 8 }]);
    await expect(upsertStickyComment(octokit(), sticky, body, remembered)).resolves.toEqual({
      action: "created",
      id: 8,
      deleted: [],
    });
    github.verify();
    expect([...remembered.keys()]).toEqual([]);
  });

  it("an unchanged body is checked against the listing: a person's edit of the comment is put right", async () => {
    const remembered: RememberedComments = new Map([[`acme/shop#7 ${sticky.trackId}`, { id: 5, body }]]);
    github
      .on("GET", COMMENTS, [200, [ours(5, `${body}\n\nAll gates approved (edited by mallory)`)]])
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [200, { id: 5 }]);
    await expect(upsertStickyComment(octokit(), sticky, body, remembered)).resolves.toEqual({
      action: "updated",
      id: 5,
      deleted: [],
    });
    github.verify();
    expect(github.calls("PATCH", "/repos/acme/shop/issues/comments/5")[0]!.body).toEqual({ body });
  });

  it("after a race left two comments, the next write lists them and deletes the duplicate", async () => {
    const remembered: RememberedComments = new Map();
    github
      .on("GET", COMMENTS, [200, []])
      .on("POST", COMMENTS, [201, { id: 6 }])
      .on("GET", COMMENTS, [200, [ours(5, older), ours(6, older)]])
      .on("DELETE", "/repos/acme/shop/issues/comments/6", [204])
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [200, { id: 5 }]);
    await upsertStickyComment(octokit(), sticky, older, remembered);
    await expect(upsertStickyComment(octokit(), sticky, body, remembered)).resolves.toEqual({
      action: "updated",
      id: 5,
      deleted: [6],
    });
    github.verify();
  });
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
  // Every test verified: the build check is completed, so it is written with its whole table.
  report.checks["consort/build"] = check("success", "Every test is green and reviewed", "All 500 unit(s) verified.");
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
    const completed = runs.filter((r) => r.status === "completed");
    expect(completed.map((r) => r.name)).toContain("consort/build");
    github.on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], completed.length);
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

describe("what the writer reads back from GitHub", () => {
  const build: RenderedCheckRun = {
    name: "consort/build",
    status: "in_progress",
    output: { title: "Building", summary: "T2 GREEN is being verified." },
    actions: [],
  };
  const approved: RenderedCheckRun = {
    name: "consort/design",
    status: "completed",
    conclusion: "success",
    output: { title: "Approved", summary: "Approved at the current frozen hash." },
    actions: [],
  };
  /** The summary the writer sends for `run`, with its content marker. */
  async function written(run: RenderedCheckRun): Promise<string> {
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]).on("POST", CREATE, [201, { id: 1 }]);
    await writeCheckRun(octokit(), target, run);
    return (github.calls("POST", CREATE)[0]!.body as { output: { summary: string } }).output.summary;
  }
  const patch = (id: number) => `/repos/acme/shop/check-runs/${id}`;

  it.each([
    ["a conclusion GitHub shows differently", approved, { status: "completed", conclusion: "cancelled" }, ""],
    ["a status GitHub shows differently", build, { status: "queued" }, ""],
    ["text after the content marker", approved, { status: "completed", conclusion: "success" }, "x"],
  ] as const)("a run of ours with its content marker but %s is written again", async (_, run, shown, after) => {
    const summary = await written(run);
    github
      .on("GET", LIST, [
        200,
        {
          total_count: 1,
          check_runs: [listed(900, { ...shown, output: { ...run.output, summary: summary + after } }, run.name)],
        },
      ])
      .on("PATCH", patch(900), [200, { id: 900 }]);
    await expect(writeCheckRun(octokit(), target, run)).resolves.toEqual({
      name: run.name,
      action: "updated",
      id: 900,
    });
    github.verify();
  });

  it("an in-progress run of ours is updated in place, not superseded", async () => {
    github
      .on("GET", LIST, [
        200,
        { total_count: 1, check_runs: [listed(900, { ...build, output: { ...build.output, summary: "older" } })] },
      ])
      .on("PATCH", patch(900), [200, { id: 900 }]);
    await expect(writeCheckRun(octokit(), target, build)).resolves.toEqual({
      name: "consort/build",
      action: "updated",
      id: 900,
    });
    github.verify();
  });

  it("of two runs of one name, the first listed (the newest) is the one updated", async () => {
    const old = { ...build, output: { ...build.output, summary: "older" } };
    github
      .on("GET", LIST, [200, { total_count: 2, check_runs: [listed(902, old), listed(901, old)] }])
      .on("PATCH", patch(902), [200, { id: 902 }]);
    await expect(writeCheckRun(octokit(), target, build)).resolves.toEqual({
      name: "consort/build",
      action: "updated",
      id: 902,
    });
    github.verify();
  });
});

describe("GitHub's limits, checked before sending", () => {
  const MARKER_BYTES = "\n\n<!-- consort:content  -->".length + 64;
  const run = (summary: string, title: string, buttons: number): RenderedCheckRun => ({
    name: "consort/build",
    status: "completed",
    conclusion: "failure",
    output: { title, summary },
    actions: [
      CHECK_ACTIONS.rerunCycle,
      CHECK_ACTIONS.renegotiate,
      CHECK_ACTIONS.reseal,
      CHECK_ACTIONS.rerunCycle,
    ].slice(0, buttons),
  });

  it("a run at every limit exactly is written", async () => {
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]).on("POST", CREATE, [201, { id: 5 }]);
    await expect(
      writeCheckRun(octokit(), target, run("a".repeat(65_535 - MARKER_BYTES), "t".repeat(255), 3)),
    ).resolves.toEqual({ name: "consort/build", action: "created", id: 5 });
    github.verify();
  });

  it("a run one past each limit is refused with every reason, and nothing is sent", async () => {
    github.on("GET", LIST, [200, { total_count: 0, check_runs: [] }]);
    await expect(
      writeCheckRun(octokit(), target, run("a".repeat(65_536 - MARKER_BYTES), "t".repeat(256), 4)),
    ).rejects.toThrow(
      new Error(
        "consort/build: output.summary is 65536 bytes, more than GitHub's 65535; output.title is 256 characters, more than 255; 4 buttons, more than GitHub's 3 (render with truncate())",
      ),
    );
    github.verify();
    expect(github.requests.map((r) => r.method)).toEqual(["GET"]);
  });
});

describe("the sticky comment's own checks and who it belongs to", () => {
  const COMMENTS = "/repos/acme/shop/issues/7/comments";
  const marker = "<!-- consort:sticky track=feature-orders-1a2b3c4d -->";
  const sticky = {
    owner: "acme",
    repo: "shop",
    issueNumber: 7,
    trackId: "feature-orders-1a2b3c4d",
    appId: TEST_APP_ID,
  };
  const key = `acme/shop#7 ${sticky.trackId}`;
  const body = `${marker}\n\nnow`;
  const older = `${marker}\n\nbefore`;

  it("refuses a body without its marker, or one past GitHub's limit, before any request", async () => {
    await expect(upsertStickyComment(octokit(), sticky, "hello")).rejects.toThrow(
      new Error(`The sticky comment body must start with its marker ${marker}`),
    );
    await expect(upsertStickyComment(octokit(), sticky, marker.padEnd(65_537, "a"))).rejects.toThrow(
      new Error("the sticky comment is 65537 bytes, more than GitHub's 65536 (render with truncate())"),
    );
    expect(github.requests).toEqual([]);
  });

  it("writes a body of GitHub's limit exactly", async () => {
    github.on("GET", COMMENTS, [200, []]).on("POST", COMMENTS, [201, { id: 9 }]);
    await expect(upsertStickyComment(octokit(), sticky, marker.padEnd(65_536, "a"))).resolves.toEqual({
      action: "created",
      id: 9,
      deleted: [],
    });
    github.verify();
  });

  it("counts the app's bot login as ours where GitHub omits the app, and never a person's comment", async () => {
    const withBot = { ...sticky, botLogin: "consort-app[bot]" };
    github
      .on("GET", COMMENTS, [
        200,
        [
          { id: 3, body: older, user: null, performed_via_github_app: null },
          { id: 4, body: older, user: { login: "mallory", type: "User" }, performed_via_github_app: null },
          { id: 5, body: older, user: { login: "consort-app[bot]", type: "Bot" }, performed_via_github_app: null },
        ],
      ])
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [200, { id: 5 }]);
    await expect(upsertStickyComment(octokit(), withBot, body)).resolves.toEqual({
      action: "updated",
      id: 5,
      deleted: [],
    });
    github.verify();
  });

  it("without a bot login, a comment GitHub shows without its app is not ours", async () => {
    github
      .on("GET", COMMENTS, [
        200,
        [{ id: 5, body: older, user: { login: "consort-app[bot]", type: "Bot" }, performed_via_github_app: null }],
      ])
      .on("POST", COMMENTS, [201, { id: 6 }]);
    await expect(upsertStickyComment(octokit(), sticky, body)).resolves.toEqual({
      action: "created",
      id: 6,
      deleted: [],
    });
    github.verify();
  });

  it("without a bot login, a comment with no user and no app is not ours", async () => {
    github
      .on("GET", COMMENTS, [200, [{ id: 5, body: older, user: null, performed_via_github_app: null }]])
      .on("POST", COMMENTS, [201, { id: 6 }]);
    await expect(upsertStickyComment(octokit(), sticky, body)).resolves.toEqual({
      action: "created",
      id: 6,
      deleted: [],
    });
    github.verify();
  });

  it("remembers the body it wrote: the same body again is checked against the listing, not written", async () => {
    const remembered: RememberedComments = new Map([[key, { id: 5, body: older }]]);
    github.on("PATCH", "/repos/acme/shop/issues/comments/5", [200, { id: 5 }]).on("GET", COMMENTS, [
      200,
      [
        {
          id: 5,
          body,
          user: { login: "consort-app[bot]", type: "Bot" },
          performed_via_github_app: { id: TEST_APP_ID },
        },
      ],
    ]);
    await upsertStickyComment(octokit(), sticky, body, remembered);
    await expect(upsertStickyComment(octokit(), sticky, body, remembered)).resolves.toEqual({
      action: "unchanged",
      id: 5,
      deleted: [],
    });
    github.verify();
    expect([...remembered.entries()]).toEqual([[key, { id: 5, body }]]);
  });

  it("a remembered comment that is gone (410) is looked for again; any other error is thrown", async () => {
    const remembered: RememberedComments = new Map([[key, { id: 5, body: older }]]);
    github
      .on("PATCH", "/repos/acme/shop/issues/comments/5", [410, { message: "Gone" }])
      .on("GET", COMMENTS, [200, []])
      .on("POST", COMMENTS, [201, { id: 8 }]);
    await expect(upsertStickyComment(octokit(), sticky, body, remembered)).resolves.toEqual({
      action: "created",
      id: 8,
      deleted: [],
    });
    github.verify();
    github.dispose();

    github = new GitHubMock().on("PATCH", "/repos/acme/shop/issues/comments/5", [
      422,
      { message: "Validation Failed" },
    ]);
    const again: RememberedComments = new Map([[key, { id: 5, body: older }]]);
    await expect(upsertStickyComment(octokit(), sticky, body, again)).rejects.toMatchObject({ status: 422 });
    github.verify();
  });
});
