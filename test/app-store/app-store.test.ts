import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { APP_DATABASE, ensureAppDatabase, openAppStore } from "../../src/app-store/app-store.js";
import { freshDatabase, postgresUrl, sql } from "../helpers/postgres.js";

/** The app's own database on the real embedded server: made once, shut to other logins, tables made by every replica alike. */

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

describe("the app's database", () => {
  it("on the embedded server is shut to every login but the admin's, as the branches' logins live there too", async () => {
    await ensureAppDatabase(postgresUrl());
    await ensureAppDatabase(postgresUrl());
    const login = `app_probe_${randomBytes(3).toString("hex")}`;
    await sql(postgresUrl(), `CREATE ROLE ${login} LOGIN PASSWORD 'probe-password'`);
    try {
      const url = new URL(postgresUrl(APP_DATABASE));
      url.username = login;
      url.password = "probe-password";
      await expect(sql(url.href, "SELECT 1")).rejects.toThrow(`permission denied for database "${APP_DATABASE}"`);
    } finally {
      await sql(postgresUrl(), `DROP ROLE ${login}`);
    }
  });

  it("gets its tables from replicas that open it at once", async () => {
    const db = await freshDatabase("appstore");
    drops.push(db.drop);
    const stores = await Promise.all([openAppStore(db.url), openAppStore(db.url), openAppStore(db.url)]);
    try {
      expect(await sql(db.url, "SELECT to_regclass('public.consort_seen_sequences') IS NOT NULL AS made")).toEqual([
        { made: true },
      ]);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it("says what to set when it cannot be opened", async () => {
    await expect(openAppStore(postgresUrl(`missing_${randomBytes(3).toString("hex")}`))).rejects.toThrow(
      "set DATABASE_URL to a Postgres database the app may create tables in",
    );
  });
});
