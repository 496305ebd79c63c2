import { requestDigest } from "../../src/github/dispatch.js";
import pg from "pg";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { noPersistentParent } from "../../src/deploy/promote.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { factSources, placementOf } from "../../src/contracts/placement.js";
import { postgresUrl } from "../helpers/postgres.js";
import { expectPassing, stages, summaryOf } from "./support/checks.js";
import * as F from "./support/feature.js";
import { LEAD, Scenario, stopOtherMachine } from "./support/scenario.js";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { trackIdForBranch } from "../../src/state/index.js";
import { webhookPayload } from "../helpers/webhooks.js";

/**
 * A whole feature of examples/stockflow through every gate, driven through `probot.receive`:
 * each design role's commit, the design and test-list gates approved by reviews, RED and GREEN
 * for every test with the dispatched cycle run for real on the embedded Postgres, the review
 * verdicts and a refactor, the verified release, the deploy and promote gates, the merge, the
 * parent's database migrated and the track's database branches deleted.
 */

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});
afterAll(stopOtherMachine);

/** The indexes of the parent's database on the app's server. */
async function parentIndexes(s: Scenario): Promise<string[]> {
  const admin = new pg.Client({ connectionString: postgresUrl(s.rootDatabase) });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'stock_records'",
    );
    return rows.map((r) => r.indexname);
  } finally {
    await admin.end();
  }
}

const schemaSummary = (s: Scenario) => summaryOf(s.world.checksOn(s.head()).get("consort/schema")!);

/**
 * The feature from a new branch through every gate, the merge and the promotion, asserting the
 * seven checks after each step. Returns the release's evidence and the promotion's result.
 */
async function throughEveryGate(s: Scenario, schemaFromStart: boolean, via: "merge" | "queue" = "merge") {
  const { CLEAN, DESIGN_APPROVED, LIST_APPROVED, BUILT, RELEASED, DEPLOY_APPROVED, EVERY_CHECK } =
    stages(schemaFromStart);
  await s.createBranch();
  expect(s.snapshot().stage).toBe("stories");
  expect(s.next()).toMatchObject({ actor: "agent", role: "product-owner" });
  expectPassing(s, CLEAN);
  await s.openPull();
  expectPassing(s, CLEAN);

  // The design lane: one role, one file, one commit each.
  await s.step("product-owner", { ".consort/spec.json": F.STORIES });
  expect(s.snapshot().stage).toBe("spec");
  expectPassing(s, CLEAN);
  await s.step("spec-author", { ".consort/spec.json": F.SPEC });
  expect(s.snapshot().stage).toBe("architecture");
  expectPassing(s, CLEAN);
  await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
  expect(s.snapshot().stage).toBe("db-design");
  expectPassing(s, CLEAN);
  await s.step("dba", { ".consort/db-design.json": F.DB_DESIGN });
  expect(s.snapshot().stage).toBe("design-gate");
  expectPassing(s, CLEAN);

  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("test-list");
  expectPassing(s, DESIGN_APPROVED);

  await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });
  expect(s.snapshot().stage).toBe("test-list-gate");
  expectPassing(s, DESIGN_APPROVED);
  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("red");
  expectPassing(s, LIST_APPROVED);

  // T1: the index fitness test, made green by the migration. The build check stays in progress
  // through every step until the last test is green and reviewed.
  await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
  expect(s.snapshot().stage).toBe("red-verify");
  expectPassing(s, LIST_APPROVED);
  let result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expect(s.snapshot().stage).toBe("green");
  expectPassing(s, LIST_APPROVED);
  await s.step("driver", F.GREEN_T1);
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expect(s.snapshot().stage).toBe("review");
  expectPassing(s, LIST_APPROVED);
  await s.step("navigator", { ".consort/reviews/T1.json": F.REVIEW_T1 });
  expect(s.snapshot().stage).toBe("red");
  expectPassing(s, LIST_APPROVED);

  // T2: listing a location.
  await s.step("navigator", { [F.TEST_FILE]: F.RED_T2 });
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expectPassing(s, LIST_APPROVED);
  await s.step("driver", F.GREEN_T2);
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expectPassing(s, LIST_APPROVED);
  await s.step("navigator", { ".consort/reviews/T2.json": F.REVIEW_T2 });
  expect(s.snapshot().stage).toBe("red");
  expectPassing(s, LIST_APPROVED);

  // T3: an empty location, then a refactor the navigator asks for.
  await s.step("navigator", { [F.TEST_FILE]: F.RED_T3 });
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expectPassing(s, LIST_APPROVED);
  await s.step("driver", F.GREEN_T3);
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expectPassing(s, LIST_APPROVED);
  await s.step("navigator", { ".consort/reviews/T3.json": F.REVIEW_T3 });
  expect(s.snapshot().stage).toBe("refactor");
  expectPassing(s, LIST_APPROVED);
  await s.step("driver", F.REFACTOR_T3);
  expect(s.snapshot().stage).toBe("refactor-verify");
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");

  // T4: a module the architect declared and nobody wrote yet. The navigator's RED imports it
  // statically, so its file cannot load: that is the behaviour missing, and the track moves on.
  expect(s.snapshot().stage).toBe("red");
  expectPassing(s, LIST_APPROVED);
  await s.step("navigator", { [F.SUMMARY_TEST_FILE]: F.RED_T4 });
  expect(s.snapshot().stage).toBe("red-verify");
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expect(result.tests.filter((t) => t.role === "turn")).toEqual([
    expect.objectContaining({
      id: "T4",
      outcome: "behaviour-missing",
      message: `behaviour missing: ${F.NEW_MODULE} not written yet`,
    }),
  ]);
  expect(s.snapshot().stage).toBe("green");
  expectPassing(s, LIST_APPROVED);
  expect(summaryOf(s.world.checksOn(s.head()).get("consort/build")!)).toContain(
    `verified (behaviour missing: ${F.NEW_MODULE} not written yet)`,
  );
  await s.step("driver", F.GREEN_T4);
  expect(s.snapshot().stage).toBe("green-verify");
  expectPassing(s, LIST_APPROVED);
  result = await s.runDispatchedCycle();
  expect(result.verdict, result.reasons.join("\n")).toBe("verified");
  expect(s.snapshot().stage).toBe("review");
  expectPassing(s, LIST_APPROVED);
  await s.step("navigator", { ".consort/reviews/T4.json": F.REVIEW_T4 });

  // The release: the orchestrator deploys and verifies; a person approves on that evidence.
  // Neither the deploy nor the promote check passes before its approval.
  expect(s.snapshot().stage).toBe("deploying");
  expectPassing(s, BUILT);
  const evidence = await s.runDispatchedDeploy();
  expect(evidence.verdict, evidence.reasons.join("\n")).toBe("verified");
  expect(evidence.migrationsApplied).toContain(`migrations/${F.MIGRATION_ID}.up.sql`);
  expect(s.snapshot().stage).toBe("deploy-gate");
  expectPassing(s, RELEASED);
  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("promote-gate");
  expectPassing(s, DEPLOY_APPROVED);
  await s.review(LEAD, "APPROVED");
  // All seven checks branch protection requires pass on the head that merges, the schema diff
  // of the track's database against its parent included.
  expectPassing(s, EVERY_CHECK);

  // Merge: the parent's database is migrated, the track's branches deleted.
  if (via === "queue") await throughMergeQueue(s);
  else s.world.merge(s.pull!, LEAD);
  await s.deliver("pull_request", {
    ...s.payloadBase,
    action: "closed",
    number: s.pull!.number,
    pull_request: s.world.pullPayload(s.pull!),
  });
  expect(s.snapshot().stage).toBe("promoting");
  expectPassing(s, EVERY_CHECK);
  const promoted = await s.runDispatchedPromotion();
  expect(promoted.verdict, promoted.reasons.join("\n")).toBe("promoted");
  expect(s.snapshot().stage).toBe("done");
  expectPassing(s, EVERY_CHECK);
  return { evidence, promoted };
}

/**
 * The PR merges through GitHub's merge queue: the queue pushes its group's branch (never a track),
 * asks for the required checks on the group's head, and merges only when all seven pass there.
 */
async function throughMergeQueue(s: Scenario): Promise<void> {
  const group = s.world.enqueue(s.pull!, LEAD);
  await s.deliver("push", {
    ...webhookPayload("push"),
    ...s.payloadBase,
    ref: `refs/heads/${group.branch}`,
    before: "0".repeat(40),
    after: group.headSha,
    created: true,
    deleted: false,
    forced: false,
    commits: [],
    head_commit: null,
  });
  expect(s.world.stateFileText(trackIdForBranch(group.branch))).toBeUndefined();
  expect(s.world.queueWaitsFor(group)).toEqual([...CHECK_NAMES]);
  await s.deliver("merge_group", { ...s.payloadBase, ...s.world.mergeGroupPayload(group, "checks_requested") });
  expect(s.world.queueWaitsFor(group)).toEqual([]);
  s.world.mergeGroup(group);
  await s.deliver("merge_group", { ...s.payloadBase, ...s.world.mergeGroupPayload(group, "destroyed", "merged") });
}

describe("a feature of StockFlow, end to end", () => {
  test("stock by location goes from a new branch to a migrated parent database, through every gate", async () => {
    const s = (scenario = new Scenario());
    const { evidence } = await throughEveryGate(s, true);

    // The release migrated the app's own track branch, and its diff is what the app's check compared.
    expect(evidence.schema?.computedOn).toBe("shared");
    expect(evidence.schema?.diffMarkdown).toContain("stock_records_by_location");
    expect(await parentIndexes(s)).toContain("stock_records_by_location");
    expect(s.world.appComments(s.pull!.number)[0]!.body).toContain(
      "Database facts: the app, the cycles, the release and the promotion all use the same `local` branches (self-hosted runner).",
    );
    const provider = await s.openProvider();
    const left = (await provider.listBranches())
      .map((b) => b.name)
      .filter((n) => n.includes(s.branch.split("-").at(-1)!));
    expect(left).toEqual([]);

    // What people read: one sticky comment on the PR, and the signed state records every cycle.
    expect(s.world.appComments(s.pull!.number)).toHaveLength(1);
    const cycles = s.snapshot().context.cycles;
    expect(cycles.map((c) => `${c.step}:${c.outcome}`)).toEqual([
      "red:valid",
      "green:valid",
      "red:valid",
      "green:valid",
      "red:valid",
      "green:valid",
      "refactor:valid",
      "red:valid",
      "green:valid",
      "release:valid",
      "promote:valid",
    ]);
    // Every request the app dispatched is recorded (its hash) on consort/state: only results answering those were trusted.
    expect(
      s
        .state()
        .cycles.map((c) => c.requestSha256)
        .sort(),
    ).toEqual(s.world.dispatches.map((d) => requestDigest(d.request)).sort());
    expect(s.world.mock.violations).toEqual([]);
  }, 600_000);

  test("with the jobs on another machine every check says what it saw there, and no parent is claimed migrated", async () => {
    const s = (scenario = new Scenario({ jobs: "another-machine" }));
    // consort/schema waits (in progress) until the release job brings its diff.
    // This variant merges through a merge queue.
    const { evidence, promoted } = await throughEveryGate(s, false, "queue");
    const parent = s.snapshot().context.parentDatabaseBranch;

    // The release job rebuilt the parent and the track on its own server and diffed them there.
    expect(evidence.schema).toMatchObject({ computedOn: "rebuilt", branch: s.snapshot().context.databaseBranch });
    expect(evidence.schema?.diffMarkdown).toContain("stock_records_by_location");
    expect(evidence.schema?.note).toContain(
      "Computed by the release job on databases it rebuilt on its runner's own server",
    );
    // The promotion says there was nothing persistent to migrate, and the app's parent is indeed untouched.
    expect(promoted.database.migrated).toBe(false);
    expect(promoted.notes).toEqual([noPersistentParent(parent)]);
    expect(await parentIndexes(s)).not.toContain("stock_records_by_location");

    const schema = schemaSummary(s);
    expect(schema).toContain(
      "The track is merged; nothing is migrated: there is no persistent parent, so the merge is the promotion.",
    );
    expect(schema).toContain("stock_records_by_location");
    const comment = s.world.appComments(s.pull!.number)[0]!.body;
    expect(comment).toContain(factSources(placementOf(ConsortConfig.parse({}))));
    // The last comment was written before the merge: it says what the merge will (not) do.
    expect(comment).toContain(
      "There is no persistent parent to migrate (the jobs run apart from the app's branches), so the merge is the promotion.",
    );
    expect(comment).not.toContain("Consort then migrates the parent's database branch");
    expect(s.world.mock.violations).toEqual([]);
  }, 600_000);
});
