import pg from "pg";
import { PIN_SEARCH_PATH } from "../admin-session.js";
import { describeServer, toSubstrateError } from "../pg-errors.js";
import type { SchemaChange, SchemaDiff } from "./diff.js";
import type { SchemaSnapshot, TableInfo } from "./snapshot.js";
import { ident } from "../sql.js";

/**
 * A lint that uses the real data: for each risky change, count the parent's rows the change would
 * break or lose (docs/ARCHITECTURE.md, Database branches). A count that cannot be made is reported as unknown, and an unknown
 * fails the lint like a positive count (fail closed).
 */

type LintRule =
  | "table-dropped"
  | "column-dropped"
  | "not-null-added"
  | "not-null-column-added"
  | "type-changed"
  | "unique-added"
  | "check-added"
  | "foreign-key-added"
  | "enum-value-removed";

interface LintFinding {
  rule: LintRule;
  /** The change's qualified name (see SchemaChange.name). */
  change: string;
  /** Rows of the parent the change would break or lose; null when they could not be counted. */
  rows: number | null;
  /** One sentence a reviewer reads, e.g. "dropping column public.stock.note loses 12 non-null values". */
  message: string;
  /** Why the rows could not be counted. */
  reason?: string;
}

export interface SchemaLint {
  findings: LintFinding[];
  /** True only when every risky change was counted and breaks or loses no row. */
  ok: boolean;
}

const rel = (table: TableInfo) => `${ident(table.schema)}.${ident(table.name)}`;

interface Probe {
  rule: LintRule;
  change: string;
  /** A query returning one row with an integer column `n`, or a reason it cannot be counted. */
  sql: string | { unknown: string } | { rows: number; note: string };
  describe: (rows: number) => string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function checkExpression(definition: string): string | undefined {
  const match = /^CHECK \((.*)\)(?: NO INHERIT)?(?: NOT VALID)?(?: NOT ENFORCED)?$/s.exec(definition.trim());
  return match?.[1];
}

function probesFor(change: SchemaChange, parent: SchemaSnapshot, version: number): Probe[] {
  const table = "table" in change ? parent.tables[change.table] : undefined;
  const parentColumns = new Map((table?.columns ?? []).map((c) => [c.name, c]));
  const nameOf = change.name;

  switch (change.object) {
    case "table":
      if (change.action !== "dropped" || !table) return [];
      return [
        {
          rule: "table-dropped",
          change: nameOf,
          sql: `SELECT count(*)::bigint AS n FROM ${rel(table)}`,
          describe: (n) => `dropping table ${nameOf} loses ${plural(n, "row")}`,
        },
      ];

    case "column": {
      if (!table) return [];
      const col = ident(change.column);
      if (change.action === "dropped") {
        return [
          {
            rule: "column-dropped",
            change: nameOf,
            sql: `SELECT count(*)::bigint AS n FROM ${rel(table)} WHERE ${col} IS NOT NULL`,
            describe: (n) => `dropping column ${nameOf} loses ${plural(n, "non-null value")}`,
          },
        ];
      }
      if (change.action === "added") {
        const after = change.after!;
        if (after.notNull && after.default === null && !after.identity && !after.generated) {
          return [
            {
              rule: "not-null-column-added",
              change: nameOf,
              sql: `SELECT count(*)::bigint AS n FROM ${rel(table)}`,
              describe: (n) =>
                `adding NOT NULL column ${nameOf} without a default fails on ${plural(n, "existing row")}`,
            },
          ];
        }
        return [];
      }
      const probes: Probe[] = [];
      const before = change.before!;
      const after = change.after!;
      if (!before.notNull && after.notNull) {
        probes.push({
          rule: "not-null-added",
          change: nameOf,
          sql: `SELECT count(*)::bigint AS n FROM ${rel(table)} WHERE ${col} IS NULL`,
          describe: (n) => `NOT NULL on ${nameOf} breaks ${plural(n, "row")} that hold NULL`,
        });
      }
      if (before.type !== after.type) {
        probes.push({
          rule: "type-changed",
          change: nameOf,
          sql:
            version >= 160000
              ? `SELECT count(*)::bigint AS n FROM ${rel(table)} WHERE ${col} IS NOT NULL AND NOT pg_input_is_valid(${col}::text, ${pg.Client.prototype.escapeLiteral(after.type)})`
              : { unknown: "checking values against a new type needs Postgres 16 or later (pg_input_is_valid)" },
          describe: (n) =>
            `changing ${nameOf} from ${before.type} to ${after.type} breaks ${plural(n, "value")} that do not fit`,
        });
      }
      return probes;
    }

    case "constraint": {
      if (change.action === "dropped" || !table) return [];
      const after = change.after!;
      if (!after.enforced || (!after.validated && after.type !== "unique" && after.type !== "primary key")) return [];
      const missing = after.columns.filter((c) => !parentColumns.has(c));
      if (after.type === "unique" || after.type === "primary key") {
        return [uniqueProbe(nameOf, table, after.columns, missing, after.type === "primary key")];
      }
      if (after.type === "check") {
        const expression = checkExpression(after.definition);
        if (missing.length) return [onNewColumns("check-added", nameOf, missing)];
        return [
          {
            rule: "check-added",
            change: nameOf,
            sql: expression
              ? `SELECT count(*)::bigint AS n FROM ${rel(table)} WHERE NOT (${expression})`
              : { unknown: `could not read the expression of ${after.definition}` },
            describe: (n) => `CHECK ${nameOf} breaks ${plural(n, "row")}`,
          },
        ];
      }
      if (after.type === "foreign key" && after.references) {
        if (missing.length) return [onNewColumns("foreign-key-added", nameOf, missing)];
        const target = parent.tables[after.references.table];
        const notNull = after.columns.map((c) => `t.${ident(c)} IS NOT NULL`).join(" AND ");
        const sql = target
          ? `SELECT count(*)::bigint AS n FROM ${rel(table)} t WHERE ${notNull} AND NOT EXISTS (SELECT 1 FROM ${rel(target)} r WHERE ${after.columns
              .map((c, i) => `r.${ident(after.references!.columns[i] ?? c)} = t.${ident(c)}`)
              .join(" AND ")})`
          : // The referenced table is new in this branch, so on the parent it is empty.
            `SELECT count(*)::bigint AS n FROM ${rel(table)} t WHERE ${notNull}`;
        return [
          {
            rule: "foreign-key-added",
            change: nameOf,
            sql,
            describe: (n) =>
              `foreign key ${nameOf} breaks ${plural(n, "row")} with no matching ${after.references!.table} row`,
          },
        ];
      }
      return [];
    }

    case "index": {
      if (change.action === "dropped" || !change.after?.unique) return [];
      const indexTable = parent.tables[change.table];
      if (!indexTable) return [];
      if (!change.after.columns)
        return [
          {
            rule: "unique-added",
            change: nameOf,
            sql: { unknown: "it is a unique index on expressions" },
            describe: () => "",
          },
        ];
      const columns = new Map(indexTable.columns.map((c) => [c.name, c]));
      const missing = change.after.columns.filter((c) => !columns.has(c));
      return [uniqueProbe(nameOf, indexTable, change.after.columns, missing, false)];
    }

    case "enum": {
      if (change.action !== "changed") return [];
      const removed = change.before!.filter((v) => !change.after!.includes(v));
      if (removed.length === 0) return [];
      const [schema, typeName] = [
        change.name.slice(0, change.name.indexOf(".")),
        change.name.slice(change.name.indexOf(".") + 1),
      ];
      const users: string[] = [];
      for (const t of Object.values(parent.tables)) {
        for (const c of t.columns) {
          if (
            c.type === typeName ||
            c.type === `${schema}.${typeName}` ||
            c.type === `${ident(schema)}.${ident(typeName)}`
          ) {
            users.push(
              `SELECT count(*) AS n FROM ${rel(t)} WHERE ${ident(c.name)}::text = ANY(${pg.Client.prototype.escapeLiteral(`{${removed.map((r) => `"${r.replace(/["\\]/g, "\\$&")}"`).join(",")}}`)}::text[])`,
            );
          }
        }
      }
      return [
        {
          rule: "enum-value-removed",
          change: nameOf,
          sql: users.length
            ? `SELECT coalesce(sum(n), 0)::bigint AS n FROM (${users.join(" UNION ALL ")}) s`
            : { rows: 0, note: "no column uses it" },
          describe: (n) => `removing ${removed.join(", ")} from ${nameOf} breaks ${plural(n, "row")} that hold them`,
        },
      ];
    }
    default:
      return [];
  }
}

/** A constraint over columns the parent does not have: its rows cannot be counted there. */
function onNewColumns(rule: LintRule, change: string, missing: string[]): Probe {
  return {
    rule,
    change,
    sql: { unknown: `it uses column(s) new in this branch (${missing.join(", ")})` },
    describe: () => "",
  };
}

function uniqueProbe(change: string, table: TableInfo, columns: string[], missing: string[], primary: boolean): Probe {
  const describe = (n: number) =>
    `${primary ? "PRIMARY KEY" : "UNIQUE"} ${change} breaks ${plural(n, "row")} with duplicate${primary ? " or NULL" : ""} keys`;
  if (missing.length > 0) {
    // New columns start NULL for every existing row: NULLs never collide, but a primary key forbids them.
    return primary
      ? { rule: "unique-added", change, sql: `SELECT count(*)::bigint AS n FROM ${rel(table)}`, describe }
      : {
          rule: "unique-added",
          change,
          sql: {
            unknown: `it uses column(s) new in this branch (${missing.join(", ")}) whose values the migration sets`,
          },
          describe,
        };
  }
  const cols = columns.map(ident).join(", ");
  const notNull = columns.map((c) => `${ident(c)} IS NOT NULL`).join(" AND ");
  const duplicates = `SELECT count(*) AS c FROM ${rel(table)} WHERE ${notNull} GROUP BY ${cols} HAVING count(*) > 1`;
  const nulls = primary ? ` + (SELECT count(*) FROM ${rel(table)} WHERE NOT (${notNull}))` : "";
  return {
    rule: "unique-added",
    change,
    sql: `SELECT (coalesce((SELECT sum(c) FROM (${duplicates}) d), 0)${nulls})::bigint AS n`,
    describe,
  };
}

/** Count, on the parent's real data, the rows each risky change in `diff` would break or lose. */
export async function lintSchemaChange(
  parentUrl: string,
  parent: SchemaSnapshot,
  diff: SchemaDiff,
  options: { statementTimeoutMs?: number } = {},
): Promise<SchemaLint> {
  const probes = diff.changes.flatMap((change) => probesFor(change, parent, parent.serverVersion));
  if (probes.length === 0) return { findings: [], ok: true };
  const client = new pg.Client({ connectionString: parentUrl, application_name: "consort-schema-lint" });
  client.on("error", () => {});
  const findings: LintFinding[] = [];
  try {
    await client.connect();
    await client.query(`SET statement_timeout = ${Math.max(1000, Math.floor(options.statementTimeoutMs ?? 60_000))}`);
    // The parent's catalog holds what earlier promotions defined: no name may resolve to theirs.
    await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${PIN_SEARCH_PATH}`);
    for (const probe of probes) {
      if (typeof probe.sql === "object" && "unknown" in probe.sql) {
        findings.push({
          rule: probe.rule,
          change: probe.change,
          rows: null,
          message: `${probe.change}: could not count the rows it affects`,
          reason: probe.sql.unknown,
        });
        continue;
      }
      if (typeof probe.sql === "object") {
        findings.push({
          rule: probe.rule,
          change: probe.change,
          rows: probe.sql.rows,
          message: probe.describe(probe.sql.rows),
          reason: probe.sql.note,
        });
        continue;
      }
      await client.query("SAVEPOINT probe");
      try {
        const result = await client.query<{ n: string }>(probe.sql);
        const rows = Number(result.rows[0]?.n ?? 0);
        findings.push({ rule: probe.rule, change: probe.change, rows, message: probe.describe(rows) });
        await client.query("RELEASE SAVEPOINT probe");
      } catch (error) {
        await client.query("ROLLBACK TO SAVEPOINT probe");
        findings.push({
          rule: probe.rule,
          change: probe.change,
          rows: null,
          message: `${probe.change}: could not count the rows it affects`,
          reason: (error as Error).message,
        });
      }
    }
  } catch (error) {
    throw toSubstrateError(error, {
      server: describeServer(parentUrl),
      action: "counting the rows a schema change affects",
    });
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    await client.end().catch(() => {});
  }
  return { findings, ok: findings.every((f) => f.rows === 0) };
}
