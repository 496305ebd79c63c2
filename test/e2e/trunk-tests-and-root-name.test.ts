import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, test } from "vitest";
import { CycleRequest, runCycle } from "../../src/cycle/index.js";
import { PromoteRequest, runPromote } from "../../src/deploy/index.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { createProvider } from "../../src/substrate/index.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { postgresUrl } from "../helpers/postgres.js";
import { EXAMPLE } from "./support/feature.js";
import { GitRepo } from "./support/git-repo.js";
import { Scenario } from "./support/scenario.js";

/**
 * Two things a real repository hits that the example alone did not: a refactor on a repository
 * whose default branch already has its own tests (only the track's test files count as its
 * changes), and promotion to a root named like the default `consort_root` (the snapshot's name
 * must be a valid branch id).
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function postgresProvider(root: string): Promise<BranchProvider> {
  const provider = await createProvider(
    { provider: "postgres", local: {}, postgres: { urlEnv: "CONSORT_PENDING_PG_URL", rootDatabase: root } },
    { env: { CONSORT_PENDING_PG_URL: postgresUrl() } },
  );
  cleanups.push(() => provider.close());
  return provider;
}

function checkoutOfExample(): { repo: GitRepo; dir: string; commit: string } {
  const repo = GitRepo.fromDirectory(EXAMPLE);
  const commit = repo.branchHead("main")!;
  const dir = join(mkdtempSync(join(tmpdir(), "consort-pending-")), "co");
  repo.addWorktree(dir, commit);
  symlinkSync(resolve(EXAMPLE, "../../node_modules"), join(dir, "node_modules"), "dir");
  cleanups.push(() => {
    rmSync(resolve(dir, ".."), { recursive: true, force: true });
    repo.remove();
  });
  return { repo, dir, commit };
}

test("a refactor is verified on a repository whose default branch already has tests", async () => {
  const { repo, dir, commit } = checkoutOfExample();
  const s = new Scenario();
  cleanups.push(() => s.dispose());
  const provider = await postgresProvider(`pending${randomBytes(4).toString("hex")}`);
  await provider.createBranch("track-refactor", { from: await provider.rootBranch() });
  // The track froze only its own test file; the trunk's other test files are untouched.
  const own = "test/stock-by-location.test.ts";
  const text = repo.fileAt(commit, own)!.toString("utf8");
  const request = CycleRequest.parse({
    version: 1,
    dispatchId: "track-refactor#9",
    track: "track-refactor",
    step: "refactor",
    commit,
    tests: {
      inTurn: [{ id: "T8", file: own, title: "a location with no stock returns an empty list with success" }],
      earlierGreen: [],
    },
    frozenTestFiles: [{ path: own, sha256: hashFrozenText(text), commit }],
    database: { branch: "track-refactor" },
  });
  const result = await runCycle(request, { provider, config: s.cycleConfig(), cwd: dir });
  expect(result.reasons).toEqual([]);
  expect(result.verdict).toBe("verified");
});

test("a promotion to a root database named like the default consort_root migrates it", async () => {
  const { dir, commit } = checkoutOfExample();
  const s = new Scenario();
  cleanups.push(() => s.dispose());
  const root = `consort_root_${randomBytes(3).toString("hex")}`;
  const provider = await postgresProvider(root);
  await provider.rootBranch();
  const request = PromoteRequest.parse({ version: 1, track: "feature", commit, database: { parent: root } });
  const result = await runPromote(request, { provider, config: s.cycleConfig(), cwd: dir });
  expect(result.reasons).toEqual([]);
  expect(result.verdict).toBe("promoted");
});
