import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, test } from "vitest";
import { EXAMPLE } from "./support/feature.js";
import { GitRepo } from "./support/git-repo.js";
import { GitHubWorld } from "./support/github-world.js";

/**
 * The GitHub double answers writes that race or are refused as GitHub does, and lists the app's
 * webhook deliveries (issue #33); every request is checked against @octokit/openapi.
 */

let world: GitHubWorld | undefined;
afterEach(() => {
  world?.dispose();
  world?.git.remove();
  world = undefined;
});

async function setUp() {
  const w = (world = new GitHubWorld(GitRepo.fromDirectory(EXAMPLE, { leaveOut: ["test"] })));
  const octokit = new Octokit({ auth: "ghs_test", request: { retries: 0 } });
  await octokit.rest.git.createRef({
    owner: w.owner,
    repo: w.name,
    ref: "refs/heads/consort/state",
    sha: w.git.branchHead("main")!,
  });
  const put = (text: string, sha?: string) =>
    octokit.rest.repos.createOrUpdateFileContents({
      owner: w.owner,
      repo: w.name,
      path: "tracks/a.json",
      message: text,
      content: Buffer.from(text).toString("base64"),
      branch: "consort/state",
      ...(sha ? { sha } : {}),
    });
  return { w, octokit, put };
}

const answer = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ status: 200, message: "" }),
    (error: { status: number; response: { data: { message: string } } }) => ({
      status: error.status,
      message: error.response.data.message,
    }),
  );

describe("the GitHub double's answers to racing and refused writes", () => {
  for (const status of [409, 422] as const) {
    test(`a write whose branch moved under it is refused with ${status} "is at X but expected Y", and the other write stands`, async () => {
      const { w, put } = await setUp();
      const before = w.stateHead()!;
      w.branchMovesUnderNextWrites("consort/state", status);
      const refused = await answer(put("one"));
      const moved = w.stateHead()!;
      expect(refused).toEqual({ status, message: `refs/heads/consort/state is at ${moved} but expected ${before}` });
      expect(w.git.commitInfo(moved)!.parents).toEqual([before]);
      expect((await answer(put("one"))).status).toBe(200);
      expect(w.mock.violations).toEqual([]);
    });
  }

  test("protection and push protection refuse Contents writes with 409 and GitHub's message, changing nothing", async () => {
    const { w, put } = await setUp();
    const before = w.stateHead();
    w.refuseContentsWrites("consort/state", "protection", 1);
    w.refuseContentsWrites("consort/state", "push-protection", 1);
    expect(await answer(put("one"))).toEqual({
      status: 409,
      message: "Repository rule violations found\n\nCannot update this protected ref.\n\n",
    });
    expect(await answer(put("one"))).toEqual({
      status: 409,
      message: "Repository rule violations found\n\nPush cannot contain secrets.\n\n",
    });
    expect(w.stateHead()).toBe(before);
    expect((await answer(put("one"))).status).toBe(200);
  });

  test("a repository the app lost access to answers 404 to everything", async () => {
    const { w, octokit, put } = await setUp();
    w.accessLost = true;
    expect((await answer(put("one"))).status).toBe(404);
    expect((await answer(octokit.rest.repos.get({ owner: w.owner, repo: w.name }))).status).toBe(404);
  });
});

describe("the GitHub double's webhook deliveries API", () => {
  test("lists the app's deliveries newest first, filters the failed ones, and records redeliveries", async () => {
    const { w, octokit } = await setUp();
    w.recordDelivery({ guid: "d-1", event: "push", statusCode: 202 });
    const failed = w.recordDelivery({ guid: "d-2", event: "workflow_run", action: "completed", statusCode: 0 });
    w.recordDelivery({ guid: "d-3", event: "push", statusCode: 500 });
    const all = await octokit.request("GET /app/hook/deliveries", { per_page: 100 });
    expect(all.data.map((d) => d.guid)).toEqual(["d-3", "d-2", "d-1"]);
    const failures = await octokit.request("GET /app/hook/deliveries", { status: "failure" });
    expect(failures.data.map((d) => [d.guid, d.status_code])).toEqual([
      ["d-3", 500],
      ["d-2", 0],
    ]);
    await octokit.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: failed.id });
    expect(w.redeliveries).toEqual(["d-2"]);
    expect(w.mock.violations).toEqual([]);
  });
});
