import { randomBytes } from "node:crypto";
import { Octokit } from "@octokit/rest";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { reconcileRepository } from "../../src/engine/reconcile.js";
import { NEVER_MERGES } from "../../src/config/branch-kind.js";
import { sanitiseBranchName } from "../../src/substrate/index.js";
import { checkTable, summaryOf } from "./support/checks.js";
import { Scenario } from "./support/scenario.js";

/**
 * Experiments (issue #37): a branch under `experiment/` gets its own database branch and no lane.
 * A person migrates it by hand (`consort db url <branch>` and their migrate command) and pushes:
 * consort/schema shows the diff against its parent, the other six checks fail saying it never
 * merges, so its pull request cannot merge. Idle past `experiments.ttlDays` (the clock moved),
 * `consort reconcile` drops its database branch and says so on its PR. An experiment started
 * from a track's branch forks the track's database branch and sees the track's schema. Past
 * `experiments.max`, the next experiment gets no database branch and its checks say why.
 */

const hex = () => randomBytes(3).toString("hex");
const track = new Scenario({ branch: `stock-spiked-${hex()}`, config: { experiments: { ttlDays: 7, max: 2 } } });
const spike = new Scenario({ beside: track, branch: `experiment/try-probe-${hex()}` });
const onTrack = new Scenario({ beside: track, branch: `experiment/on-track-${hex()}` });
const third = new Scenario({ beside: track, branch: `experiment/one-too-many-${hex()}` });
const DAY = 86_400_000;

afterAll(async () => {
  for (const s of [third, onTrack, spike]) await s.dispose();
  await track.dispose();
});

/** A database branch of the scenario's server: whether it exists, and its parent. */
async function databaseBranch(branch: string): Promise<{ name: string; parent: string | undefined } | undefined> {
  const provider = await track.openProvider();
  try {
    const info = await provider.getBranch(sanitiseBranchName(branch));
    return info && { name: info.name, parent: info.parent };
  } finally {
    await provider.close();
  }
}

/** What a person runs on a database branch (as with `psql "$(consort db url <branch>)"`). */
async function sql(databaseBranch: string, text: string): Promise<pg.QueryResult> {
  const provider = await track.openProvider();
  const client = new pg.Client({ connectionString: await provider.connectionUrl(databaseBranch) });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
    await provider.close();
  }
}

/** `consort reconcile` as the scheduled job runs it, with the app's clock. */
async function reconcile() {
  return reconcileRepository({
    octokit: new Octokit({ auth: "ghs_test", request: { retries: 0 } }) as never,
    owner: track.world.owner,
    repo: track.world.name,
    services: track.services,
    log: { info() {}, warn() {}, error() {}, debug() {} } as never,
  });
}

describe("an experiment", () => {
  test("is forked, migrated and shown, cannot merge, is bounded in number, expires after its TTL and comes back; one started from a track sees the track's schema", async () => {
    let root: string;

    // creating it forks its own database branch from the default branch's; no track starts
    {
      const provider = await track.openProvider();
      root = await provider.rootBranch();
      await provider.close();
      await spike.createBranch();
      expect(await databaseBranch(spike.branch)).toEqual({ name: sanitiseBranchName(spike.branch), parent: root });
      expect(track.world.stateFileText(spike.trackId)).toBeUndefined();
      // Created at main's head, a commit of main's: no experiment check is written on it.
      expect(checkTable(track.world, spike.head())).toEqual(
        Object.fromEntries(CHECK_NAMES.map((name) => [name, "missing"])),
      );
    }

    // migrated by hand and pushed, consort/schema shows its diff against the parent; the other six fail: it never merges
    {
      await sql(sanitiseBranchName(spike.branch), "CREATE TABLE spike_probe (id integer PRIMARY KEY, note text)");
      await spike.step(
        "driver",
        { "migrations/9001_spike_probe.sql": "CREATE TABLE spike_probe (id integer PRIMARY KEY, note text);\n" },
        { trailer: false },
      );
      const head = spike.head();
      const schema = track.world.check(head, "consort/schema");
      expect(schema.conclusion, summaryOf(schema)).toBe("success");
      expect(summaryOf(schema)).toContain("spike_probe");
      expect(summaryOf(schema)).toContain(`forked from \`${root}\``);
      for (const name of CHECK_NAMES.filter((n) => n !== "consort/schema")) {
        const run = track.world.check(head, name);
        expect(run.conclusion, name).toBe("failure");
        expect(run.output.title).toBe("An experiment never merges: carry what it taught you into a track");
        expect(summaryOf(run)).toContain(NEVER_MERGES);
      }
    }

    // its pull request cannot merge: consort/discipline fails on its head, and nothing is neutral or skipped
    {
      const pull = await spike.openPull();
      expect(pull.head).toBe(spike.branch);
      const table = checkTable(track.world, spike.head());
      expect(table["consort/discipline"]).toBe("failure");
      for (const conclusion of Object.values(table))
        expect(["neutral", "skipped", "missing"]).not.toContain(conclusion);
    }

    // started from a track's branch, it forks the track's database branch and sees the track's schema
    {
      await track.openTrack();
      const trackDatabase = track.snapshot().context.databaseBranch;
      // What the track's cycles would have migrated onto its database branch.
      await sql(trackDatabase, "CREATE TABLE track_probe (id integer PRIMARY KEY)");
      // As the release job does after migrating it: children fork from the branch as it now stands.
      const provider = await track.openProvider();
      await provider.refreshBase!(trackDatabase);
      await provider.close();
      onTrack.repo.setBranch(onTrack.branch, track.head());
      await onTrack.createBranchEvent();
      expect(await databaseBranch(onTrack.branch)).toEqual({
        name: sanitiseBranchName(onTrack.branch),
        parent: trackDatabase,
      });
      const { rows } = await sql(sanitiseBranchName(onTrack.branch), "SELECT to_regclass('track_probe') AS t");
      expect(rows[0]!.t).toBe("track_probe");
      // The track's own checks on its head were left as they were.
      expect(summaryOf(track.world.check(track.head(), "consort/discipline"))).not.toContain(NEVER_MERGES);
      await onTrack.step("driver", { "notes/spike.md": "what the spike showed\n" }, { trailer: false });
      const schema = track.world.check(onTrack.head(), "consort/schema");
      expect(schema.conclusion, summaryOf(schema)).toBe("success");
      expect(summaryOf(schema)).toContain(`forked from \`${trackDatabase}\``);
    }

    // past experiments.max the next gets no database branch, and every check on its head says so and which to delete
    {
      await third.createBranch();
      await third.step("driver", { "notes/third.md": "one too many\n" }, { trailer: false });
      expect(await databaseBranch(third.branch)).toBeUndefined();
      const discipline = track.world.check(third.head(), "consort/discipline");
      expect(discipline.conclusion).toBe("failure");
      expect(discipline.output.title).toBe("Refused: this repository already has 2 experiments (experiments.max)");
      expect(summaryOf(discipline)).toContain(`\`${spike.branch}\``);
      expect(summaryOf(discipline)).toContain(`\`${onTrack.branch}\``);
      expect(Object.values(checkTable(track.world, third.head()))).toEqual(CHECK_NAMES.map(() => "failure"));
    }

    // idle past experiments.ttlDays, reconcile drops its database branch and says on its PR how to get it back
    {
      track.now = new Date(track.now.getTime() + 6 * DAY);
      expect((await reconcile()).expiredExperiments).toEqual([]);
      expect(await databaseBranch(spike.branch)).toBeDefined();

      track.now = new Date(track.now.getTime() + 2 * DAY);
      const reconciled = await reconcile();
      expect(reconciled.expiredExperiments.sort()).toEqual([onTrack.branch, spike.branch].sort());
      expect(await databaseBranch(spike.branch)).toBeUndefined();
      expect(await databaseBranch(onTrack.branch)).toBeUndefined();
      const [comment] = track.world.appComments(spike.pull!.number);
      expect(comment!.body).toContain(`**Experiment \`${spike.branch}\` expired**`);
      expect(comment!.body).toContain(`push a commit to \`${spike.branch}\``);
      // A second run finds nothing more to drop and says nothing more.
      expect((await reconcile()).expiredExperiments).toEqual([]);
      expect(track.world.appComments(spike.pull!.number)).toHaveLength(1);
    }

    // a push brings an expired experiment's database branch back, from its parent
    {
      await spike.step("driver", { "notes/back.md": "again\n" }, { trailer: false });
      expect(await databaseBranch(spike.branch)).toEqual({ name: sanitiseBranchName(spike.branch), parent: root });
      expect(track.world.check(spike.head(), "consort/schema").conclusion).toBe("success");
    }

    // deleting it drops its database branch
    {
      spike.repo.deleteBranch(spike.branch);
      await spike.deliver("delete", {
        ...spike.payloadBase,
        ref: spike.branch,
        ref_type: "branch",
        pusher_type: "user",
      });
      expect(await databaseBranch(spike.branch)).toBeUndefined();
    }
  }, 300_000);
});
