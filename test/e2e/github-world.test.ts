import { Octokit } from "@octokit/rest";
import { unzipSync, strFromU8 } from "fflate";
import { afterEach, describe, expect, test } from "vitest";
import { EXAMPLE } from "./support/feature.js";
import { GitRepo } from "./support/git-repo.js";
import { GitHubWorld } from "./support/github-world.js";

/** The GitHub double the end-to-end scenarios stand on answers like GitHub, and keeps what was written. */

let world: GitHubWorld | undefined;
afterEach(() => {
  world?.dispose();
  world?.git.remove();
  world = undefined;
});

function setUp(): { w: GitHubWorld; octokit: Octokit; owner: string; repo: string } {
  const w = (world = new GitHubWorld(GitRepo.fromDirectory(EXAMPLE, { leaveOut: ["test"] })));
  return { w, octokit: new Octokit({ auth: "ghs_test", request: { retries: 0 } }), owner: w.owner, repo: w.name };
}

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe("the GitHub double", () => {
  test("refuses a Contents API write from a stale blob with 409, a new file over an existing one with 422, as GitHub does", async () => {
    const { w, octokit, owner, repo } = setUp();
    await octokit.rest.git.createRef({ owner, repo, ref: "refs/heads/consort/state", sha: w.git.branchHead("main")! });
    const put = (text: string, sha?: string) =>
      octokit.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path: "tracks/a.json",
        message: text,
        content: Buffer.from(text).toString("base64"),
        branch: "consort/state",
        ...(sha ? { sha } : {}),
      });
    const first = await put("one");
    expect(await status(put("again"))).toBe(422);
    const second = await put("two", first.data.content!.sha!);
    expect(await status(put("three", first.data.content!.sha!))).toBe(409);
    expect(w.stateHead()).toBe(second.data.commit.sha);
    expect(w.mock.violations).toEqual([]);
  });

  test("a delivery's content-creating requests past its share of GitHub's secondary limit are refused with 403", async () => {
    const { w, octokit, owner, repo } = setUp();
    const head = w.git.branchHead("main")!;
    const create = () => octokit.rest.checks.create({ owner, repo, name: "consort/build", head_sha: head });
    w.deliveryStarted();
    for (let i = 0; i < 13; i++) expect(await status(create())).toBe(200);
    const refused = await create().catch((e: { status: number; message: string }) => e);
    w.deliveryEnded();
    expect(refused).toMatchObject({ status: 403, message: expect.stringContaining("secondary rate limit") });
    expect(w.mock.violations).toEqual([
      `POST /repos/${owner}/${repo}/check-runs: content-creating request 14 of deliveries allowed 13 (13 each, so six tracks of one installation stay under GitHub's 80 a minute)`,
    ]);
    // Two deliveries at once share their budgets; reads never count.
    w.mock.violations.length = 0;
    w.deliveryStarted();
    w.deliveryStarted();
    for (let i = 0; i < 26; i++) expect(await status(create())).toBe(200);
    await octokit.rest.checks.listForRef({ owner, repo, ref: head });
    w.deliveryEnded();
    w.deliveryEnded();
    expect(w.mock.violations).toEqual([]);
  });

  test("refuses a compare-and-swap from a stale head with 422 'Update is not a fast forward', as GitHub does", async () => {
    const { w, octokit, owner, repo } = setUp();
    const base = w.git.branchHead("main")!;
    const tree = (await octokit.rest.git.getCommit({ owner, repo, commit_sha: base })).data.tree.sha;
    const write = async (text: string, parent: string) => {
      const t = await octokit.rest.git.createTree({
        owner,
        repo,
        base_tree: tree,
        tree: [{ path: "tracks/a.json", mode: "100644", type: "blob", content: text }],
      });
      return (await octokit.rest.git.createCommit({ owner, repo, message: text, tree: t.data.sha, parents: [parent] }))
        .data.sha;
    };
    await octokit.rest.git.createRef({ owner, repo, ref: "refs/heads/consort/state", sha: base });
    const first = await write("one", base);
    const second = await write("two", base);
    await octokit.rest.git.updateRef({ owner, repo, ref: "heads/consort/state", sha: first, force: false });
    const lost = await octokit.rest.git
      .updateRef({ owner, repo, ref: "heads/consort/state", sha: second, force: false })
      .catch((e: { status: number; message: string }) => e);
    expect(lost).toMatchObject({ status: 422, message: expect.stringMatching(/not a fast forward/) });
    expect(w.stateHead()).toBe(first);
    expect(await status(octokit.rest.git.createRef({ owner, repo, ref: "refs/heads/consort/state", sha: base }))).toBe(
      422,
    );
    const file = await octokit.rest.repos.getContent({ owner, repo, path: "tracks/a.json", ref: first });
    expect(Buffer.from((file.data as { content: string }).content, "base64").toString()).toBe("one");
    expect(await status(octokit.rest.repos.getContent({ owner, repo, path: "tracks/a.json", ref: "main" }))).toBe(404);
    expect(w.mock.violations).toEqual([]);
  });

  test("keeps check runs per head sha and lists the latest of each name", async () => {
    const { w, octokit, owner, repo } = setUp();
    const sha = w.git.branchHead("main")!;
    const run = await octokit.rest.checks.create({
      owner,
      repo,
      name: "consort/build",
      head_sha: sha,
      status: "in_progress",
      output: { title: "running", summary: "s" },
    });
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: run.data.id,
      conclusion: "failure",
      output: { title: "refused", summary: "s" },
    });
    await octokit.rest.checks.create({
      owner,
      repo,
      name: "consort/build",
      head_sha: sha,
      conclusion: "success",
      output: { title: "ok", summary: "s" },
    });
    const listed = await octokit.rest.checks.listForRef({ owner, repo, ref: sha, filter: "latest" });
    expect(listed.data.check_runs.map((r) => [r.name, r.conclusion])).toEqual([["consort/build", "success"]]);
    expect(w.check(sha, "consort/build").conclusion).toBe("success");
    expect(w.checkRuns[0]!.history.map((h) => h.conclusion)).toEqual([null, "failure"]);
    expect(await status(octokit.rest.checks.create({ owner, repo, name: "x", head_sha: "0".repeat(40) }))).toBe(422);
    expect(w.mock.violations).toEqual([]);
  });

  test("dispatches a workflow at a branch with a run id, and serves the run's artifact as a real zip", async () => {
    const { w, octokit, owner, repo } = setUp();
    expect(
      await status(
        octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
          owner,
          repo,
          workflow_id: "consort-cycle.yml",
          ref: "main",
          inputs: { request: "{}" },
        }),
      ),
    ).toBe(404);
    w.git.commitOn("main", { name: "Lead", email: "lead@users.noreply.github.com", login: "lead" }, "add workflow\n", {
      ".github/workflows/consort-cycle.yml": "on: workflow_dispatch\n",
    });
    const dispatched = await octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner,
      repo,
      workflow_id: "consort-cycle.yml",
      ref: "main",
      inputs: { request: '{"step":"red"}' },
      return_run_details: true,
    });
    const runId = (dispatched.data as unknown as { workflow_run_id: number }).workflow_run_id;
    expect(w.dispatches).toEqual([{ workflow: "consort-cycle.yml", ref: "main", request: { step: "red" }, runId }]);
    w.completeRun(runId, { "cycle-result.json": { verdict: "verified" } });
    const artifacts = await octokit.rest.actions.listWorkflowRunArtifacts({ owner, repo, run_id: runId });
    const zip = await octokit.rest.actions.downloadArtifact({
      owner,
      repo,
      artifact_id: artifacts.data.artifacts[0]!.id,
      archive_format: "zip",
    });
    const files = unzipSync(new Uint8Array(zip.data as ArrayBuffer));
    expect(JSON.parse(strFromU8(files["cycle-result.json"]!))).toEqual({ verdict: "verified" });
    expect(w.mock.violations).toEqual([]);
  });

  test("compares two commits as GitHub does: status, the commits between oldest first with their parents, and the files", async () => {
    const { w, octokit, owner, repo } = setUp();
    const lead = { name: "Lead", email: "lead@users.noreply.github.com", login: "lead" };
    const base = w.git.branchHead("main")!;
    w.git.setBranch("feature", base);
    const one = w.git.commitOn("feature", lead, "one\n", { "docs/a.md": "a\n" }).sha;
    const two = w.git.commitOn("feature", lead, "two\n", { "docs/b.md": "b\n" }).sha;
    const ahead = (await octokit.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: `${base}...${two}` }))
      .data;
    expect([ahead.status, ahead.total_commits, ahead.merge_base_commit.sha]).toEqual(["ahead", 2, base]);
    expect(ahead.commits.map((c) => [c.sha, c.parents.map((p) => p.sha), c.author?.login])).toEqual([
      [one, [base], "lead"],
      [two, [one], "lead"],
    ]);
    expect(ahead.files?.map((f) => [f.filename, f.status])).toEqual([
      ["docs/a.md", "added"],
      ["docs/b.md", "added"],
    ]);
    const behind = await octokit.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: `${two}...${base}` });
    expect([behind.data.status, behind.data.commits]).toEqual(["behind", []]);
    expect(w.mock.violations).toEqual([]);
  });

  test("lists at most 3000 files of a commit, 300 a page, and a merge's files against its first parent", async () => {
    const { w, octokit, owner, repo } = setUp();
    const lead = { name: "Lead", email: "lead@users.noreply.github.com", login: "lead" };
    const files = Object.fromEntries(Array.from({ length: 3001 }, (_, i) => [`gen/f${i}.txt`, `${i}\n`]));
    const big = w.git.commitOn("main", lead, "big\n", files).sha;
    const pages: unknown[] = [];
    for (let page = 1; page <= 31; page++)
      pages.push(
        ...((await octokit.rest.repos.getCommit({ owner, repo, ref: big, per_page: 100, page })).data.files ?? []),
      );
    expect(pages).toHaveLength(3000);
    const first = await octokit.rest.repos.getCommit({ owner, repo, ref: big });
    expect(first.data.files).toHaveLength(300);

    w.git.setBranch("feature", w.git.commitInfo(big)!.parents[0]!);
    w.git.commitOn("feature", lead, "side\n", { "docs/side.md": "side\n" });
    const merge = w.git.mergeOn("feature", w.git.branchHead("main")!, "Merge main\n", lead);
    const merged = await octokit.rest.repos.getCommit({ owner, repo, ref: merge, per_page: 1 });
    expect([merged.data.parents.length, merged.data.files?.[0]?.filename]).toEqual([2, "gen/f0.txt"]);
    expect(w.mock.violations).toEqual([]);
  });

  test("reads a tree whole with recursive, paths from the root", async () => {
    const { w, octokit, owner, repo } = setUp();
    const head = w.git.branchHead("main")!;
    const flat = await octokit.rest.git.getTree({ owner, repo, tree_sha: head });
    const whole = await octokit.rest.git.getTree({ owner, repo, tree_sha: head, recursive: "1" });
    expect(flat.data.tree.some((e) => e.path?.includes("/"))).toBe(false);
    const blob = whole.data.tree.find((e) => e.path === "src/db/migrate.ts");
    expect(blob).toMatchObject({ type: "blob", sha: w.git.blobSha(head, "src/db/migrate.ts") });
    expect(w.mock.violations).toEqual([]);
  });
});
