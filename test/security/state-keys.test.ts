import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { keyIdOf } from "../../src/state/index.js";
import { allChecks, checkTable, summaryOf } from "../e2e/support/checks.js";
import * as F from "../e2e/support/feature.js";
import { Scenario, type Checkpoint } from "../e2e/support/scenario.js";

/**
 * Rotating the state key (issue #14, item 4): CONSORT_STATE_KEY seals, CONSORT_STATE_KEYS_PREVIOUS
 * still opens what the retired keys sealed, and the app's next write seals with the new key. A key
 * taken off that list opens nothing any more: whoever still holds it cannot put back a file it sealed.
 */

const s = new Scenario();
const OLD = s.services.stateKey;
const NEW = "rotated-state-key-0123456789abcdef0123456789";
let start: Checkpoint;

beforeAll(async () => {
  await s.openTrack();
  start = s.checkpoint();
}, 300_000);

afterEach(() => {
  s.services.stateKey = OLD;
  s.services.previousStateKeys = [];
});

afterAll(async () => {
  await s.dispose();
});

test("after a rotation the old key still opens the file it sealed, and the next write seals it with the new key", async () => {
  s.restore(start);
  expect(JSON.parse(s.world.stateFileText(s.trackId)!).keyId).toBe(keyIdOf(OLD));
  s.services.stateKey = NEW;
  s.services.previousStateKeys = [OLD];

  const sha = await s.step("spec-author", { ".consort/spec.json": F.SPEC });

  expect(s.world.check(sha, "consort/discipline").conclusion).toBe("success");
  expect(JSON.parse(s.world.stateFileText(s.trackId)!).keyId).toBe(keyIdOf(NEW));
  expect(s.snapshot().stage).toBe("architecture");
});

test("a file sealed with a retired key that was taken off the list is refused, naming its key id", async () => {
  s.restore(start);
  const stateHead = s.world.stateHead();
  s.services.stateKey = NEW;

  const sha = await s.step("spec-author", { ".consort/spec.json": F.SPEC });

  expect(s.world.stateHead()).toBe(stateHead);
  expect(checkTable(s.world, sha)).toEqual(allChecks("failure"));
  expect(summaryOf(s.world.check(sha, "consort/design"))).toContain(
    `**What failed**\n\n- sealed with state key ${keyIdOf(OLD)}, which is not this app's key ${keyIdOf(NEW)}: if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has\n\n`,
  );
});
