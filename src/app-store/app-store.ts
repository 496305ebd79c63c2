import pg from "pg";
import { ensureLocalServer, resolveLocalDataDir } from "../substrate/index.js";

/**
 * The app's own Postgres: what the app must remember across restarts and share between replicas
 * (today the newest state-file version it has seen per track, src/state/seen-sequences.ts). It is
 * the database `DATABASE_URL` names, else the `consort_app` database of the embedded server,
 * made on first use and shut to every other login of that server (the branches' logins live
 * there too). Tables are made here, in order, by `APP_TABLES`.
 */

export const APP_DATABASE = "consort_app";

/** Every table of the app's database, made when missing (each statement idempotent). */
const APP_TABLES = [
  // The newest sequence seen per state file, by the state store's key for it, per repository.
  `CREATE TABLE IF NOT EXISTS public.consort_seen_sequences (
     repository text NOT NULL,
     key text NOT NULL,
     sequence bigint NOT NULL,
     PRIMARY KEY (repository, key))`,
];

/** Serialises table creation between replicas starting at once ("consort-app" as a number). */
const APP_TABLES_LOCK = 0x636f6170;

export interface AppStore {
  readonly pool: pg.Pool;
  /** The database's URL, for what opens connections of its own (the delivery queue). */
  readonly url: string;
  close(): Promise<void>;
}

/** Open the app's database at `url` and make its tables. */
export async function openAppStore(url: string): Promise<AppStore> {
  // Only the app connects here; the search_path is still pinned, as in every session Consort opens.
  const pool = new pg.Pool({
    connectionString: url,
    options: "-c search_path=pg_catalog,pg_temp",
    max: 4,
    application_name: "consort-app",
  });
  pool.on("error", () => {});
  try {
    const client = await pool.connect();
    try {
      await client.query("SELECT pg_catalog.pg_advisory_lock($1)", [APP_TABLES_LOCK]);
      for (const statement of APP_TABLES) await client.query(statement);
    } finally {
      await client.query("SELECT pg_catalog.pg_advisory_unlock($1)", [APP_TABLES_LOCK]).catch(() => {});
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw new Error(
      `the app's database could not be opened (${(error as Error).message}): set DATABASE_URL to a Postgres database the app may create tables in, or leave it unset to use the embedded server`,
      { cause: error },
    );
  }
  return { pool, url, close: () => pool.end() };
}

/**
 * The URL of the app's database: `DATABASE_URL` when set; else the embedded server's
 * `consort_app` database, made (and shut to PUBLIC) when missing.
 */
async function appDatabaseUrl(env: { DATABASE_URL?: string; CONSORT_DATA_DIR?: string }): Promise<string> {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const server = await ensureLocalServer({ dataDir: resolveLocalDataDir(env.CONSORT_DATA_DIR) });
  await ensureAppDatabase(server.url());
  return server.url(APP_DATABASE);
}

/** Make the `consort_app` database on the server `adminUrl` reaches, shut to every login but the admin's. */
export async function ensureAppDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, options: "-c search_path=pg_catalog,pg_temp" });
  client.on("error", () => {});
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1", [APP_DATABASE]);
    if (exists.rowCount === 0)
      await client.query(`CREATE DATABASE ${APP_DATABASE}`).catch((error: { code?: string }) => {
        // Made meanwhile by another process (duplicate_database).
        if (error.code !== "42P04") throw error;
      });
    await client.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${APP_DATABASE} FROM PUBLIC`);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The app's store, opened on first use and shared by the process; a failed open is tried again
 * on the next use (every delivery that needs it fails closed meanwhile, saying why).
 */
export function appStoreOnce(env: {
  DATABASE_URL?: string;
  CONSORT_DATA_DIR?: string;
  CONSORT_EMBEDDED_POSTGRES?: string;
}): () => Promise<AppStore> {
  let opening: Promise<AppStore> | undefined;
  return () => {
    opening ??= (async () => {
      if (!env.DATABASE_URL && env.CONSORT_EMBEDDED_POSTGRES === "off")
        throw new Error(
          "the app has no database to remember consort/state's versions in: CONSORT_EMBEDDED_POSTGRES is off and DATABASE_URL is not set; set DATABASE_URL to a Postgres database for the app",
        );
      return openAppStore(await appDatabaseUrl(env));
    })().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };
}
