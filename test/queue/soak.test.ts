import { afterAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../helpers/postgres.js";
import { runSoak } from "./support/soak.js";

/**
 * The soak's short version (the whole one is `npm run bench:soak`): two app processes sharing
 * one queue, signed deliveries over HTTP through the GitHub doubles, some twice and some out of
 * order, two processes killed mid-work. Nothing is lost, nothing is done twice, and each track's
 * state replays its deliveries in the order the queue stored them. No timing is asserted.
 */

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

describe("deliveries across app processes that are killed", () => {
  it("are each applied once, in arrival order per repository, with no delivery lost", async () => {
    const db = await freshDatabase("soak");
    drops.push(db.drop);
    const result = await runSoak({
      databaseUrl: db.url,
      deliveries: 24,
      repositories: 2,
      tracks: 4,
      kills: 2,
      workers: 2,
      deadlineMs: 200_000,
    });
    expect(result.violations).toEqual([]);
    expect(result.kills).toBe(2);
    expect({ lost: result.lost, doubled: result.doubled, misordered: result.misordered }).toEqual({
      lost: 0,
      doubled: 0,
      misordered: 0,
    });
    expect(result.deadLetters).toBe(0);
  }, 300_000);
});
