import pg from "pg";
import { describe, expect, it } from "vitest";
import { freshDatabase, postgresUrl } from "../helpers/postgres.js";

describe("the shared embedded Postgres", () => {
  it("is a real Postgres 18 server tuned for throwaway data", async () => {
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    try {
      const version = await client.query<{ server_version_num: string }>("SHOW server_version_num");
      expect(Number(version.rows[0]!.server_version_num)).toBeGreaterThanOrEqual(180000);
      const fsync = await client.query<{ fsync: string }>("SHOW fsync");
      expect(fsync.rows[0]!.fsync).toBe("off");
      const clone = await client.query<{ file_copy_method: string }>("SHOW file_copy_method");
      expect(clone.rows[0]!.file_copy_method).toBe("clone");
    } finally {
      await client.end();
    }
  });

  it("gives each test its own database that enforces real constraints", async () => {
    const db = await freshDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("CREATE TABLE stock (sku text PRIMARY KEY, quantity integer NOT NULL CHECK (quantity >= 0))");
      await client.query("INSERT INTO stock VALUES ('A-1', 3)");
      await expect(client.query("INSERT INTO stock VALUES ('A-2', -1)")).rejects.toThrow(/check constraint/);
      const count = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM stock");
      expect(count.rows[0]!.n).toBe(1);
    } finally {
      await client.end();
      await db.drop();
    }
  });
});
