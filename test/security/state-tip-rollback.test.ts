import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { servicesFromEnv } from "../../src/index.js";
import { desiredRulesets, STATE_BRANCH_RULESET, unprotectedStateBranch } from "../../src/protect/index.js";
import { allChecks, checkTable, summaryOf } from "../e2e/support/checks.js";
import * as F from "../e2e/support/feature.js";
import { Scenario, type Checkpoint } from "../e2e/support/scenario.js";
import { freshDatabase } from "../helpers/postgres.js";

/**
 * consort/state cannot be rolled back (issue #30): moved back to an older commit the app itself
 * wrote (validly sealed, authored and signed as the app's), it is refused by an app process that
 * never saw the newer version, because the newest version seen is kept in the app's own
 * database; and the app acts on no repository whose consort/state has lost its ruleset, the rule
 * that keeps anyone else from moving it.
 */

let appDatabase: Awaited<ReturnType<typeof freshDatabase>>;

/** A new app process, wired as `npm start` wires it, on the app's database (DATABASE_URL). */
async function startApp(): Promise<void> {
  const fresh = withEnv({ DATABASE_URL: appDatabase.url }, servicesFromEnv);
  s.services.stateSequences?.clear();
  s.services.seenSequences = fresh.seenSequences;
  s.services.protectedStateBranch = fresh.protectedStateBranch;
}

function withEnv<T>(env: Record<string, string>, make: () => T): T {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return make();
  } finally {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
}

/** The ruleset `consort protect` puts on consort/state, as GitHub keeps it. */
function protect(): void {
  const body = desiredRulesets({ appId: s.world.appId, approvals: 1 }).find((r) => r.name === STATE_BRANCH_RULESET)!;
  s.world.rulesets.push({ ...body, id: 7001, source: s.world.fullName, source_type: "Repository" });
}

const s = new Scenario();
let start: Checkpoint;

beforeAll(async () => {
  appDatabase = await freshDatabase("consort_app");
  protect();
  await startApp();
  await s.openTrack();
  start = s.checkpoint();
}, 300_000);

afterAll(async () => {
  await s.dispose();
  await appDatabase?.drop();
});

describe("consort/state", { timeout: 300_000 }, () => {
  test("without its ruleset, the app refuses to act on the repository and says how to restore it", async () => {
    s.restore(start);
    await startApp();
    const before = s.snapshot().stage;
    // A repository admin deletes the ruleset (Settings → Rules → Rulesets).
    s.world.rulesets.length = 0;

    const head = s.head();
    const sha = s.commit("spec-author", { ".consort/spec.json": F.SPEC });

    // The delivery fails (GitHub lists it as failed, to redeliver once the ruleset is back).
    const reason = unprotectedStateBranch(s.world.fullName, ["creation", "update", "non_fast_forward", "deletion"]);
    await expect(s.push(head)).rejects.toThrow(reason);
    expect(s.snapshot().stage).toBe(before);
    expect(checkTable(s.world, sha)).toEqual(allChecks("failure"));
    const discipline = s.world.check(sha, "consort/discipline");
    expect(discipline.output.title).toBe("Consort could not process this event");
    expect(summaryOf(discipline)).toContain(reason);
    expect(s.world.mock.violations).toEqual([]);
  });
  test("moved back to an older commit the app wrote, it is refused by an app process started after the newer one", async () => {
    s.restore(start);
    await startApp();
    const older = s.world.stateHead()!;
    const olderVersion = s.state().sequence!;
    await s.step("spec-author", { ".consort/spec.json": F.SPEC });
    const newest = s.state().sequence!;
    expect(newest).toBeGreaterThan(olderVersion);

    // The app restarts (or another replica takes the next delivery); someone with force-push
    // rights moves the branch back to the app's own older commit.
    await startApp();
    s.repo.setBranch("consort/state", older, s.world.stateHead());

    const sha = await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });

    expect(s.world.stateHead()).toBe(older);
    expect(checkTable(s.world, sha)).toEqual(allChecks("failure"));
    const discipline = s.world.check(sha, "consort/discipline");
    expect(discipline.output.title).toBe("State file is tampered");
    expect(summaryOf(discipline)).toContain(
      `**What failed**\n\n- version ${olderVersion} is older than version ${newest}, which this app already wrote or read: consort/state was rolled back\n`,
    );
    expect(s.world.mock.violations).toEqual([]);
  });
});
