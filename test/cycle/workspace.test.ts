import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { headCommit, listTestFiles } from "../../src/cycle/workspace.js";
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
