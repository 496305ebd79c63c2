import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compareSchemas,
  diffSchemas,
  lintSchemaChange,
  renderSchemaDiff,
  snapshotSchema,
  CHECK_RUN_TEXT_LIMIT,
  type SchemaDiff,
} from "../../../src/substrate/schema/index.js";
import { freshDatabase } from "../../helpers/postgres.js";

async function run(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The parent: a small shop with real rows, some of which a careless migration would break. */
const PARENT = `
  CREATE TYPE mood AS ENUM ('happy', 'sad', 'meh');
  CREATE TABLE supplier (id int PRIMARY KEY, name text NOT NULL);
  CREATE TABLE stock (
    sku text PRIMARY KEY,
    quantity int NOT NULL DEFAULT 0,
    note text,
    code text,
    supplier_id int,
    price numeric(10,2),
    feeling mood
  );
  CREATE TABLE legacy_audit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, what text);
  CREATE SEQUENCE invoice_no START 1000;
  CREATE VIEW low_stock AS SELECT sku FROM stock WHERE quantity < 5;
  CREATE INDEX stock_note_idx ON stock (note);
  INSERT INTO supplier VALUES (1, 'Acme');
  INSERT INTO stock VALUES
    ('A-1', 3, 'fragile', 'X', 1, 12.50, 'happy'),
    ('B-2', -4, NULL, 'X', 2, 99999.99, 'sad'),
    ('C-3', 7, NULL, 'Y', NULL, 1.00, 'meh'),
    ('D-4', 1, 'heavy', NULL, 9, 2.00, 'sad');
  INSERT INTO legacy_audit (what) SELECT 'row ' || g FROM generate_series(1, 5) g;
`;

/** The child: the same plus a migration that drops, tightens and narrows things. */
const MIGRATION = `
  DROP TABLE legacy_audit;
  ALTER TABLE stock DROP COLUMN note;
  ALTER TABLE stock ALTER COLUMN code SET NOT NULL;
  ALTER TABLE stock ALTER COLUMN price TYPE numeric(5,2);
  ALTER TABLE stock ALTER COLUMN quantity SET DEFAULT 1;
  ALTER TABLE stock ADD CONSTRAINT stock_code_key UNIQUE (code);
  ALTER TABLE stock ADD CONSTRAINT stock_quantity_check CHECK (quantity >= 0);
  ALTER TABLE stock ADD CONSTRAINT stock_supplier_fk FOREIGN KEY (supplier_id) REFERENCES supplier (id);
  ALTER TABLE stock ADD COLUMN received_at timestamptz NOT NULL;
  ALTER TYPE mood RENAME VALUE 'meh' TO 'okay';
  ALTER TYPE mood ADD VALUE 'glad';
  CREATE TABLE shipment (id int PRIMARY KEY, sku text NOT NULL REFERENCES stock (sku));
  CREATE UNIQUE INDEX supplier_name_key ON supplier (lower(name));
  CREATE OR REPLACE VIEW low_stock AS SELECT sku, quantity FROM stock WHERE quantity < 5;
  ALTER SEQUENCE invoice_no INCREMENT BY 10;
`;

let parentDb: Awaited<ReturnType<typeof freshDatabase>>;
let childDb: Awaited<ReturnType<typeof freshDatabase>>;
let diff: SchemaDiff;

beforeAll(async () => {
  parentDb = await freshDatabase("schema_parent");
  childDb = await freshDatabase("schema_child");
  await run(parentDb.url, PARENT);
  await run(childDb.url, PARENT);
  // The child's rows must fit its new rules, so it gets its own data; the lint reads the parent's.
  await run(childDb.url, `DELETE FROM stock; ${MIGRATION}`);
  diff = diffSchemas(await snapshotSchema(parentDb.url), await snapshotSchema(childDb.url));
});

afterAll(async () => {
  await parentDb?.drop();
  await childDb?.drop();
});

const find = (object: string, action: string, name: string) =>
  diff.changes.find((c) => c.object === object && c.action === action && c.name === name);

describe("the schema diff between a branch and its parent", () => {
  it("finds dropped and added tables", () => {
    expect(find("table", "dropped", "public.legacy_audit")).toBeDefined();
    expect(find("table", "added", "public.shipment")).toBeDefined();
  });

  it("finds column drops, additions, type, nullability and default changes", () => {
    expect(find("column", "dropped", "public.stock.note")).toBeDefined();
    expect(find("column", "added", "public.stock.received_at")?.details[0]).toContain("NOT NULL");
    const code = find("column", "changed", "public.stock.code");
    expect(code?.details).toEqual(["NOT NULL added"]);
    expect(find("column", "changed", "public.stock.price")?.details).toEqual(["type numeric(10,2) → numeric(5,2)"]);
    expect(find("column", "changed", "public.stock.quantity")?.details).toEqual(["default 0 → 1"]);
  });

  it("finds unique, check and foreign-key constraints, and never lists Postgres 18's NOT NULL constraint rows", () => {
    expect(find("constraint", "added", "public.stock.stock_code_key")?.details).toEqual(["UNIQUE (code)"]);
    expect(find("constraint", "added", "public.stock.stock_quantity_check")?.details).toEqual([
      "CHECK ((quantity >= 0))",
    ]);
    expect(find("constraint", "added", "public.stock.stock_supplier_fk")?.details[0]).toContain(
      "REFERENCES public.supplier(id)",
    );
    expect(diff.changes.filter((c) => c.object === "constraint" && c.name.includes("not_null"))).toEqual([]);
  });

  it("finds indexes, enums, views and sequences", () => {
    expect(find("index", "added", "public.supplier_name_key")?.details[0]).toContain("lower(name)");
    expect(find("enum", "changed", "public.mood")?.details).toEqual([
      "values added: okay, glad",
      "values removed: meh",
    ]);
    expect(find("view", "changed", "public.low_stock")).toBeDefined();
    expect(find("sequence", "changed", "public.invoice_no")?.details).toEqual(["increment 1 → 10"]);
    // The index of a dropped table goes with the table; the identity sequence with its column.
    expect(diff.changes.some((c) => c.name.includes("legacy_audit") && c.object !== "table")).toBe(false);
  });

  it("lists every change once, in a stable order, with what each says", () => {
    expect(diff.changes.map((c) => `${c.object} ${c.action} ${c.name}: ${c.details.join(" | ")}`))
      .toMatchInlineSnapshot(`
        [
          "enum changed public.mood: values added: okay, glad | values removed: meh",
          "table dropped public.legacy_audit: 2 columns",
          "table added public.shipment: id integer NOT NULL | sku text NOT NULL",
          "column dropped public.stock.note: text",
          "column changed public.stock.quantity: default 0 → 1",
          "column changed public.stock.code: NOT NULL added",
          "column changed public.stock.price: type numeric(10,2) → numeric(5,2)",
          "column added public.stock.received_at: timestamp with time zone NOT NULL",
          "constraint added public.stock.stock_code_key: UNIQUE (code)",
          "constraint added public.stock.stock_quantity_check: CHECK ((quantity >= 0))",
          "constraint added public.stock.stock_supplier_fk: FOREIGN KEY (supplier_id) REFERENCES public.supplier(id)",
          "index dropped public.stock_note_idx: CREATE INDEX stock_note_idx ON public.stock USING btree (note)",
          "index added public.supplier_name_key: CREATE UNIQUE INDEX supplier_name_key ON public.supplier USING btree (lower(name))",
          "view changed public.low_stock: SELECT sku,
            quantity
           FROM public.stock
          WHERE quantity < 5;",
          "sequence changed public.invoice_no: increment 1 → 10",
        ]
      `);
    expect(diff.summary).toMatchInlineSnapshot(`
      {
        "added": 6,
        "changed": 6,
        "dropped": 3,
      }
    `);
  });

  it("reports no change between identical schemas", async () => {
    const snapshot = await snapshotSchema(parentDb.url);
    const same = diffSchemas(snapshot, snapshot);
    expect(same.changes).toEqual([]);
    expect(renderSchemaDiff(same)).toContain("No schema changes.");
  });
});

describe("the lint counts the parent's real rows a change would break or lose", () => {
  it("counts each risky change on the parent's data", async () => {
    const parent = await snapshotSchema(parentDb.url);
    const lint = await lintSchemaChange(parentDb.url, parent, diff);
    const rows = Object.fromEntries(lint.findings.map((f) => [`${f.rule} ${f.change}`, f.rows]));
    expect(rows).toMatchObject({
      "table-dropped public.legacy_audit": 5,
      "column-dropped public.stock.note": 2,
      "not-null-added public.stock.code": 1,
      "type-changed public.stock.price": 1,
      "unique-added public.stock.stock_code_key": 2,
      "check-added public.stock.stock_quantity_check": 1,
      "foreign-key-added public.stock.stock_supplier_fk": 2,
      "not-null-column-added public.stock.received_at": 4,
      "enum-value-removed public.mood": 1,
    });
    // A unique index on an expression cannot be counted: unknown, which fails the lint.
    expect(lint.findings.find((f) => f.change === "public.supplier_name_key")).toMatchObject({
      rows: null,
      reason: expect.stringContaining("expressions"),
    });
    expect(lint.ok).toBe(false);
  });

  it("passes when the risky changes break nothing", async () => {
    const safeParent = await freshDatabase("schema_safe");
    const safeChild = await freshDatabase("schema_safe_child");
    try {
      await run(
        safeParent.url,
        "CREATE TABLE item (id int PRIMARY KEY, size int); INSERT INTO item VALUES (1, 10), (2, 20)",
      );
      await run(safeChild.url, "CREATE TABLE item (id int PRIMARY KEY, size bigint NOT NULL UNIQUE)");
      const result = await compareSchemas(safeParent.url, safeChild.url, { branch: "feature-size", parent: "main" });
      expect(result.lint.findings.map((f) => [f.rule, f.rows])).toEqual([
        ["not-null-added", 0],
        ["type-changed", 0],
        ["unique-added", 0],
      ]);
      expect(result.ok).toBe(true);
      expect(result.markdown).toContain("breaks or loses no row");
    } finally {
      await safeParent.drop();
      await safeChild.drop();
    }
  });
});

describe("the Markdown for the consort/schema check run", () => {
  it("shows the counts and the changes", async () => {
    const parent = await snapshotSchema(parentDb.url);
    const lint = await lintSchemaChange(parentDb.url, parent, diff);
    const markdown = renderSchemaDiff(diff, lint, { branch: "feature-cart", parent: "main" });
    expect(markdown).toContain("### Schema of `feature-cart` against `main`");
    expect(markdown).toMatch(/\| ❌ breaks \| `public.legacy_audit` \| 5 \|/);
    expect(markdown).toContain("| ➖ dropped | column | `public.stock.note` |");
  });

  it("stays within the check run's limit however large the diff", () => {
    const huge: SchemaDiff = {
      changes: Array.from({ length: 5000 }, (_, i) => ({
        object: "table" as const,
        action: "added" as const,
        name: `public.t${i}`,
        table: `public.t${i}`,
        details: ["x".repeat(200)],
      })),
      summary: { added: 5000, dropped: 0, changed: 0 },
    };
    const markdown = renderSchemaDiff(huge);
    expect(markdown.length).toBeLessThanOrEqual(CHECK_RUN_TEXT_LIMIT);
    expect(markdown).toMatch(/… and \d+ more changes not shown/);
  });
});
