import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE } from "./feature.js";

/**
 * A small feature of examples/stockflow for scenarios with several tracks in flight: one story, one
 * acceptance criterion, one fitness test, one migration adding an index on a column of
 * stock_records. Each instance touches its own test file and migration, so two of them differ only
 * where the default branch cannot hold both: the design artifacts, whose paths are fixed.
 */
export interface IndexFeature {
  column: string;
  migrationId: string;
  indexName: string;
  testFile: string;
  STORIES: string;
  SPEC: string;
  ARCHITECTURE: string;
  DB_DESIGN: string;
  TEST_LIST: string;
  RED_T1: string;
  GREEN_T1: Record<string, string>;
  REVIEW_T1: string;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const exampleDb = JSON.parse(readFileSync(join(EXAMPLE, ".consort/db-design.json"), "utf8")) as { tables: unknown };
const exampleArchitecture = JSON.parse(readFileSync(join(EXAMPLE, ".consort/architecture.json"), "utf8")) as {
  layers: unknown;
  modules: Array<{ name: string; stories: string[] }>;
};

/** The feature `id` (F3, F4…): an index on `column`, added by migration `<version>_stock_records_by_<column>`. */
export function indexFeature(id: string, column: string, version: string, why: string): IndexFeature {
  const indexName = `stock_records_by_${column}`;
  const migrationId = `${version}_${indexName}`;
  const testFile = `test/${indexName.replace(/_/g, "-")}.test.ts`;
  const title = `reading stock by ${column} is served by an index on stock_records(${column})`;
  const stories = {
    feature: { id, title: `Stock by ${column}`, summary: why },
    stories: [
      {
        id: "S1",
        title: `Stock by ${column}`,
        asA: "warehouse supervisor",
        iWant: `to read stock by ${column} without waiting`,
        soThat: why,
        acceptanceCriteria: [
          {
            id: "S1-AC1",
            given: `stock is filed for many SKUs`,
            when: `the supervisor reads it by ${column}`,
            then: `the rows are found through an index on ${column}, not a scan`,
          },
        ],
      },
    ],
  };
  const spec = {
    ...stories,
    nfrs: [
      {
        id: "NFR1",
        category: "performance",
        statement: `Reading by ${column} uses an index, not a scan.`,
        stories: ["S1"],
      },
    ],
  };
  return {
    column,
    migrationId,
    indexName,
    testFile,
    STORIES: json(stories),
    SPEC: json(spec),
    ARCHITECTURE: json({
      layers: exampleArchitecture.layers,
      modules: exampleArchitecture.modules
        .filter((m) => m.name === "stock-records-repository")
        .map((m) => ({ ...m, stories: ["S1"] })),
      persistenceInvariants: [],
      nfrs: [{ nfr: "NFR1", approach: `Migration ${migrationId} adds an index on stock_records(${column}).` }],
    }),
    DB_DESIGN: json({
      tables: exampleDb.tables,
      migrations: [
        {
          id: migrationId,
          story: "S1",
          description: `Index stock_records by ${column}; the down migration drops it.`,
          reversible: true,
          realizes: [],
        },
      ],
    }),
    TEST_LIST: json({ tests: [{ id: "T1", ac: "S1-AC1", kind: "fitness", file: testFile, title }] }),
    RED_T1: `import { afterAll, expect, test } from "vitest";
import { createPool } from "../src/db/pool.js";

const db = createPool();
afterAll(async () => {
  await db.end();
});

test("${title}", async () => {
  const { rows } = await db.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'stock_records'");
  expect(rows.map((r) => r.indexdef).filter((d) => /\\(${column}\\b/.test(d))).toHaveLength(1);
});
`,
    GREEN_T1: {
      [`migrations/${migrationId}.up.sql`]: `CREATE INDEX ${indexName} ON stock_records (${column});\n`,
      [`migrations/${migrationId}.down.sql`]: `DROP INDEX ${indexName};\n`,
    },
    REVIEW_T1: json({ unit: "T1", verdict: "accept", notes: [`The index leads with ${column}.`] }),
  };
}
