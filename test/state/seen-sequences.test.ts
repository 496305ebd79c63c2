import { afterAll, describe, expect, it } from "vitest";
import { openAppStore } from "../../src/app-store/app-store.js";
import { seenSequencesIn } from "../../src/state/seen-sequences.js";
import { freshDatabase } from "../helpers/postgres.js";

/** The newest state versions seen, in the app's database on the real embedded server, shared by its processes. */

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

describe("the state versions the app remembers", () => {
  it("only grow, per repository, whichever process remembered them", async () => {
    const db = await freshDatabase("appseen");
    drops.push(db.drop);
    const [one, two] = await Promise.all([openAppStore(db.url), openAppStore(db.url)]);
    try {
      const first = seenSequencesIn(async () => one);
      const second = seenSequencesIn(async () => two);
      await first.remember("Acme/Shop", new Map([["acme/shop/t1", 5]]));
      await second.remember(
        "acme/shop",
        new Map([
          ["acme/shop/t1", 3],
          ["acme/shop/t2", 1],
        ]),
      );
      await second.remember("acme/other", new Map([["acme/other/t1", 9]]));

      expect(await first.recall("ACME/shop")).toEqual(
        new Map([
          ["acme/shop/t1", 5],
          ["acme/shop/t2", 1],
        ]),
      );
    } finally {
      await one.close();
      await two.close();
    }
  });
});
