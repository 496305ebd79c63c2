import pg from "pg";
import { SubstrateError } from "./provider.js";

/**
 * How Consort connects as the server's admin. A branch's own role owns its database and everything
 * a track's migration defines there, so an admin session in that database must run nothing the
 * track wrote:
 *  - `search_path` is `pg_catalog, pg_temp`: an unqualified function, operator or type resolves in
 *    the system catalog only (a `public.format(text, name, text)` or a `public.<>(oid, regrole)`
 *    would otherwise be a better match than the catalog's and run as the admin), and pg_temp is
 *    never searched for functions or operators;
 *  - event triggers are off for the session (`event_triggers`, Postgres 17+), so neither the
 *    login trigger nor the DDL triggers of a database fire for the admin's connection and
 *    ownership changes.
 * Statements written for these sessions still qualify catalog names (pg_catalog.…).
 */

/**
 * What a session that reads a branch's catalog (the schema snapshot, its lint) runs first in its
 * transaction, as whichever login it has: unqualified names then resolve in the system catalog
 * alone, never to a better match the track's migration defined (an `array_agg(text)`, a
 * `!~~(name, name)`). A statement, not a startup option, which a URL's own `options` would replace.
 */
export const PIN_SEARCH_PATH = "SET LOCAL search_path = pg_catalog, pg_temp";

/** The startup options of every admin session: set before the first statement (and the login trigger) runs. */
const ADMIN_SEARCH_PATH = "-c search_path=pg_catalog,pg_temp";
const NO_EVENT_TRIGGERS = "-c event_triggers=off";

/** A client or pool configuration for an admin session on `url`'s database (the provider's own database). */
export function adminConfig(url: string): { connectionString: string; options: string } {
  return { connectionString: url, options: ADMIN_SEARCH_PATH };
}

/**
 * A connected admin session inside `database` (a branch, which a track's role owns), with event
 * triggers off. On Postgres 15 and 16, which cannot turn them off per session, it refuses a
 * database where an event trigger is enabled (only a superuser can have made one) and says how
 * to disable it.
 */
export async function adminSessionIn(adminUrl: string, database: string): Promise<pg.Client> {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  const connect = async (options: string) => {
    const client = new pg.Client({ connectionString: url.toString(), options, application_name: "consort-substrate" });
    client.on("error", () => {});
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
  };
  try {
    return await connect(`${ADMIN_SEARCH_PATH} ${NO_EVENT_TRIGGERS}`);
  } catch (error) {
    // 42704 "unrecognized configuration parameter": a server before Postgres 17.
    if ((error as { code?: string }).code !== "42704") throw error;
  }
  const client = await connect(ADMIN_SEARCH_PATH);
  const enabled = await client.query<{ evtname: string }>(
    "SELECT evtname FROM pg_catalog.pg_event_trigger WHERE evtenabled OPERATOR(pg_catalog.<>) 'D' ORDER BY 1",
  );
  if (enabled.rows.length === 0) return client;
  await client.end().catch(() => {});
  const names = enabled.rows.map((r) => r.evtname);
  throw new SubstrateError(
    `database "${database}" has enabled event triggers (${names.join(", ")}), which would run in Consort's admin session: this server (before Postgres 17) cannot turn them off per session`,
    `disable them in "${database}" (${names.map((n) => `ALTER EVENT TRIGGER "${n}" DISABLE`).join("; ")}) or use Postgres 17 or later`,
    "EVENT_TRIGGERS",
  );
}
