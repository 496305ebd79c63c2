import { createHash, createHmac } from "node:crypto";
import type pg from "pg";
import { adminSessionIn } from "./admin-session.js";
import { ident, literal } from "./sql.js";

/**
 * A least-privilege login per database branch (postgres and local providers): the URL a cycle's
 * commands get names a role that owns that one database and everything in it, and can connect
 * to no other database of the root (CONNECT is revoked from PUBLIC on each of them). Its
 * password is derived from the provider's admin URL, so it is unguessable without that secret,
 * and every process computes the same one without storing it.
 */

/** The role of a branch: cluster-wide, so named after the root and the branch together. */
export function branchRoleName(root: string, branch: string): string {
  return `consort_login_${createHash("sha256").update(`${root}/${branch}`).digest("hex").slice(0, 24)}`;
}

export function branchRolePassword(adminUrl: string, role: string): string {
  return createHmac("sha256", adminUrl).update(role).digest("base64url");
}

/**
 * Make (or refresh) the branch's role, hand it the database, and shut every database of the root
 * to PUBLIC: a role then reaches only the database it owns.
 */
export async function grantBranchRole(
  client: pg.ClientBase,
  options: { role: string; password: string; database: string; rootDatabases: string[] },
): Promise<void> {
  // Grants on one server are made one at a time: two sessions changing the same database's ACL at
  // once fail with "tuple concurrently updated" (two forks from one root shut it to PUBLIC alike).
  await client.query("SELECT pg_advisory_lock($1)", [BRANCH_ROLE_LOCK]);
  try {
    await grantUnderLock(client, options);
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [BRANCH_ROLE_LOCK]).catch(() => {});
  }
}

/** The advisory lock key that serialises branch-role grants on a server ("consort-roles" as a number). */
const BRANCH_ROLE_LOCK = 0x636f6e73;

async function grantUnderLock(
  client: pg.ClientBase,
  options: { role: string; password: string; database: string; rootDatabases: string[] },
): Promise<void> {
  const { role, password, database } = options;
  const attributes = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT";
  const exists = await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]);
  const secret = client.escapeLiteral(password);
  if (exists.rowCount === 0) {
    try {
      await client.query(`CREATE ROLE ${ident(role)} ${attributes} PASSWORD ${secret}`);
    } catch (error) {
      // Made meanwhile by another process (duplicate_object): the ALTER below sets it the same.
      if ((error as { code?: string }).code !== "42710") throw error;
    }
  }
  await client.query(`ALTER ROLE ${ident(role)} ${attributes} PASSWORD ${secret}`);
  await client.query(`ALTER DATABASE ${ident(database)} OWNER TO ${ident(role)}`);
  for (const name of new Set([...options.rootDatabases, database]))
    await client.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${ident(name)} FROM PUBLIC`).catch((error: unknown) => {
      // A spare or a half-made copy renamed or dropped meanwhile (invalid_catalog_name): nothing to shut.
      if ((error as { code?: string }).code !== "3D000" || name === database) throw error;
    });
}

/**
 * Inside the branch's database (connected as the admin, see admin-session.ts), give the role every
 * object a parent's migrations or the seed made (a fork copies their owners): schemas, tables,
 * views, sequences that no table owns, routines and types, leaving the system's and extensions'
 * alone, and the functions event triggers run (whoever owned one could make every superuser's DDL
 * run its code). Every name is qualified; operators resolve through the session's search_path,
 * which is pg_catalog alone.
 */
const OWN_EVERYTHING = (role: string) => `
DO $consort$
DECLARE
  target text := ${literal(role)};
  item record;
BEGIN
  FOR item IN
    SELECT n.nspname FROM pg_catalog.pg_namespace n
    WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
      AND n.nspowner <> 'pg_database_owner'::pg_catalog.regrole
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.objid = n.oid AND d.deptype = 'e')
  LOOP
    EXECUTE pg_catalog.format('ALTER SCHEMA %I OWNER TO %I', item.nspname, target);
  END LOOP;
  FOR item IN
    SELECT c.oid::pg_catalog.regclass AS rel, c.relkind
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
      AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      AND NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_depend d
        WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i', 'e'))
  LOOP
    EXECUTE pg_catalog.format('ALTER %s %s OWNER TO %I',
      CASE item.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
        WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
      item.rel, target);
  END LOOP;
  FOR item IN
    SELECT p.oid::pg_catalog.regprocedure AS routine
    FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger e WHERE e.evtfoid = p.oid)
  LOOP
    EXECUTE pg_catalog.format('ALTER ROUTINE %s OWNER TO %I', item.routine, target);
  END LOOP;
  FOR item IN
    SELECT t.oid::pg_catalog.regtype AS type
    FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
      AND (t.typtype IN ('e', 'd', 'r', 'm')
        OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid) = 'c'))
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.objid = t.oid AND d.deptype IN ('e', 'i'))
  LOOP
    EXECUTE pg_catalog.format('ALTER TYPE %s OWNER TO %I', item.type, target);
  END LOOP;
END
$consort$`;

/**
 * Inside the branch's database, take from PUBLIC the catalogs, views and functions that name other
 * databases: pg_database and the database comments (which hold each branch's parent), the
 * statistics and activity views that join them, and the functions that describe any object by its
 * id. The privileges of a shared catalog are kept per database, so this closes them here only, for
 * every login but the admin's; forks copy it. Whether a name exists can still be probed by
 * guessing it (has_database_privilege answers false or "does not exist"); nothing lists them.
 */
const HIDE_OTHER_DATABASES = `
REVOKE SELECT ON pg_catalog.pg_database, pg_catalog.pg_shdescription, pg_catalog.pg_stat_database,
  pg_catalog.pg_stat_database_conflicts, pg_catalog.pg_stat_activity, pg_catalog.pg_replication_slots,
  pg_catalog.pg_prepared_xacts, pg_catalog.pg_stat_progress_vacuum, pg_catalog.pg_stat_progress_analyze,
  pg_catalog.pg_stat_progress_create_index, pg_catalog.pg_stat_progress_cluster,
  pg_catalog.pg_stat_progress_basebackup, pg_catalog.pg_stat_progress_copy FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.pg_describe_object(oid, oid, integer),
  pg_catalog.pg_identify_object(oid, oid, integer), pg_catalog.pg_identify_object_as_address(oid, oid, integer),
  pg_catalog.pg_database_size(oid), pg_catalog.pg_database_size(name) FROM PUBLIC`;

/**
 * Run OWN_EVERYTHING and HIDE_OTHER_DATABASES in `database`, in an admin session that runs nothing
 * the track defined.
 */
export async function ownEverything(adminUrl: string, database: string, role: string): Promise<void> {
  const client = await adminSessionIn(adminUrl, database);
  try {
    await client.query(OWN_EVERYTHING(role));
    await client.query(HIDE_OTHER_DATABASES);
  } finally {
    await client.end();
  }
}

/** The branch's URL: the admin URL's server, the branch's database, the branch's role alone. */
export function branchRoleUrl(adminUrl: string, database: string, role: string, password: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  url.username = encodeURIComponent(role);
  url.password = encodeURIComponent(password);
  return url.toString();
}
