import { afterEach, expect, test } from "vitest";
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
  const { s, api } = lakebaseScenario();
  scenario = s;
  api
    .post(`${API}/${P}/branches`)
    .query(true)
    .times(20)
    .reply(503, { error_code: "TEMPORARILY_UNAVAILABLE", message: "service unavailable", details: [] });

  await s.createBranch().catch(() => undefined);

  const checks = s.world.checksOn(s.head());
  const failing = [...checks.values()].filter((c) => c.conclusion === "failure");
  expect(
    failing.map((c) => c.name),
    `checks: ${[...checks.values()].map((c) => `${c.name}=${c.conclusion ?? c.status}`).join(", ")}`,
  ).not.toEqual([]);
  const text = failing.map((c) => `${c.output.summary}\n${c.output.text ?? ""}`).join("\n");
  expect(text).toMatch(/lakebase|database branch|503|unavailable/i);
  expect(failing.flatMap((c) => c.actions.map((a) => a.label)).join(" ")).toMatch(/re-?try|re-?run/i);
});
