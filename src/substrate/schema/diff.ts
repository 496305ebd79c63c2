import type {
  ColumnInfo,
  ConstraintInfo,
  IndexInfo,
  SchemaSnapshot,
  SequenceInfo,
  TableInfo,
  ViewInfo,
} from "./snapshot.js";

/** The structural difference between a parent's schema and a child's (design §7). */

type ChangeAction = "added" | "dropped" | "changed";

interface ChangeBase {
  action: ChangeAction;
  /** Qualified name: `schema.table`, `schema.table.column`, `schema.table.constraint`, `schema.index`. */
  name: string;
  /** Human-readable lines saying what changed, e.g. `type integer → bigint`. */
  details: string[];
}

export type SchemaChange =
  | (ChangeBase & { object: "table"; table: string; before?: TableInfo; after?: TableInfo })
  | (ChangeBase & { object: "column"; table: string; column: string; before?: ColumnInfo; after?: ColumnInfo })
  | (ChangeBase & {
      object: "constraint";
      table: string;
      constraint: string;
      before?: ConstraintInfo;
      after?: ConstraintInfo;
    })
  | (ChangeBase & { object: "index"; table: string; before?: IndexInfo; after?: IndexInfo })
  | (ChangeBase & { object: "enum"; before?: string[]; after?: string[] })
  | (ChangeBase & { object: "view"; before?: ViewInfo; after?: ViewInfo })
  | (ChangeBase & { object: "sequence"; before?: SequenceInfo; after?: SequenceInfo });

export interface SchemaDiff {
  changes: SchemaChange[];
  summary: Record<ChangeAction, number>;
}

function keysOf<T>(a: Record<string, T>, b: Record<string, T>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}

const show = (value: string | null) => (value === null ? "none" : value);

function columnDetails(before: ColumnInfo, after: ColumnInfo): string[] {
  const details: string[] = [];
  if (before.type !== after.type) details.push(`type ${before.type} → ${after.type}`);
  if (before.notNull !== after.notNull) details.push(after.notNull ? "NOT NULL added" : "NOT NULL dropped");
  if (before.default !== after.default) details.push(`default ${show(before.default)} → ${show(after.default)}`);
  if (before.identity !== after.identity) details.push(`identity ${show(before.identity)} → ${show(after.identity)}`);
  if (before.generated !== after.generated)
    details.push(`generated ${show(before.generated)} → ${show(after.generated)}`);
  return details;
}

function describeColumn(column: ColumnInfo): string {
  const parts = [column.type];
  if (column.notNull) parts.push("NOT NULL");
  if (column.default !== null) parts.push(`DEFAULT ${column.default}`);
  if (column.identity) parts.push(`GENERATED ${column.identity.toUpperCase()} AS IDENTITY`);
  if (column.generated) parts.push(`GENERATED ALWAYS AS (${column.generated})`);
  return parts.join(" ");
}

function diffTable(key: string, before: TableInfo, after: TableInfo, changes: SchemaChange[]): void {
  const beforeColumns = new Map(before.columns.map((c) => [c.name, c]));
  const afterColumns = new Map(after.columns.map((c) => [c.name, c]));
  for (const [name, column] of beforeColumns) {
    if (!afterColumns.has(name))
      changes.push({
        object: "column",
        action: "dropped",
        name: `${key}.${name}`,
        table: key,
        column: name,
        before: column,
        details: [describeColumn(column)],
      });
  }
  for (const [name, column] of afterColumns) {
    const old = beforeColumns.get(name);
    if (!old) {
      changes.push({
        object: "column",
        action: "added",
        name: `${key}.${name}`,
        table: key,
        column: name,
        after: column,
        details: [describeColumn(column)],
      });
    } else {
      const details = columnDetails(old, column);
      if (details.length > 0)
        changes.push({
          object: "column",
          action: "changed",
          name: `${key}.${name}`,
          table: key,
          column: name,
          before: old,
          after: column,
          details,
        });
    }
  }
  for (const name of keysOf(before.constraints, after.constraints)) {
    const old = before.constraints[name];
    const now = after.constraints[name];
    const base = { object: "constraint" as const, name: `${key}.${name}`, table: key, constraint: name };
    if (old && !now) changes.push({ ...base, action: "dropped", before: old, details: [old.definition] });
    else if (!old && now) changes.push({ ...base, action: "added", after: now, details: [now.definition] });
    else if (
      old &&
      now &&
      (old.definition !== now.definition || old.enforced !== now.enforced || old.validated !== now.validated)
    ) {
      const details = [`${old.definition} → ${now.definition}`];
      if (old.validated !== now.validated) details.push(now.validated ? "now validated" : "now NOT VALID");
      if (old.enforced !== now.enforced) details.push(now.enforced ? "now enforced" : "now NOT ENFORCED");
      changes.push({ ...base, action: "changed", before: old, after: now, details });
    }
  }
}

/** Everything that differs between the parent's schema and the child's, in a stable order. */
export function diffSchemas(parent: SchemaSnapshot, child: SchemaSnapshot): SchemaDiff {
  const changes: SchemaChange[] = [];

  for (const key of keysOf(parent.enums, child.enums)) {
    const before = parent.enums[key];
    const after = child.enums[key];
    if (before && !after)
      changes.push({ object: "enum", action: "dropped", name: key, before, details: [before.join(", ")] });
    else if (!before && after)
      changes.push({ object: "enum", action: "added", name: key, after, details: [after.join(", ")] });
    else if (before && after && before.join("\u0000") !== after.join("\u0000")) {
      const added = after.filter((v) => !before.includes(v));
      const removed = before.filter((v) => !after.includes(v));
      const details = [
        ...(added.length ? [`values added: ${added.join(", ")}`] : []),
        ...(removed.length ? [`values removed: ${removed.join(", ")}`] : []),
        ...(!added.length && !removed.length ? ["values reordered"] : []),
      ];
      changes.push({ object: "enum", action: "changed", name: key, before, after, details });
    }
  }

  for (const key of keysOf(parent.tables, child.tables)) {
    const before = parent.tables[key];
    const after = child.tables[key];
    if (before && !after)
      changes.push({
        object: "table",
        action: "dropped",
        name: key,
        table: key,
        before,
        details: [`${before.columns.length} columns`],
      });
    else if (!before && after) {
      changes.push({
        object: "table",
        action: "added",
        name: key,
        table: key,
        after,
        details: after.columns.map((c) => `${c.name} ${describeColumn(c)}`),
      });
    } else if (before && after) diffTable(key, before, after, changes);
  }

  for (const key of keysOf(parent.indexes, child.indexes)) {
    const before = parent.indexes[key];
    const after = child.indexes[key];
    // An index that goes with its table is part of that table's change.
    if (before && !after && child.tables[before.table])
      changes.push({
        object: "index",
        action: "dropped",
        name: key,
        table: before.table,
        before,
        details: [before.definition],
      });
    else if (!before && after)
      changes.push({
        object: "index",
        action: "added",
        name: key,
        table: after.table,
        after,
        details: [after.definition],
      });
    else if (before && after && before.definition !== after.definition) {
      changes.push({
        object: "index",
        action: "changed",
        name: key,
        table: after.table,
        before,
        after,
        details: [`${before.definition} → ${after.definition}`],
      });
    }
  }

  for (const key of keysOf(parent.views, child.views)) {
    const before = parent.views[key];
    const after = child.views[key];
    if (before && !after)
      changes.push({
        object: "view",
        action: "dropped",
        name: key,
        before,
        details: [before.materialized ? "materialized view" : "view"],
      });
    else if (!before && after)
      changes.push({ object: "view", action: "added", name: key, after, details: [after.definition] });
    else if (
      before &&
      after &&
      (before.definition !== after.definition || before.materialized !== after.materialized)
    ) {
      changes.push({ object: "view", action: "changed", name: key, before, after, details: [after.definition] });
    }
  }

  for (const key of keysOf(parent.sequences, child.sequences)) {
    const before = parent.sequences[key];
    const after = child.sequences[key];
    if (before && !after)
      changes.push({ object: "sequence", action: "dropped", name: key, before, details: [before.dataType] });
    else if (!before && after)
      changes.push({ object: "sequence", action: "added", name: key, after, details: [after.dataType] });
    else if (before && after) {
      const details = (["dataType", "start", "increment", "min", "max", "cycle"] as const)
        .filter((f) => before[f] !== after[f])
        .map((f) => `${f} ${String(before[f])} → ${String(after[f])}`);
      if (details.length) changes.push({ object: "sequence", action: "changed", name: key, before, after, details });
    }
  }

  const summary: Record<ChangeAction, number> = { added: 0, dropped: 0, changed: 0 };
  for (const change of changes) summary[change.action]++;
  return { changes, summary };
}
