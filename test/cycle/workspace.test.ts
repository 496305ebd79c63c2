import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { headCommit, listTestFiles, resolveTestBase, testFileChanges } from "../../src/cycle/workspace.js";
import { git } from "./stockflow.js";

let repo: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-workspace-"));
  await git(repo, "init", "-q", "-b", "main");
  await writeFile(join(repo, "a.test.ts"), "a\n");
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "one");
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe("the commit a checkout is at", () => {
  test("matches git on a branch, with packed refs and on a detached HEAD", async () => {
    expect(await headCommit(repo)).toBe(await git(repo, "rev-parse", "HEAD"));
    await git(repo, "pack-refs", "--all");
    expect(await headCommit(repo)).toBe(await git(repo, "rev-parse", "HEAD"));
    const first = await git(repo, "rev-parse", "HEAD");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "two");
    await git(repo, "checkout", "-q", "--detach", first);
    expect(await headCommit(repo)).toBe(first);
  });

  test("a git worktree (a .git file, not a folder) is answered by git itself", async () => {
    const tree = join(repo, "..", `${repo.split("/").at(-1)}-tree`);
    await git(repo, "worktree", "add", "-q", tree);
    try {
      expect(await headCommit(tree)).toBe(await git(repo, "rev-parse", "HEAD"));
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  test("a folder that is not a checkout has no commit", async () => {
    const plain = await mkdtemp(join(tmpdir(), "consort-plain-"));
    try {
      expect(await headCommit(plain)).toBeUndefined();
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});

test("test files are found by the configured globs, outside node_modules", async () => {
  await writeFile(join(repo, "b.spec.ts"), "");
  await writeFile(join(repo, "main.ts"), "");
  expect(await listTestFiles(repo, ["**/*.test.*", "**/*.spec.*"])).toEqual(["a.test.ts", "b.spec.ts"]);
});

describe("the track's own test changes, measured from its merge base with the trunk", () => {
  const GLOBS = ["**/*.test.*"];
  const commitAll = async (message: string) => {
    await git(repo, "add", "-A");
    await git(repo, "commit", "-q", "-m", message);
  };

  test("the trunk's untouched tests are not changes; added, edited, deleted and untracked test files are", async () => {
    await writeFile(join(repo, "b.test.ts"), "b\n");
    await writeFile(join(repo, "c.test.ts"), "c\n");
    await commitAll("trunk tests");
    await git(repo, "checkout", "-q", "-b", "track");
    await writeFile(join(repo, "a.test.ts"), "a edited\n");
    await rm(join(repo, "b.test.ts"));
    await mkdir(join(repo, "test"));
    await writeFile(join(repo, "test/new.test.ts"), "new\n");
    await writeFile(join(repo, "code.ts"), "code\n");
    await commitAll("track");
    // The trunk moves on after the fork: its later test files are not the track's either.
    await git(repo, "checkout", "-q", "main");
    await writeFile(join(repo, "later.test.ts"), "later\n");
    await commitAll("trunk later");
    await git(repo, "checkout", "-q", "track");
    await writeFile(join(repo, "untracked.test.ts"), "u\n");

    const base = await resolveTestBase(repo, { branch: "main" });
    expect(base).toMatchObject({
      ok: true,
      commit: await git(repo, "rev-parse", "main~1"),
      describe: expect.stringContaining("with main"),
    });
    if (!base.ok) throw new Error(base.reason);
    expect(await testFileChanges(repo, base.commit, GLOBS)).toEqual([
      { path: "a.test.ts", change: "modified" },
      { path: "b.test.ts", change: "deleted" },
      { path: "test/new.test.ts", change: "added" },
      { path: "untracked.test.ts", change: "added" },
    ]);
    expect(await resolveTestBase(repo, undefined)).toEqual(base);
  });

  test("a base that is missing or shares no history with HEAD cannot be decided: it fails with the fix", async () => {
    const missing = await resolveTestBase(repo, { branch: "trunk" });
    expect(missing).toMatchObject({
      ok: false,
      reason: expect.stringContaining("the branch trunk, is not in the checkout"),
    });
    await git(repo, "checkout", "-q", "--orphan", "unrelated");
    await commitAll("no shared history");
    const unrelated = await resolveTestBase(repo, { branch: "main" });
    expect(unrelated).toMatchObject({
      ok: false,
      reason: expect.stringContaining("shares no history with the base main"),
    });
    expect(!unrelated.ok && unrelated.reason).toContain("fetch-depth: 0");
  });
});

describe("the base of a request that names none (older requests, `consort cycle`)", () => {
  test("is the default branch, never a feature branch the clone's origin/HEAD names", async () => {
    const one = await git(repo, "rev-parse", "HEAD");
    await git(repo, "switch", "-q", "-c", "feature/old");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "old feature");
    await git(repo, "switch", "-q", "main");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "two");
    const two = await git(repo, "rev-parse", "HEAD");
    // As a clone that fetched both, with origin/HEAD left on the feature branch (an old set-head).
    await git(repo, "update-ref", "refs/remotes/origin/main", "main");
    await git(repo, "update-ref", "refs/remotes/origin/feature/old", "feature/old");
    await git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/feature/old");
    await git(repo, "switch", "-q", "-c", "feature/new");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "new feature");
    const base = await resolveTestBase(repo, undefined);
    expect(base).toEqual({ ok: true, commit: two, describe: `the merge base ${two.slice(0, 12)} with origin/main` });
    expect(two).not.toBe(one);
  });
});
