import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NextAction } from "../../src/orchestrator/types.js";
import { runConsort } from "../helpers/cli.js";
import { stockflowText } from "../orchestrator/fixtures/stockflow.js";

/** `consort validate`, `next` and `status` on a repository as a team has it on its first day. */

const work = mkdtempSync(join(tmpdir(), "consort-cli-orchestrate-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("consort validate on a fresh repository", () => {
  it("says there is no design yet and what to write first, pointing at schemas the repository has", async () => {
    const run = await runConsort("validate", "-C", work);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      "✓ configuration valid: defaults (no .github/consort.yml). No design yet: nothing in .consort/ to validate.\n" +
        "Write the stories first: .consort/spec.json, the Product Owner's step, on a feature branch (`npx --no-install consort next` there shows the task; formats in node_modules/consort-for-github/schemas/).\n",
    );
    expect(run.stdout).not.toContain("0 artifact file(s)");
  });
});

describe("consort next and status with no state file", () => {
  const repo = join(work, "repo");
  beforeAll(async () => {
    mkdirSync(repo);
    const git = simpleGit(repo);
    await git.init(["--initial-branch=main"]);
    await git.addConfig("user.name", "Product Owner").addConfig("user.email", "po@example.com");
    writeFileSync(join(repo, "README.md"), "shop\n");
    await git.add(".").commit("shop");
    await git.checkoutLocalBranch("f1-stock");
  });

  it("derive the track from the branch's commits: first the Product Owner, then the Spec Author", async () => {
    const first = JSON.parse((await runConsort("next", "-C", repo, "--json")).stdout) as NextAction;
    expect(first).toMatchObject({ trackId: "f1-stock", stage: "stories", role: "product-owner" });

    const { nfrs: _nfrs, ...stories } = JSON.parse(stockflowText.spec) as Record<string, unknown>;
    const spec = join(repo, ".consort/spec.json");
    mkdirSync(dirname(spec), { recursive: true });
    writeFileSync(spec, `${JSON.stringify(stories, null, 2)}\n`);
    await simpleGit(repo).add(".").commit("Stories\n\nConsort-Role: product-owner");

    const next = await runConsort("next", "-C", repo, "--json");
    expect(next.status).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ stage: "spec", role: "spec-author" });
    const status = await runConsort("status", "-C", repo);
    expect(status.stdout).toContain(
      "state: 1 commit(s) since the merge base with main, replayed locally; gates show as waiting for approval",
    );
    // Which branch was taken for the default, and from where, so a wrong guess shows.
    expect(status.stdout).toContain(
      "default branch: main, the local branch main (origin could not be asked: the checkout has no remote named origin; git config consort.defaultBranch <branch> decides)",
    );
    expect(status.stdout).toMatch(/✗|…/);
    expect(status.stdout).not.toMatch(/✓ consort\/design/);
  });

  it("on the default branch, say it is no track and how to start one", async () => {
    await simpleGit(repo).checkout("main");
    try {
      const run = await runConsort("next", "-C", repo);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("is on the default branch main, which is not a track");
      expect(run.stderr).toContain("git switch -c <feature>");
    } finally {
      await simpleGit(repo).checkout("f1-stock");
    }
  });

  it("a state file that is no snapshot says so, and how to do without one", async () => {
    const empty = join(work, "empty.json");
    writeFileSync(empty, "{}");
    const run = await runConsort("next", "--state", empty, "-C", repo);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("this is not a track snapshot: it has no schemaVersion");
    expect(run.stderr).toContain("leave the state out to derive it from the branch's commits");
  });
});
