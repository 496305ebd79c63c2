import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** Superuser URL of the run's shared embedded Postgres 18 server (see test/setup/postgres.ts). */
export function postgresUrl(database = "postgres"): string {
  const url = new URL(inject("postgresUrl"));
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * A fresh, empty database on the shared server for one test file or test, dropped by the returned
 * function. Tests never share a database, so they can run in parallel.
 */
export async function freshDatabase(prefix = "t"): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: postgresUrl(name),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
