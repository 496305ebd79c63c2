import { afterEach, expect, test } from "vitest";
import { checkTable, summaryOf } from "./support/checks.js";
import type { Scenario } from "./support/scenario.js";
import { API, P, lakebaseScenario } from "./support/lakebase.js";

/**
 * Lakebase down while a track's branch is created: the track's check fails saying what failed and
 * what to do, with a button to try again; the state never claims a branch that does not exist.
 */

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

test("Lakebase down: creating the track's branch fails the track's check, with a button to try again", async () => {
  const { s, api, trackBranch } = lakebaseScenario();
  scenario = s;
  const down = { error_code: "TEMPORARILY_UNAVAILABLE", message: "service unavailable", details: [] };
  api.post(`${API}/${P}/branches`).query(true).times(20).reply(503, down);
  // Down for reads too: the schema check that follows cannot look at the branch either.
  api.get(`${API}/${P}/branches/${trackBranch}`).times(20).reply(503, down);
  const unavailable =
    "(HTTP 503, TEMPORARILY_UNAVAILABLE): service unavailable\n  → Lakebase is temporarily unavailable: run the command again in a few minutes";
  const notCreated = `Database branch \`${trackBranch}\` was not created from \`production\`: Lakebase creating branch ${trackBranch} failed ${unavailable}. It does not exist yet. Once the database provider is reachable, someone with write access presses Retry on consort/discipline.`;

  // The delivery fails, naming the effect, so GitHub shows it failed and it can be redelivered.
  await expect(s.createBranch()).rejects.toThrow(
    `Consort could not finish every effect for track ${s.trackId}:\nforkDatabase: Lakebase creating branch ${trackBranch} failed ${unavailable}`,
  );

  const head = s.head();
  expect(checkTable(s.world, head)).toEqual({
    "consort/design": "missing",
    "consort/test-list": "missing",
    "consort/build": "missing",
    "consort/deploy": "missing",
    "consort/promote": "missing",
    "consort/discipline": "failure",
    "consort/schema": "failure",
  });
  const discipline = s.world.check(head, "consort/discipline");
  expect(discipline.output.title).toBe("Database branch step failed");
  expect(summaryOf(discipline)).toBe(
    `Track \`${s.trackId}\` on \`${s.branch}\` at ${head.slice(0, 7)}.\n\n- ${notCreated}`,
  );
  expect(discipline.actions).toEqual([
    { label: "Retry", description: "Redo the failed database branch step", identifier: "retry-database" },
  ]);
  const schema = s.world.check(head, "consort/schema");
  expect(schema.output.title).toBe("Schema check failed");
  expect(summaryOf(schema).split("\n\n").slice(1)).toEqual([
    `The schema diff of \`${trackBranch}\` against \`production\` could not be computed: Lakebase reading branch ${trackBranch} failed ${unavailable}. Consort fails closed; the check is computed again on the next update of the track.`,
    "Database facts: the app, the cycles, the release and the promotion all use the same `lakebase` branches (self-hosted runner).",
  ]);
  // The state records the failure, not a branch: the track waits for its first step with the problem on it.
  const snapshot = s.snapshot();
  expect(snapshot.stage).toBe("stories");
  expect(snapshot.context.lastProblem).toEqual([notCreated]);
});
