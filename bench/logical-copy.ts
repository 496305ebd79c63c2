import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";

/**
 * The fastest logical copy of a database, the baseline every fork is compared with: what
 * `pg_dump | pg_restore -j` does, in process. The embedded Postgres 18 ships no pg_dump (only
 * initdb, pg_ctl and postgres), and an older pg_dump refuses a newer server, so the dump is read
 * from the catalog: pre-data (tables with their columns, defaults, NOT NULL and CHECK constraints),
 * data (each table's COPY … TO STDOUT streamed into COPY … FROM STDIN, tables in parallel), then
 * post-data (primary keys, unique constraints, indexes and foreign keys, after the rows, as
 * pg_restore orders them). It copies plain tables in the public schema; anything else in the source
 * (sequences, views, functions, types, triggers, other schemas) stops the copy with an error rather
 * than leaving it out, so the baseline is never cheaper than a real dump.
 */

interface TableDump {
  name: string;
  create: string;
  /** Primary keys, unique constraints and indexes: built after the rows. */
  keys: string[];
  /** Built last, once every table's keys exist. */
  foreignKeys: string[];
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Refuse a source holding what this copy does not reproduce. */
async function refuseUnsupported(source: pg.Client): Promise<void> {
  const { rows } = await source.query<{ what: string }>(`
    SELECT format('%s %I.%I', CASE c.relkind WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
             WHEN 'p' THEN 'partitioned table' WHEN 'f' THEN 'foreign table' ELSE 'relation' END, n.nspname, c.relname) AS what
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
       AND (c.relkind IN ('S', 'v', 'm', 'p', 'f') OR (c.relkind = 'r' AND n.nspname <> 'public'))
    UNION ALL
    SELECT format('function %I.%I', n.nspname, p.proname) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL
    SELECT format('trigger %I on %s', t.tgname, t.tgrelid::regclass) FROM pg_trigger t WHERE NOT t.tgisinternal
    UNION ALL
    SELECT format('type %I.%I', n.nspname, t.typname) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND t.typtype IN ('e', 'd', 'r', 'm')
    UNION ALL
    SELECT format('extension %I', extname) FROM pg_extension WHERE extname <> 'plpgsql'`);
  if (rows.length > 0) {
    throw new Error(
      `the logical copy reproduces plain tables in the public schema only; the source also holds ${rows.map((r) => r.what).join(", ")}`,
    );
  }
}

/** Read the source's schema as pg_dump would: one CREATE TABLE each, and what comes after the rows. */
async function dumpSchema(source: pg.Client): Promise<TableDump[]> {
  await refuseUnsupported(source);
  const { rows: columns } = await source.query<{ table: string; column: string; definition: string }>(`
    SELECT c.relname AS table, a.attname AS column,
           format('%I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                  CASE WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid) ELSE '' END,
                  CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END) AS definition
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
     WHERE n.nspname = 'public' AND c.relkind = 'r'
     ORDER BY c.relname, a.attnum`);
  const { rows: constraints } = await source.query<{ table: string; kind: string; definition: string }>(`
    SELECT c.relname AS table, k.contype AS kind,
           format('CONSTRAINT %I %s', k.conname, pg_get_constraintdef(k.oid)) AS definition
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND k.contype IN ('c', 'p', 'u', 'f')
     ORDER BY c.relname, k.contype = 'f', k.conname`);
  const { rows: indexes } = await source.query<{ table: string; definition: string }>(`
    SELECT c.relname AS table, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
     ORDER BY c.relname, i.indexrelid`);
  const tables = new Map<string, { columns: string[]; checks: string[]; keys: string[]; foreignKeys: string[] }>();
  for (const c of columns) {
    const table = tables.get(c.table) ?? { columns: [], checks: [], keys: [], foreignKeys: [] };
    table.columns.push(c.definition);
    tables.set(c.table, table);
  }
  for (const k of constraints) {
    const table = tables.get(k.table)!;
    const add = `ALTER TABLE ${ident(k.table)} ADD ${k.definition}`;
    if (k.kind === "c") table.checks.push(k.definition);
    else if (k.kind === "f") table.foreignKeys.push(add);
    else table.keys.push(add);
  }
  for (const i of indexes) tables.get(i.table)!.keys.push(i.definition);
  return [...tables].map(([name, t]) => ({
    name,
    create: `CREATE TABLE ${ident(name)} (${[...t.columns, ...t.checks].join(", ")})`,
    keys: t.keys,
    foreignKeys: t.foreignKeys,
  }));
}

/**
 * Copy the database at `sourceUrl` into a new database `target` on the server at `adminUrl`.
 * Everything a dump and restore does is inside: reading the schema, creating the database and its
 * tables, the rows, and the indexes and constraints built after them.
 */
export async function logicalCopy(adminUrl: string, sourceUrl: string, target: string): Promise<void> {
  const targetUrl = new URL(adminUrl);
  targetUrl.pathname = `/${encodeURIComponent(target)}`;
  const admin = await connect(adminUrl);
  const source = await connect(sourceUrl);
  try {
    const [tables] = await Promise.all([
      dumpSchema(source),
      admin.query(`CREATE DATABASE ${ident(target)} TEMPLATE template0`),
    ]);
    const sink = await connect(targetUrl.toString());
    try {
      await sink.query(tables.map((t) => t.create).join("; "));
    } finally {
      await sink.end();
    }
    // As pg_restore -j: one connection per table, each streaming its rows and then building its indexes.
    await Promise.all(
      tables.map(async (table) => {
        const [from, to] = await Promise.all([connect(sourceUrl), connect(targetUrl.toString())]);
        try {
          await pipeline(
            from.query(copyTo(`COPY ${ident(table.name)} TO STDOUT`)),
            to.query(copyFrom(`COPY ${ident(table.name)} FROM STDIN`)),
          );
          for (const statement of table.keys) await to.query(statement);
        } finally {
          await Promise.all([from.end(), to.end()]);
        }
      }),
    );
    // Foreign keys last: they need the keys they point at, which other tables' connections build.
    const foreign = tables.flatMap((t) => t.foreignKeys);
    if (foreign.length > 0) {
      const sink = await connect(targetUrl.toString());
      try {
        await sink.query(foreign.join("; "));
      } finally {
        await sink.end();
      }
    }
  } finally {
    await Promise.all([admin.end(), source.end()]);
  }
}
