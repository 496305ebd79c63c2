import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runnerPackagesPending, withRunnerPackages, type VerifiedPush } from "../../src/push/read.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import type { PushedCommit } from "../../src/orchestrator/types.js";
import { contentFile } from "../handlers/fake-repo.js";
import { GitHubMock } from "../helpers/github.js";
import { reach } from "../orchestrator/helpers/reach.js";
import { octokit } from "../state/helpers.js";
import { githubSource } from "../../src/push/github.js";

/**
 * The package.json texts the frozen runner configuration needs (src/push/read.ts): read only once
 * the test-list gate has opened, at the push's first commit's parent, once a push however many
 * commits it holds, and never for a commit that changes only `.consort/`.
 */

const BEFORE = "a".repeat(40);
const config = defaultConfig();
const PACKAGE = `${JSON.stringify({ scripts: { test: "node scripts/run-tests.js" } })}\n`;

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

const commit = (n: number, paths: string[], files: PushedCommit["files"] = {}): PushedCommit => ({
  sha: String(n).repeat(40),
  authorLogin: "driver-bot[bot]",
  message: "GREEN\n\nConsort-Role: driver\n",
  changes: paths.map((path) => ({ path, status: "modified" as const })),
  files,
  before: {},
});
const push = (commits: PushedCommit[]): VerifiedPush => ({
  status: "ahead",
  forced: false,
  commits,
  problems: [],
  trees: { before: "b".repeat(40), after: "d".repeat(40) },
  migrationConflicts: [],
});

describe("the package.json texts of a push, once the runner's configuration is frozen", () => {
  it("are read once a push at its base, carried to the next commits, and the text a commit writes is the next one's", async () => {
    const snapshot = reach("green").snapshot;
    const rewritten = `${JSON.stringify({ scripts: { test: "vitest run" } })}\n`;
    const verified = push([
      commit(1, ["src/a.ts"]),
      commit(2, ["src/b.ts", "package.json"], { "package.json": rewritten }),
      commit(3, ["src/c.ts"]),
    ]);
    expect(runnerPackagesPending(verified, snapshot, config)).toBe(true);
    github.on("GET", "/repos/acme/shop/contents/package.json", contentFile("package.json", PACKAGE));
    const read = await withRunnerPackages(
      {
        source: githubSource({ octokit: octokit(), owner: "acme", repo: "shop" }),
        repository: "acme/shop",
        before: BEFORE,
        config,
        snapshot,
      },
      verified,
    );
    github.verify();
    expect(read.commits.map((c) => c.before?.["package.json"])).toEqual([PACKAGE, PACKAGE, rewritten]);
    expect(runnerPackagesPending(read, snapshot, config)).toBe(false);
  });

  it("are read no more by the process that kept them: the next push starts at this one's head, whose texts it knows", async () => {
    const snapshot = reach("green").snapshot;
    const texts = new Map<string, string | null>();
    const first = push([commit(1, ["src/a.ts"]), commit(2, ["src/b.ts"])]);
    github.on("GET", "/repos/acme/shop/contents/package.json", contentFile("package.json", PACKAGE));
    const ref = {
      source: githubSource({ octokit: octokit(), owner: "acme", repo: "shop" }),
      repository: "acme/shop",
      config,
      snapshot,
      texts,
    };
    await withRunnerPackages({ ...ref, before: BEFORE }, first);

    // The next push builds on commit 2: what commit 2 left is known, and GitHub is not asked again.
    const next = await withRunnerPackages({ ...ref, before: "2".repeat(40) }, push([commit(3, ["src/c.ts"])]));
    github.verify();
    expect(github.calls("GET", "/repos/acme/shop/contents/package.json")).toHaveLength(1);
    expect(next.commits[0]!.before?.["package.json"]).toBe(PACKAGE);
    // Another repository's commit of the same id is not this one's.
    expect(texts.has(`acme/other@${"2".repeat(40)}:package.json`)).toBe(false);
  });

  it("are not needed before the test-list gate opens, nor for a commit that changes only .consort/", () => {
    const design = reach("spec").snapshot;
    expect(runnerPackagesPending(push([commit(1, ["src/a.ts"])]), design, config)).toBe(false);
    const green = reach("green").snapshot;
    expect(runnerPackagesPending(push([commit(1, [".consort/reviews/AC1.json"])]), green, config)).toBe(false);
  });
});
