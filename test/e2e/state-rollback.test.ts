import { afterAll, beforeAll, expect, test } from "vitest";
import { summaryOf } from "./support/checks.js";
import * as F from "./support/feature.js";
import { OUTSIDER, OUTSIDER_PUSHER, Scenario } from "./support/scenario.js";

/**
 * State that cannot be rolled back (issue #14): an older state file, validly signed by the app
 * itself, put back on consort/state is refused; the Re-seal button restores the newest version
 * the app sealed, through the app's own write (which the consort/state ruleset allows).
 */

const s = new Scenario();
const ADMIN = "repo-admin";
s.world.permissions.set(ADMIN, "admin");
let older: string;

beforeAll(async () => {
  await s.openTrack();
  older = s.world.stateFileText(s.trackId)!;
  await s.step("spec-author", { ".consort/spec.json": F.SPEC });
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

test("a validly signed older state file put back on consort/state is refused, and Re-seal restores the newest", async () => {
  const newest = s.state();
  expect(newest.sequence).toBeGreaterThan(JSON.parse(older).sequence);
  // Someone who got past the ruleset puts the app's own older file back.
  s.repo.commitOn("consort/state", OUTSIDER_PUSHER, "roll back", { [`tracks/${s.trackId}.json`]: older });
  const rolledBack = s.world.stateHead();

  const sha = await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });

  expect(s.world.stateHead()).toBe(rolledBack);
  const discipline = s.world.check(sha, "consort/discipline");
  expect([discipline.conclusion, discipline.output.title]).toEqual(["failure", "State file is tampered"]);
  expect(summaryOf(discipline)).toContain(
    `**What failed**\n\n- commit ${rolledBack!.slice(0, 7)} on consort/state was not written by this app (authored by ${OUTSIDER}, not signed by GitHub (unsigned); the app's own are authored by consort[bot] and signed by GitHub): someone pushed to consort/state past its ruleset\n- version ${JSON.parse(older).sequence} is older than version ${newest.sequence}, which this app already wrote or read: consort/state was rolled back\n\n`,
  );

  await s.pressCheckAction(discipline, "reseal", ADMIN);

  const restored = s.state();
  expect(s.world.stateHead()).not.toBe(rolledBack);
  expect(restored.snapshot).toEqual(newest.snapshot);
  expect(restored.sequence).toBe(newest.sequence! + 1);
  expect(restored.reseals.map((r) => r.actor)).toEqual([ADMIN]);
  expect(s.world.mock.violations).toEqual([]);
});
