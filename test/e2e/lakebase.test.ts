import { afterEach, expect, test } from "vitest";
import { API, P, lakebaseScenario } from "./support/lakebase.js";
import type { Scenario } from "./support/scenario.js";

/**
 * A repository on Lakebase: the app forks the track's database branch through the Databricks
 * Postgres REST API when the branch is created. The API is mocked at HTTP exactly as
 * shared/reference/lakebase-api.md describes it (paths under /api/2.0/postgres/, the Branch as the
 * create body, operations polled by name, error bodies `{error_code, message, details}`); waits
 * run on a fake clock.
 */

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

test("Lakebase answering 429 then succeeding: the track's branch is forked after the wait it asked for", async () => {
  const { s, api, trackBranch, sleeps } = lakebaseScenario();
  scenario = s;
  const created = {
    name: `${P}/branches/${trackBranch}`,
    uid: "br-track",
    parent: P,
    create_time: "2026-03-01T12:00:00Z",
    spec: { source_branch: `${P}/branches/production`, no_expiry: true },
    status: { current_state: "READY", source_branch: `${P}/branches/production` },
  };
  api
    .post(`${API}/${P}/branches`, { spec: { source_branch: `${P}/branches/production`, no_expiry: true } })
    .query({ branch_id: trackBranch })
    .reply(429, { error_code: "REQUEST_LIMIT_EXCEEDED", message: "rate limited", details: [] }, { "Retry-After": "7" });
  api
    .post(`${API}/${P}/branches`, { spec: { source_branch: `${P}/branches/production`, no_expiry: true } })
    .query({ branch_id: trackBranch })
    .reply(200, { name: `${P}/branches/${trackBranch}/operations/op-1`, done: true, response: created });
  // The operation answered a READY branch, so its endpoint is created at once; the operation's answer has the host.
  api
    .post(`${API}/${P}/branches/${trackBranch}/endpoints`)
    .query({ endpoint_id: "primary" })
    .reply(200, {
      name: `${P}/branches/${trackBranch}/endpoints/primary/operations/op-2`,
      done: true,
      response: {
        name: `${P}/branches/${trackBranch}/endpoints/primary`,
        status: { current_state: "ACTIVE", hosts: { host: "ep-track.database.cloud.databricks.com" } },
      },
    });

  await s.createBranch();

  expect(api.isDone(), api.pendingMocks().join(", ")).toBe(true);
  expect(sleeps).toContain(7000);
  expect(s.snapshot().context.databaseBranch).toBe(trackBranch);
  expect(s.snapshot().context.parentDatabaseBranch).toBe("production");
  expect(s.world.check(s.head(), "consort/discipline").conclusion).toBe("success");
  expect(s.world.mock.violations).toEqual([]);
});
