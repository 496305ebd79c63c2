import type {
  ColumnInfo,
  ConstraintInfo,
  IndexInfo,
  SchemaSnapshot,
  SequenceInfo,
  TableInfo,
  ViewInfo,
} from "./snapshot.js";

/** The structural difference between a parent's schema and a child's (docs/ARCHITECTURE.md, Database branches). */

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
  const column = (
    name: string,
    change: { action: ChangeAction; before?: ColumnInfo; after?: ColumnInfo; details: string[] },
  ) => changes.push({ object: "column", name: `${key}.${name}`, table: key, column: name, ...change });
  // Columns keep the table's order: the dropped ones as they stood, then the rest as they stand.
  for (const [name, old] of beforeColumns)
    if (!afterColumns.has(name)) column(name, { action: "dropped", before: old, details: [describeColumn(old)] });
  for (const [name, now] of afterColumns) {
    const old = beforeColumns.get(name);
    const details = old ? columnDetails(old, now) : [describeColumn(now)];
    if (!old) column(name, { action: "added", after: now, details });
    else if (details.length > 0) column(name, { action: "changed", before: old, after: now, details });
  }
  compareEach(
    before.constraints,
    after.constraints,
    {
      dropped: (old) => [old.definition],
      added: (now) => [now.definition],
      changed: (old, now) => {
        if (old.definition === now.definition && old.enforced === now.enforced && old.validated === now.validated)
          return [];
        const details = [`${old.definition} → ${now.definition}`];
        if (old.validated !== now.validated) details.push(now.validated ? "now validated" : "now NOT VALID");
        if (old.enforced !== now.enforced) details.push(now.enforced ? "now enforced" : "now NOT ENFORCED");
        return details;
      },
    },
    (name, change) =>
      changes.push({ object: "constraint", name: `${key}.${name}`, table: key, constraint: name, ...change }),
  );
}

/** What one kind of object says when it is dropped, added or changed; no details: nothing to report. */
interface CompareRules<T> {
  dropped: (before: T) => string[] | undefined;
  added: (after: T) => string[];
  changed: (before: T, after: T, key: string) => string[];
}

/** Compare two maps of one kind of object key by key, in key order, reporting each difference through `push`. */
function compareEach<T>(
  parent: Record<string, T>,
  child: Record<string, T>,
  rules: CompareRules<T>,
  push: (key: string, change: { action: ChangeAction; before?: T; after?: T; details: string[] }) => void,
): void {
  for (const key of keysOf(parent, child)) {
    const before = parent[key];
    const after = child[key];
    if (before !== undefined && after === undefined) {
      const details = rules.dropped(before);
      if (details) push(key, { action: "dropped", before, details });
    } else if (before === undefined && after !== undefined) {
      push(key, { action: "added", after, details: rules.added(after) });
    } else if (before !== undefined && after !== undefined) {
      const details = rules.changed(before, after, key);
      if (details.length > 0) push(key, { action: "changed", before, after, details });
    }
  }
}

/** Everything that differs between the parent's schema and the child's, in a stable order. */
export function diffSchemas(parent: SchemaSnapshot, child: SchemaSnapshot): SchemaDiff {
  const changes: SchemaChange[] = [];

  compareEach(
    parent.enums,
    child.enums,
    {
      dropped: (before) => [before.join(", ")],
      added: (after) => [after.join(", ")],
      changed: (before, after) => {
        if (before.join("\u0000") === after.join("\u0000")) return [];
        const added = after.filter((v) => !before.includes(v));
        const removed = before.filter((v) => !after.includes(v));
        return [
          ...(added.length ? [`values added: ${added.join(", ")}`] : []),
          ...(removed.length ? [`values removed: ${removed.join(", ")}`] : []),
          ...(!added.length && !removed.length ? ["values reordered"] : []),
        ];
      },
    },
    (key, change) => changes.push({ object: "enum", name: key, ...change }),
  );

  compareEach(
    parent.tables,
    child.tables,
    {
      dropped: (before) => [`${before.columns.length} columns`],
      added: (after) => after.columns.map((c) => `${c.name} ${describeColumn(c)}`),
      // A changed table is reported as the changes of its columns and constraints.
      changed: (before, after, key) => {
        diffTable(key, before, after, changes);
        return [];
      },
    },
    (key, change) => changes.push({ object: "table", name: key, table: key, ...change }),
  );

  compareEach(
    parent.indexes,
    child.indexes,
    {
      // An index that goes with its table is part of that table's change.
      dropped: (before) => (child.tables[before.table] ? [before.definition] : undefined),
      added: (after) => [after.definition],
      changed: (before, after) =>
        before.definition === after.definition ? [] : [`${before.definition} → ${after.definition}`],
    },
    (key, change) =>
      changes.push({ object: "index", name: key, table: (change.after ?? change.before)!.table, ...change }),
  );

  compareEach(
    parent.views,
    child.views,
    {
      dropped: (before) => [before.materialized ? "materialized view" : "view"],
      added: (after) => [after.definition],
      changed: (before, after) =>
        before.definition !== after.definition || before.materialized !== after.materialized ? [after.definition] : [],
    },
    (key, change) => changes.push({ object: "view", name: key, ...change }),
  );

  compareEach(
    parent.sequences,
    child.sequences,
    {
      dropped: (before) => [before.dataType],
      added: (after) => [after.dataType],
      changed: (before, after) =>
        (["dataType", "start", "increment", "min", "max", "cycle"] as const)
          .filter((f) => before[f] !== after[f])
          .map((f) => `${f} ${String(before[f])} → ${String(after[f])}`),
    },
    (key, change) => changes.push({ object: "sequence", name: key, ...change }),
  );

  const summary: Record<ChangeAction, number> = { added: 0, dropped: 0, changed: 0 };
  for (const change of changes) summary[change.action]++;
  return { changes, summary };
}
