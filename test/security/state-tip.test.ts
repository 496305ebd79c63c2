import { afterAll, beforeAll, expect, test } from "vitest";
import { allChecks, checkTable, summaryOf } from "../e2e/support/checks.js";
import * as F from "../e2e/support/feature.js";
import { Scenario, type Checkpoint } from "../e2e/support/scenario.js";

/**
 * A tip of consort/state the app did not write is refused (issue #14, item 4). The file under it
 * may be the app's own, validly sealed and current (the sequence check then has nothing to catch):
 * whoever got past the ruleset, an admin with bypass or a push that borrows the bot's name, wrote
 * the commit, so nothing on the branch can be vouched for until a maintainer re-seals.
 */

const s = new Scenario();
const ADMIN = "repo-admin";
const admin = { name: "Repo Admin", email: `${ADMIN}@users.noreply.github.com`, login: ADMIN };
s.world.permissions.set(ADMIN, "admin");
let start: Checkpoint;

beforeAll(async () => {
  await s.openTrack();
  start = s.checkpoint();
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

/** What every check says about a tip commit the app did not write. */
function refusal(commit: string, author: string, signature: string): string {
  return `- commit ${commit.slice(0, 7)} on consort/state was not written by this app (authored by ${author}, ${signature}; the app's own are authored by consort[bot] and signed by GitHub): someone pushed to consort/state past its ruleset\n`;
}

test("an admin's commit on consort/state beside the app's current, validly sealed file stops the track", async () => {
  s.restore(start);
  const file = s.world.stateFileText(s.trackId)!;
  // An admin with bypass edits the branch on github.com: GitHub signs it, as the admin's.
  const foreign = s.world.commitAsGitHub("consort/state", admin, "notes", { "NOTES.md": "who reads this?\n" });
  expect(s.world.stateFileText(s.trackId)).toBe(file);

  const sha = await s.step("spec-author", { ".consort/spec.json": F.SPEC });

  expect(s.world.stateHead()).toBe(foreign);
  expect(s.snapshot().stage).toBe("spec");
  expect(checkTable(s.world, sha)).toEqual(allChecks("failure"));
  const discipline = s.world.check(sha, "consort/discipline");
  expect(discipline.output.title).toBe("State file is tampered");
  expect(summaryOf(discipline)).toContain(`**What failed**\n\n${refusal(foreign, ADMIN, "signed by GitHub")}\n`);
  expect(s.world.mock.violations).toEqual([]);
});

test("a push that borrows the app's name and e-mail is not the app's: GitHub did not sign it", async () => {
  s.restore(start);
  const file = s.world.stateFileText(s.trackId)!;
  const bot = { name: "consort[bot]", email: "41898282+consort[bot]@users.noreply.github.com", login: "consort[bot]" };
  // The same, current file written again by a push, so the tip touches the track's file itself.
  const { sha: forged } = s.repo.commitOn("consort/state", bot, "consort: update", {
    [`tracks/${s.trackId}.json`]: `${file.trimEnd()}\n\n`,
  });

  const sha = await s.step("spec-author", { ".consort/spec.json": F.SPEC });

  expect(s.world.stateHead()).toBe(forged);
  expect(s.snapshot().stage).toBe("spec");
  expect(checkTable(s.world, sha)).toEqual(allChecks("failure"));
  expect(summaryOf(s.world.check(sha, "consort/build"))).toContain(
    `**What failed**\n\n${refusal(forged, "consort[bot]", "not signed by GitHub (unsigned)")}\n`,
  );
});

test("Re-seal moves consort/state back to the app's own last commit, and the track goes on", async () => {
  s.restore(start);
  const before = s.state();
  const own = s.world.stateHead()!;
  const foreign = s.world.commitAsGitHub("consort/state", admin, "notes", {
    "NOTES.md": "who reads this?\n",
    "tracks/another-track.json": "{}\n",
  });
  const refused = await s.step("spec-author", { ".consort/spec.json": F.SPEC });
  const discipline = s.world.check(refused, "consort/discipline");

  await s.pressCheckAction(discipline, "reseal", ADMIN);

  // The foreign commit is gone from the branch, with every file it added; the app's is on top.
  const head = s.world.stateHead()!;
  expect(s.repo.git("rev-parse", `${head}^`).trim()).toBe(own);
  expect(s.repo.isAncestor(foreign, head)).toBe(false);
  expect(s.repo.fileAt(head, "NOTES.md")).toBeUndefined();
  expect(s.repo.fileAt(head, "tracks/another-track.json")).toBeUndefined();
  const resealed = s.state();
  expect(resealed.snapshot).toEqual(before.snapshot);
  expect(resealed.sequence).toBe(before.sequence! + 1);
  expect(resealed.reseals.map((r) => r.actor)).toEqual([ADMIN]);
  // The step the foreign tip held up is taken on the next push.
  const sha = await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
  expect(s.world.check(sha, "consort/discipline").conclusion).toBe("success");
  expect(s.world.mock.violations).toEqual([]);
});
