import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { allChecks, checkTable, summaryOf } from "./support/checks.js";
import { EXAMPLE } from "./support/feature.js";
import type { GitIdentity } from "./support/git-repo.js";
import { LEAD, Scenario, type Checkpoint } from "./support/scenario.js";

/**
 * The maintenance lane (issue #37): a Dependabot-style branch bumping a dependency in package.json
 * and its lockfile starts no design lane; the release job runs the default branch's whole frozen
 * suite on the change, on a throwaway database; a person approves the promotion; all seven checks
 * pass and it merges. The same bump carrying a change to a frozen test is refused.
 */

const DEPENDABOT: GitIdentity = {
  name: "dependabot[bot]",
  email: "dependabot[bot]@users.noreply.github.com",
  login: "dependabot[bot]",
};
const example = JSON.parse(readFileSync(join(EXAMPLE, "package.json"), "utf8")) as Record<string, unknown>;
const manifest = (pg: string) => `${JSON.stringify({ ...example, dependencies: { pg } }, null, 2)}\n`;
const lockfile = (pg: string) =>
  `${JSON.stringify({ name: example.name, lockfileVersion: 3, packages: { "node_modules/pg": { version: pg } } }, null, 2)}\n`;
/** A test of the trunk's suite, frozen on the default branch by the track that wrote it. */
const TRUNK_TEST = "test/file-stock.test.ts";

const s = new Scenario({ branch: "dependabot/npm_and_yarn/pg-8.16.3" });
let opened: Checkpoint;

beforeAll(async () => {
  // The default branch has a suite of its own and a dependency to bump.
  s.repo.commitOn(
    "main",
    { name: "Lead", email: `${LEAD}@users.noreply.github.com`, login: LEAD },
    "The trunk's suite and its dependencies",
    {
      "package.json": manifest("8.16.0"),
      "package-lock.json": lockfile("8.16.0"),
      [TRUNK_TEST]: readFileSync(join(EXAMPLE, TRUNK_TEST), "utf8"),
      "test/helpers.ts": readFileSync(join(EXAMPLE, "test/helpers.ts"), "utf8"),
    },
  );
  await s.createBranch();
  await s.openPull();
  opened = s.checkpoint();
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

// The refusal runs first: the merge ends the track and drops its database branch, which a checkpoint does not restore.
test("the same bump changing a frozen test is refused, and nothing is verified", async () => {
  s.restore(opened);
  const before = s.head();
  const trunkTest = readFileSync(join(EXAMPLE, TRUNK_TEST), "utf8");
  const sha = s.commit(
    "driver",
    {
      "package.json": manifest("8.16.3"),
      "package-lock.json": lockfile("8.16.3"),
      [TRUNK_TEST]: trunkTest.replace('test("filing stock persists', 'test.skip("filing stock persists'),
    },
    { author: DEPENDABOT, trailer: false, subject: "Bump pg from 8.16.0 to 8.16.3" },
  );
  await s.push(before);
  expect(s.snapshot().stage).toBe("maintenance");
  expect(s.snapshot().context.rejectedHead?.sha).toBe(sha);
  expect(s.pendingRuns()).toEqual([]);
  // Refused, so never mergeable: the lane's checks fail or are never written (a missing required
  // check blocks the merge); consort/schema compares databases, which the refused commit did not touch.
  expect(checkTable(s.world, sha)).toEqual({
    "consort/design": "failure",
    "consort/test-list": "failure",
    "consort/build": "missing",
    "consort/deploy": "missing",
    "consort/promote": "missing",
    "consort/discipline": "failure",
    "consort/schema": "success",
  });
  expect(summaryOf(s.world.checksOn(sha).get("consort/discipline")!)).toContain(
    `${TRUNK_TEST}: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)`,
  );
}, 300_000);

test("a dependency bump merges through the maintenance lane with all seven checks success", async () => {
  s.restore(opened);
  expect(s.snapshot().stage).toBe("maintenance");
  expect(s.snapshot().context.lane).toBe("maintenance");
  const before = s.head();
  s.commit(
    "driver",
    { "package.json": manifest("8.16.3"), "package-lock.json": lockfile("8.16.3") },
    { author: DEPENDABOT, trailer: false, subject: "Bump pg from 8.16.0 to 8.16.3" },
  );
  await s.push(before);
  expect(s.snapshot().stage).toBe("deploying");
  expect(s.pendingRuns().map((r) => r.workflow)).toEqual(["consort-deploy.yml"]);

  const evidence = await s.runDispatchedDeploy();
  expect(evidence.verdict, evidence.reasons.join("\n")).toBe("verified");
  expect(evidence.mode).toBe("replay");
  // The trunk's suite ran, every test of it.
  expect(evidence.verify.cycle!.total).toBeGreaterThan(0);
  expect(evidence.verify.cycle!.passed).toBe(evidence.verify.cycle!.total);
  expect(s.snapshot().stage).toBe("promote-gate");
  expect(checkTable(s.world, s.head())).toMatchObject({
    "consort/build": "success",
    "consort/deploy": "success",
    "consort/promote": "in_progress",
  });

  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("merging");
  expect(checkTable(s.world, s.head())).toEqual(allChecks("success"));
  for (const name of CHECK_NAMES) expect(summaryOf(s.world.checksOn(s.head()).get(name)!)).not.toBe("");

  s.world.merge(s.pull!, LEAD);
  await s.deliver("pull_request", {
    ...s.payloadBase,
    action: "closed",
    number: s.pull!.number,
    pull_request: s.world.pullPayload(s.pull!),
  });
  expect(s.snapshot().stage).toBe("promoting");
  const promoted = await s.runDispatchedPromotion();
  expect(promoted.verdict, promoted.reasons.join("\n")).toBe("promoted");
  expect(s.snapshot().stage).toBe("done");
}, 600_000);
