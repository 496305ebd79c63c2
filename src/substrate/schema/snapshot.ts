import pg from "pg";
import { PIN_SEARCH_PATH } from "../admin-session.js";
import { describeServer, toSubstrateError } from "../pg-errors.js";

/**
 * A database's schema read from the Postgres catalogs, for the diff between a branch and its
 * parent (docs/ARCHITECTURE.md, Database branches). Hand-written catalog queries rather than @pgkit/migra: migra emits a SQL
 * script, not a structured diff, and its inspector predates Postgres 18, which stores NOT NULL as
 * pg_constraint rows (contype 'n') and adds NOT ENFORCED constraints; these queries read both.
 * Objects owned by extensions and the system schemas are left out.
 */

export interface ColumnInfo {
  name: string;
  /** format_type(): e.g. `character varying(20)`, `numeric(10,2)`, `public.mood`. */
  type: string;
  notNull: boolean;
  default: string | null;
  /** `always` / `by default` for identity columns. */
  identity: "always" | "by default" | null;
  /** The expression of a stored generated column. */
  generated: string | null;
}

type ConstraintType = "primary key" | "unique" | "foreign key" | "check" | "exclusion" | "trigger";

export interface ConstraintInfo {
  name: string;
  type: ConstraintType;
  /** pg_get_constraintdef(): the constraint as SQL. */
  definition: string;
  columns: string[];
  /** For foreign keys: the referenced table (`schema.table`) and columns. */
  references?: { table: string; columns: string[] };
  validated: boolean;
  enforced: boolean;
}

export interface TableInfo {
  schema: string;
  name: string;
  partitioned: boolean;
  columns: ColumnInfo[];
  constraints: Record<string, ConstraintInfo>;
}

export interface IndexInfo {
  schema: string;
  name: string;
  /** `schema.table` the index is on. */
  table: string;
  unique: boolean;
  /** Plain column names, or null when the index has expressions. */
  columns: string[] | null;
  /** pg_get_indexdef(). */
  definition: string;
}

export interface ViewInfo {
  schema: string;
  name: string;
  materialized: boolean;
  definition: string;
}

export interface SequenceInfo {
  schema: string;
  name: string;
  dataType: string;
  start: string;
  increment: string;
  min: string;
  max: string;
  cycle: boolean;
}

export interface SchemaSnapshot {
  serverVersion: number;
  /** Keyed by `schema.name`. */
  tables: Record<string, TableInfo>;
  /** Indexes that back no constraint (those are listed with their constraint). */
  indexes: Record<string, IndexInfo>;
  enums: Record<string, string[]>;
  views: Record<string, ViewInfo>;
  sequences: Record<string, SequenceInfo>;
}

const USER_NAMESPACE = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'`;
const notFromExtension = (classid: string, oid: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend dep WHERE dep.classid = '${classid}'::pg_catalog.regclass AND dep.objid = ${oid} AND dep.deptype = 'e')`;

/** The snapshot keys each object by its qualified name, `schema.name`. */
const byQualifiedName = <R extends { schema: string; name: string }, T>(
  rows: R[],
  info: (row: R) => T,
): Record<string, T> => Object.fromEntries(rows.map((row) => [`${row.schema}.${row.name}`, info(row)]));

const CONSTRAINT_TYPES: Record<string, ConstraintType> = {
  p: "primary key",
  u: "unique",
  f: "foreign key",
  c: "check",
  x: "exclusion",
  t: "trigger",
};

/** Read the schema of the database at `url`. */
export async function snapshotSchema(url: string): Promise<SchemaSnapshot> {
  const client = new pg.Client({ connectionString: url, application_name: "consort-schema" });
  client.on("error", () => {});
  try {
    await client.connect();
    // A consistent picture even while migrations run elsewhere, in which no name resolves to the track's.
    await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${PIN_SEARCH_PATH}`);
    return await readSnapshot(client);
  } catch (error) {
    throw toSubstrateError(error, { server: describeServer(url), action: "reading the schema" });
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    await client.end().catch(() => {});
  }
}

async function readSnapshot(client: pg.Client): Promise<SchemaSnapshot> {
  const version = Number(
    (await client.query<{ v: string }>("SELECT pg_catalog.current_setting('server_version_num') AS v")).rows[0]!.v,
  );
  const byOid = new Map<number, TableInfo>();

  const tableRows = await client.query<{ oid: number; schema: string; name: string; relkind: string }>(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND ${USER_NAMESPACE} AND ${notFromExtension("pg_catalog.pg_class", "c.oid")}
      ORDER BY 2, 3`,
  );
  const tables = byQualifiedName(tableRows.rows, (row) => {
    const table: TableInfo = {
      schema: row.schema,
      name: row.name,
      partitioned: row.relkind === "p",
      columns: [],
      constraints: {},
    };
    byOid.set(row.oid, table);
    return table;
  });
  const oids = [...byOid.keys()];

  const columnRows = await client.query<{
    rel: number;
    name: string;
    type: string;
    notnull: boolean;
    def: string | null;
    identity: string;
    generated: string;
  }>(
    `SELECT a.attrelid::int AS rel, a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
            pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) AS def, a.attidentity AS identity, a.attgenerated AS generated
       FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
    [oids],
  );
  for (const row of columnRows.rows) {
    const generated = row.generated === "s" || row.generated === "v";
    byOid.get(row.rel)?.columns.push({
      name: row.name,
      type: row.type,
      notNull: row.notnull,
      default: generated ? null : row.def,
      identity: row.identity === "a" ? "always" : row.identity === "d" ? "by default" : null,
      generated: generated ? row.def : null,
    });
  }

  // Postgres 18 keeps NOT NULL as constraints too (contype 'n'): they are the columns' notNull here.
  const enforced = version >= 180000 ? "con.conenforced" : "true";
  const constraintRows = await client.query<{
    rel: number;
    name: string;
    contype: string;
    def: string;
    validated: boolean;
    enforced: boolean;
    columns: string[] | null;
    ref_table: string | null;
    ref_columns: string[] | null;
  }>(
    `SELECT con.conrelid::int AS rel, con.conname AS name, con.contype, pg_catalog.pg_get_constraintdef(con.oid) AS def,
            con.convalidated AS validated, ${enforced} AS enforced,
            (SELECT pg_catalog.array_agg(a.attname::text ORDER BY k.ord) FROM pg_catalog.unnest(con.conkey) WITH ORDINALITY k(num, ord)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num) AS columns,
            CASE WHEN con.contype = 'f' THEN (SELECT rn.nspname || '.' || rc.relname FROM pg_catalog.pg_class rc JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace WHERE rc.oid = con.confrelid) END AS ref_table,
            (SELECT pg_catalog.array_agg(a.attname::text ORDER BY k.ord) FROM pg_catalog.unnest(con.confkey) WITH ORDINALITY k(num, ord)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num) AS ref_columns
       FROM pg_catalog.pg_constraint con
      WHERE con.conrelid = ANY($1::oid[]) AND con.contype <> 'n'
      ORDER BY con.conrelid, con.conname`,
    [oids],
  );
  for (const row of constraintRows.rows) {
    const table = byOid.get(row.rel);
    if (!table) continue;
    table.constraints[row.name] = {
      name: row.name,
      type: CONSTRAINT_TYPES[row.contype] ?? "check",
      definition: row.def,
      columns: row.columns ?? [],
      ...(row.ref_table ? { references: { table: row.ref_table, columns: row.ref_columns ?? [] } } : {}),
      validated: row.validated,
      enforced: row.enforced,
    };
  }

  const indexRows = await client.query<{
    schema: string;
    name: string;
    table_schema: string;
    table_name: string;
    unique: boolean;
    def: string;
    columns: string[] | null;
  }>(
    `SELECT n.nspname AS schema, ic.relname AS name, tn.nspname AS table_schema, t.relname AS table_name, i.indisunique AS unique,
            pg_catalog.pg_get_indexdef(i.indexrelid) AS def,
            CASE WHEN i.indexprs IS NULL THEN (SELECT pg_catalog.array_agg(a.attname::text ORDER BY k.ord) FROM pg_catalog.unnest(i.indkey::int2[]) WITH ORDINALITY k(num, ord)
                   JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.num WHERE k.ord <= i.indnkeyatts) END AS columns
       FROM pg_catalog.pg_index i
       JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid JOIN pg_catalog.pg_namespace n ON n.oid = ic.relnamespace
       JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_namespace tn ON tn.oid = t.relnamespace
      WHERE i.indrelid = ANY($1::oid[])
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint con WHERE con.conindid = i.indexrelid AND con.contype IN ('p', 'u', 'x'))
      ORDER BY 1, 2`,
    [oids],
  );
  const indexes = byQualifiedName(indexRows.rows, (row): IndexInfo => ({
    schema: row.schema,
    name: row.name,
    table: `${row.table_schema}.${row.table_name}`,
    unique: row.unique,
    columns: row.columns,
    definition: row.def,
  }));

  const enumRows = await client.query<{ schema: string; name: string; labels: string[] }>(
    `SELECT n.nspname AS schema, t.typname AS name, pg_catalog.array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
       FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace JOIN pg_catalog.pg_enum e ON e.enumtypid = t.oid
      WHERE ${USER_NAMESPACE} AND ${notFromExtension("pg_catalog.pg_type", "t.oid")}
      GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  const enums = byQualifiedName(enumRows.rows, (row) => row.labels);

  const viewRows = await client.query<{ schema: string; name: string; relkind: string; def: string }>(
    `SELECT n.nspname AS schema, c.relname AS name, c.relkind, pg_catalog.pg_get_viewdef(c.oid, true) AS def
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('v', 'm') AND ${USER_NAMESPACE} AND ${notFromExtension("pg_catalog.pg_class", "c.oid")}
      ORDER BY 1, 2`,
  );
  const views = byQualifiedName(viewRows.rows, (row): ViewInfo => ({
    schema: row.schema,
    name: row.name,
    materialized: row.relkind === "m",
    definition: row.def.trim(),
  }));

  // Sequences behind identity columns belong to the column (deptype 'i') and are not listed.
  const sequenceRows = await client.query<{
    schema: string;
    name: string;
    type: string;
    start: string;
    increment: string;
    min: string;
    max: string;
    cycle: boolean;
  }>(
    `SELECT n.nspname AS schema, c.relname AS name, pg_catalog.format_type(s.seqtypid, NULL) AS type, s.seqstart::text AS start,
            s.seqincrement::text AS increment, s.seqmin::text AS min, s.seqmax::text AS max, s.seqcycle AS cycle
       FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c ON c.oid = s.seqrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE ${USER_NAMESPACE} AND ${notFromExtension("pg_catalog.pg_class", "c.oid")}
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = c.oid AND d.deptype = 'i')
      ORDER BY 1, 2`,
  );
  const sequences = byQualifiedName(sequenceRows.rows, (row): SequenceInfo => ({
    schema: row.schema,
    name: row.name,
    dataType: row.type,
    start: row.start,
    increment: row.increment,
    min: row.min,
    max: row.max,
    cycle: row.cycle,
  }));

  return { serverVersion: version, tables, indexes, enums, views, sequences };
}
