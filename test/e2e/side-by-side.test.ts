import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { expectPassing, stages, summaryOf } from "./support/checks.js";
import { indexFeature, type IndexFeature } from "./support/index-feature.js";
import { LEAD, Scenario } from "./support/scenario.js";

/**
 * Two features in flight side by side on one repository, one app and one parent database: both
 * are designed, built and released at once; the first merges and is promoted; the second is then
 * behind the default branch, is brought up to date with a merge of it (as "Update branch" makes
 * one), has its release verified again on a fresh fork of the parent as it now stands (with the
 * first feature's migration), and merges with every check `success`.
 */

const hex = () => randomBytes(3).toString("hex");
const a = new Scenario({ branch: `stock-by-code-${hex()}` });
const b = new Scenario({ beside: a, branch: `stock-by-change-${hex()}` });
// Each feature numbers its migration after the other's: the same number would be a conflict the
// update names in consort/schema (test/e2e/pushes.test.ts), and the track would stop there.
const A = indexFeature("F3", "inventory_code", "0002", "a tracking code is found at once");
const B = indexFeature("F4", "updated_at", "0003", "what changed today is listed at once");
const TRACKS: Array<[Scenario, IndexFeature]> = [
  [a, A],
  [b, B],
];
/** The indexes migration 0001 creates with stock_records (listed after the features' by name). */
const TABLE_INDEXES = ["stock_records_pkey", "stock_records_sku_location_key"];
const { CLEAN, DESIGN_APPROVED, LIST_APPROVED, BUILT, RELEASED, DEPLOY_APPROVED, EVERY_CHECK } = stages(true);

afterAll(async () => {
  await b.dispose();
  await a.dispose();
});

/** The indexes on stock_records in a database branch of the scenario's root (the root itself by default). */
async function indexesIn(s: Scenario, branch?: string): Promise<string[]> {
  const provider = await s.openProvider();
  const client = new pg.Client({
    connectionString: await provider.connectionUrl(branch ?? (await provider.rootBranch())),
  });
  await client.connect();
  try {
    const { rows } = await client.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'stock_records' ORDER BY indexname",
    );
    return rows.map((r) => r.indexname);
  } finally {
    await client.end();
    await provider.close();
  }
}

/** One step for every track in turn, each track's seven checks asserted after it. */
async function bothTracks(
  step: (s: Scenario, f: IndexFeature) => Promise<unknown>,
  stage: string,
  passing: Parameters<typeof expectPassing>[1],
): Promise<void> {
  for (const [s, f] of TRACKS) {
    await step(s, f);
    expect(s.snapshot().stage, s.branch).toBe(stage);
    expectPassing(s, passing);
  }
}

async function verified(run: Promise<{ verdict: string; reasons: string[] }>): Promise<void> {
  const result = await run;
  expect(result.verdict, result.reasons.join("\n")).toMatch(/^(verified|promoted)$/);
}

/** A person merges the track's PR and GitHub says so; the promotion job then migrates the parent. */
async function mergeAndPromote(s: Scenario): Promise<void> {
  s.world.merge(s.pull!, LEAD);
  await s.deliver("pull_request", {
    ...s.payloadBase,
    action: "closed",
    number: s.pull!.number,
    pull_request: s.world.pullPayload(s.pull!),
  });
  expect(s.snapshot().stage).toBe("promoting");
  expectPassing(s, EVERY_CHECK);
  await verified(s.runDispatchedPromotion());
  expect(s.snapshot().stage).toBe("done");
  expectPassing(s, EVERY_CHECK);
}

describe("two tracks in flight side by side", () => {
  test("the second is brought up to date after the first merges, its release verified again against the parent as it now stands, and merges with every check success", async () => {
    await bothTracks((s) => s.createBranch(), "stories", CLEAN);
    // The parent is empty: the example has no seed, and only a promotion migrates it.
    expect(await indexesIn(a)).toEqual([]);
    await bothTracks((s) => s.openPull(), "stories", CLEAN);
    await bothTracks((s, f) => s.step("product-owner", { [ARTIFACT_PATHS.spec]: f.STORIES }), "spec", CLEAN);
    await bothTracks((s, f) => s.step("spec-author", { [ARTIFACT_PATHS.spec]: f.SPEC }), "architecture", CLEAN);
    await bothTracks(
      (s, f) => s.step("architect", { [ARTIFACT_PATHS.architecture]: f.ARCHITECTURE }),
      "db-design",
      CLEAN,
    );
    await bothTracks((s, f) => s.step("dba", { [ARTIFACT_PATHS.dbDesign]: f.DB_DESIGN }), "design-gate", CLEAN);
    await bothTracks((s) => s.review(LEAD, "APPROVED"), "test-list", DESIGN_APPROVED);
    await bothTracks(
      (s, f) => s.step("test-strategist", { [ARTIFACT_PATHS.testList]: f.TEST_LIST }),
      "test-list-gate",
      DESIGN_APPROVED,
    );
    await bothTracks((s) => s.review(LEAD, "APPROVED"), "red", LIST_APPROVED);
    await bothTracks((s, f) => s.step("navigator", { [f.testFile]: f.RED_T1 }), "red-verify", LIST_APPROVED);
    await bothTracks((s) => verified(s.runDispatchedCycle()), "green", LIST_APPROVED);
    await bothTracks((s, f) => s.step("driver", f.GREEN_T1), "green-verify", LIST_APPROVED);
    await bothTracks((s) => verified(s.runDispatchedCycle()), "review", LIST_APPROVED);
    await bothTracks((s, f) => s.step("navigator", { [`.consort/reviews/T1.json`]: f.REVIEW_T1 }), "deploying", BUILT);
    await bothTracks((s) => verified(s.runDispatchedDeploy()), "deploy-gate", RELEASED);
    // Both releases ran against the parent as it was: neither feature's index is there yet.
    expect(await indexesIn(a)).toEqual([]);
    const firstRelease = b.state().cycles.filter((c) => c.step === "release");

    // The first track merges and is promoted: the parent now has its index.
    await a.review(LEAD, "APPROVED");
    expect(a.snapshot().stage).toBe("promote-gate");
    expectPassing(a, DEPLOY_APPROVED);
    await a.review(LEAD, "APPROVED");
    expectPassing(a, EVERY_CHECK);
    await mergeAndPromote(a);
    expect(await indexesIn(a)).toEqual([A.indexName, ...TABLE_INDEXES]);

    // The second is behind main. GitHub's "Update branch" cannot merge it: both features wrote the
    // design artifacts, whose paths are fixed. A person resolves the conflict keeping the track's
    // own design (GitHub's conflict editor makes the same merge commit); the first feature's test
    // file and migration come in as they are on main.
    const trackDesign = Object.fromEntries(
      b.repo
        .listTreeRecursive(b.repo.commitInfo(b.head())!.tree)
        .filter((entry) => entry.type === "blob" && entry.path.startsWith(".consort/"))
        .map((entry) => [entry.path, b.repo.fileAt(b.head(), entry.path)!.toString("utf8")]),
    );
    await expect(b.updateBranch()).rejects.toThrow(
      `conflicts in ${Object.keys(trackDesign).sort().join(", ")}: resolve them`,
    );
    const update = await b.updateBranch(LEAD, trackDesign);
    expect(b.repo.fileAt(update, A.testFile)?.toString("utf8")).toBe(A.RED_T1);

    // The merged-in commits are not the track's: the gates stay approved and the build stays done,
    // but the release no longer describes the head. It is dispatched again, and the track's
    // database branch is forked afresh from the parent as it stands now.
    const snapshot = b.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.rejectedHead]).toEqual(["deploying", update, null]);
    expect(snapshot.context.migrationConflicts).toEqual([]);
    expectPassing(b, BUILT);
    const reverified = await b.runDispatchedDeploy();
    expect(reverified.verdict, reverified.reasons.join("\n")).toBe("verified");
    expect(reverified.commit).toBe(update);
    // Only the track's own migration is the release's; the parent already ran the first feature's.
    expect(reverified.migrationsApplied).toEqual(Object.keys(B.GREEN_T1).sort());
    expect(reverified.schema?.diffMarkdown).toContain(B.indexName);
    expect(reverified.schema?.diffMarkdown).not.toContain(A.indexName);
    expect(await indexesIn(b, b.snapshot().context.databaseBranch)).toEqual([
      A.indexName,
      B.indexName,
      ...TABLE_INDEXES,
    ]);
    expect(b.state().cycles.filter((c) => c.step === "release")).toHaveLength(firstRelease.length + 1);
    expect(b.snapshot().stage).toBe("deploy-gate");
    expectPassing(b, RELEASED);

    // The deploy and promote gates are approved on the new evidence, and the track merges with all
    // seven checks success on the head that merges.
    await b.review(LEAD, "APPROVED");
    expect(b.snapshot().stage, summaryOf(b.world.check(b.head(), "consort/deploy"))).toBe("promote-gate");
    expectPassing(b, DEPLOY_APPROVED);
    await b.review(LEAD, "APPROVED");
    expectPassing(b, EVERY_CHECK);
    await mergeAndPromote(b);
    expect(await indexesIn(a)).toEqual([A.indexName, B.indexName, ...TABLE_INDEXES]);
    expect(a.world.mock.violations).toEqual([]);
  }, 600_000);
});
