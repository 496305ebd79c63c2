import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type pg from "pg";
import { createApp } from "../src/app.js";
import { createPool } from "../src/db/pool.js";

/** The app on a free port over the database in DATABASE_URL, and the pool behind it. */
export async function startApp(): Promise<{ baseUrl: string; db: pg.Pool; stop: () => Promise<void> }> {
  const db = createPool();
  const server = createApp(db);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    db,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.end();
    },
  };
}

/** A SKU (or location) no other test uses, so tests never see each other's rows. */
export const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString("hex")}`;

export async function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}
