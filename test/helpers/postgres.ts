import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** Superuser URL of the run's shared embedded Postgres 18 server (see test/setup/postgres.ts). */
export function postgresUrl(database = "postgres"): string {
  const url = new URL(inject("postgresUrl"));
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs `text` on a connection of its own to `url`, closed either way; the rows of its (last) result. */
export async function sql(url: string, text: string): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(text);
    return (Array.isArray(result) ? (result as pg.QueryResult[]).at(-1)! : result).rows;
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty database on the shared server for one test file or test, dropped by the returned
 * function. Tests never share a database, so they can run in parallel.
 */
export async function freshDatabase(prefix = "t"): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await sql(postgresUrl(), `CREATE DATABASE "${name}"`);
  return {
    name,
    url: postgresUrl(name),
    drop: async () => void (await sql(postgresUrl(), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}
