import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import { createTrack, transition, type TrackSnapshot, type TransitionResult } from "../../src/orchestrator/index.js";
import { gitSource } from "../../src/push/git.js";
import { githubSource } from "../../src/push/github.js";
import { completedPush, pushEvent, verifiedPush, type VerifiedPush } from "../../src/push/read.js";
import type { PushSource } from "../../src/push/source.js";
import * as F from "../e2e/support/feature.js";
import { GitRepo, type GitIdentity } from "../e2e/support/git-repo.js";
import { GitHubWorld } from "../e2e/support/github-world.js";
import { octokit } from "../state/helpers.js";

/**
 * One push reader behind a port (src/push): the same sequence of pushes read through the GitHub
 * adapter (the GitHub double, answering GitHub's REST API from a real repository) and through the
 * local-git adapter (that repository's own git) reads the same commits, files, merges and rebases,
 * and the machine gives the same verdict on each. Covers a refused step, a reset, a merge of the
 * default branch, a merge of another branch, and a rebase onto the default branch.
 */

const config = defaultConfig();
const BRANCH = "feature/stock-by-location";
const who = (login: string): GitIdentity => ({ name: login, email: `${login}@users.noreply.github.com`, login });
const LEAD = who("lead-dev");
const role = (name: string) => ({ identity: who(`${name}-bot`), trailer: `Consort-Role: ${name}` });

let repo: GitRepo;
let world: GitHubWorld;
beforeAll(() => {
  repo = GitRepo.fromDirectory(F.EXAMPLE, { leaveOut: [".consort", "test"] });
  repo.commitOn("main", LEAD, "StockFlow before stock by location", { ...F.BEFORE });
  repo.setBranch(BRANCH, repo.branchHead("main")!);
});
afterAll(() => {
  world?.dispose();
  repo?.remove();
});

const step = (name: string, files: Record<string, string | null>, subject = `${name} step`) => {
  const { identity, trailer } = role(name);
  return repo.commitOn(BRANCH, identity, `${subject}\n\n${trailer}\n`, files).sha;
};

/** What each adapter reads of the push, completed as the app completes it, and the machine's answer. */
async function readThrough(source: PushSource, snapshot: TrackSnapshot, before: string, after: string) {
  const read = await verifiedPush({ source, before, after, payload: undefined, defaultBranch: "main", config });
  const push = await completedPush({ source, before, after, config, snapshot }, read);
  const event = pushEvent(snapshot, { before, after, ...push }, "2026-12-03T10:00:00Z");
  return { push, result: event ? transition(snapshot, event, config) : undefined };
}

/** The push from the track's head to the branch's, through both adapters: they must agree on everything. */
async function pushBoth(snapshot: TrackSnapshot): Promise<{ push: VerifiedPush; result: TransitionResult }> {
  // The checkout's own refs, as a clone holds them: only the double keeps the branches otherwise.
  repo.git("update-ref", "refs/heads/main", repo.branchHead("main")!);
  const before = snapshot.context.rejectedHead?.sha ?? snapshot.context.head;
  const after = repo.branchHead(BRANCH)!;
  world = world ?? new GitHubWorld(repo);
  const github = await readThrough(
    githubSource({ octokit: octokit(), owner: "acme", repo: "stockflow" }),
    snapshot,
    before,
    after,
  );
  const local = await readThrough(gitSource(repo.dir), snapshot, before, after);
  expect(local.push).toEqual(github.push);
  expect(local.result).toEqual(github.result);
  expect(github.result).toBeDefined();
  return { push: github.push, result: github.result! };
}

describe("the GitHub and the local-git adapter read a track's pushes alike", () => {
  test("steps, a refusal and its reset, merges and a rebase get the same verdicts", async () => {
    let snapshot = createTrack(
      {
        trackId: "feature-stock-by-location",
        branch: BRANCH,
        baseBranch: "main",
        head: repo.branchHead(BRANCH)!,
        databaseBranch: "feature-stock-by-location",
        parentDatabaseBranch: "main",
        at: "2026-12-03T09:00:00Z",
      },
      config,
    ).snapshot;
    const next = async () => {
      const both = await pushBoth(snapshot);
      snapshot = both.result.snapshot;
      return both;
    };

    step("product-owner", { ".consort/spec.json": F.STORIES });
    expect((await next()).result.rejection).toBeUndefined();
    expect(snapshot.stage).toBe("spec");

    // A spec step that also edits production code: refused, by both, for the same reasons.
    const accepted = repo.branchHead(BRANCH)!;
    step("spec-author", { ".consort/spec.json": F.SPEC, "src/services/stock.ts": "export {};\n" });
    const refused = await next();
    expect(refused.result.rejection?.reasons.join("\n")).toContain("src/services/stock.ts");
    // The branch reset to the accepted commit (a push GitHub's compare calls behind) clears it.
    repo.setBranch(BRANCH, accepted, repo.branchHead(BRANCH));
    expect((await next()).push.status).toBe("behind");
    expect(snapshot.context.rejectedHead).toBeNull();

    step("spec-author", { ".consort/spec.json": F.SPEC });
    await next();
    expect(snapshot.stage).toBe("architecture");

    // "Update branch": a merge of what main gained; the track stays where it is.
    repo.commitOn("main", LEAD, "README: how to run\n", { "README.md": "StockFlow\n\nnpm test\n" });
    repo.mergeOn(BRANCH, repo.branchHead("main")!, "Merge branch 'main'\n", LEAD);
    const merged = await next();
    expect(merged.result.rejection).toBeUndefined();
    expect(merged.push.commits.map((c) => c.merge === true)).toEqual([true]);
    expect(snapshot.stage).toBe("architecture");

    // A merge of a branch that is not main: refused by both with the same reason.
    const before = repo.branchHead(BRANCH)!;
    repo.setBranch("experiment", repo.branchHead("main")!);
    repo.commitOn("experiment", LEAD, "an experiment\n", { "notes.md": "try\n" });
    repo.mergeOn(BRANCH, repo.branchHead("experiment")!, "Merge branch 'experiment'\n", LEAD);
    const foreign = await next();
    expect(foreign.result.rejection?.reasons.join("\n")).toContain("which is not on main");
    repo.setBranch(BRANCH, before, repo.branchHead(BRANCH));
    await next();

    step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
    await next();
    expect(snapshot.stage).toBe("db-design");

    // main moves on, and the track is rebased onto it: the accepted commits replayed, one for one.
    repo.commitOn("main", LEAD, "README: the port\n", { "README.md": "StockFlow\n\nnpm test on port 3000\n" });
    repo.rebaseOn(BRANCH, repo.branchHead("main")!, LEAD);
    const rebased = await next();
    expect(rebased.push.status).toBe("diverged");
    expect(rebased.push.rebased?.commits).toHaveLength(3);
    expect(rebased.result.rejection).toBeUndefined();
    expect(snapshot.stage).toBe("db-design");
  });
});
