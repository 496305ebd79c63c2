import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const EXAMPLE = resolve(dirname(fileURLToPath(import.meta.url)), "../../../examples/stockflow");

/**
 * The feature the end-to-end scenario builds on examples/stockflow: "stock by location" (F2),
 * one story with two acceptance criteria, designed by each role, two tests, one migration. The
 * design artifacts are the example's own, cut down to this story, so they stay true to the
 * example as it evolves. `main` holds StockFlow with filing stock (S1) done and S2 not started.
 */

const example = (path: string) => JSON.parse(readFileSync(join(EXAMPLE, path), "utf8")) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const exampleSpec = example(".consort/spec.json");
const exampleArchitecture = example(".consort/architecture.json");
const exampleDb = example(".consort/db-design.json");

const story = { ...exampleSpec.stories.find((s: { id: string }) => s.id === "S2"), id: "S1" };
story.acceptanceCriteria = story.acceptanceCriteria.map((ac: { id: string }) => ({
  ...ac,
  id: ac.id.replace(/^S2-/, "S1-"),
}));

/** The Product Owner's commit: the feature and its story with acceptance criteria, no NFRs yet. */
export const STORIES = json({
  feature: { id: "F2", title: "Stock by location", summary: "Supervisors list what one location holds." },
  stories: [story],
});

/** The Spec Author's commit: the same stories plus the non-functional requirements. */
export const SPEC = json({
  ...JSON.parse(STORIES),
  nfrs: [
    {
      id: "NFR1",
      category: "layering",
      statement: "Routes never touch the database directly: routes → services → repositories.",
      stories: ["S1"],
    },
    {
      id: "NFR2",
      category: "performance",
      statement: "Listing a location reads it through an index on location, not a scan.",
      stories: ["S1"],
    },
  ],
});

/** The module this feature creates: declared by the architect, written by the driver's GREEN for T4. */
export const NEW_MODULE = "src/services/location-summary.ts";

/** The Architect's commit: the example's modules for this story, and one new module with its export. */
export const ARCHITECTURE = json({
  layers: exampleArchitecture.layers,
  modules: [
    ...exampleArchitecture.modules
      .filter((m: { stories: string[] }) => m.stories.includes("S2"))
      .map((m: Record<string, unknown>) => ({ ...m, stories: ["S1"] })),
    {
      name: "location-summary",
      layer: "services",
      path: NEW_MODULE,
      responsibility: "Totals what one location holds, from the items the stock service lists.",
      stories: ["S1"],
      exports: ["totalQuantity"],
    },
  ],
  persistenceInvariants: [],
  nfrs: [
    { nfr: "NFR1", approach: "The route calls the stock service; only the repository holds SQL." },
    { nfr: "NFR2", approach: "Migration 0002 adds an index on stock_records(location)." },
  ],
});

export const MIGRATION_ID = "0002_stock_records_by_location";
const MIGRATION_UP = "CREATE INDEX stock_records_by_location ON stock_records (location, sku);\n";
const MIGRATION_DOWN = "DROP INDEX stock_records_by_location;\n";

/** The DBA's commit: the existing table, and this story's migration. */
export const DB_DESIGN = json({
  tables: exampleDb.tables,
  migrations: [
    {
      id: MIGRATION_ID,
      story: "S1",
      description: "Index stock_records by location so a location lists without a scan; the down migration drops it.",
      reversible: true,
      realizes: [],
    },
  ],
});

export const TEST_FILE = "test/stock-by-location.test.ts";
export const INDEX_TEST_FILE = "test/stock-by-location-index.test.ts";
const T1_TITLE = "listing a location is served by an index on stock_records(location)";
export const T2_TITLE = "stock by location lists each sku at the location with its quantity";
const T3_TITLE = "a location with no stock returns an empty list with success";
export const SUMMARY_TEST_FILE = "test/location-summary.test.ts";
const T4_TITLE = "a location's summary totals the quantities of its skus";

/** The Test Strategist's commit: a fitness test for the index NFR, the two ACs, then the new module's test. */
export const TEST_LIST = json({
  tests: [
    { id: "T1", ac: "S1-AC1", kind: "fitness", file: INDEX_TEST_FILE, title: T1_TITLE },
    { id: "T2", ac: "S1-AC1", kind: "behavior", file: TEST_FILE, title: T2_TITLE },
    { id: "T3", ac: "S1-AC2", kind: "behavior", file: TEST_FILE, title: T3_TITLE },
    { id: "T4", ac: "S1-AC1", kind: "behavior", file: SUMMARY_TEST_FILE, title: T4_TITLE },
  ],
});

/** The Navigator's RED for T1: the planner must use an index whose first column is location. */
export const RED_T1 = `import { afterAll, expect, test } from "vitest";
import { createPool } from "../src/db/pool.js";

const db = createPool();
afterAll(async () => {
  await db.end();
});

test("${T1_TITLE}", async () => {
  const { rows } = await db.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'stock_records'");
  expect(rows.map((r) => r.indexdef).filter((d) => /\\(location\\b/.test(d))).toHaveLength(1);
});
`;

/**
 * The example's test file with its helpers inlined. main carries no test files: a refactor cycle
 * refuses every test file in the checkout that no RED of the track froze, including tests the
 * default branch already had (see the report on src/cycle/verdict.ts), so the feature brings its own.
 */
const exampleHelpers = readFileSync(join(EXAMPLE, "test/helpers.ts"), "utf8").replace(/^export /gm, "");
const exampleTest = [
  ...exampleHelpers.split("\n").filter((line) => line.startsWith("import ")),
  ...readFileSync(join(EXAMPLE, TEST_FILE), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("import ") && !/helpers\.js|from "pg"/.test(line)),
  "",
  ...exampleHelpers.split("\n").filter((line) => !line.startsWith("import ")),
  ...readFileSync(join(EXAMPLE, TEST_FILE), "utf8")
    .split("\n")
    .filter((line) => !line.startsWith("import ")),
].join("\n");
const secondTest = exampleTest.indexOf(`\ntest("${T3_TITLE}"`);
if (secondTest < 0 || !exampleTest.includes(T2_TITLE))
  throw new Error(
    `${TEST_FILE} in the example no longer holds "${T2_TITLE}" then "${T3_TITLE}": update test/e2e/support/feature.ts`,
  );

/** The Navigator's RED for T2: the test file with its first test. */
export const RED_T2 = exampleTest.slice(0, secondTest + 1);
/** The Navigator's RED for T3: the first test untouched, the second added. */
export const RED_T3 = exampleTest;

/** The example's code as committed (S1 and S2 both done). */
const finished = {
  repository: readFileSync(join(EXAMPLE, "src/repositories/stock-records.ts"), "utf8"),
  service: readFileSync(join(EXAMPLE, "src/services/stock.ts"), "utf8"),
  routes: readFileSync(join(EXAMPLE, "src/routes/index.ts"), "utf8"),
};

function without(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0)
    throw new Error(
      `the example changed: cannot cut ${JSON.stringify(start.slice(0, 60))}; update test/e2e/support/feature.ts`,
    );
  return text.slice(0, from) + text.slice(to + end.length);
}

const LIST_METHOD_START = "\n\n    async listAtLocation(";
const SERVICE_ITEM_START = "export interface LocationStockItem {";
const SERVICE_METHOD_START = "\n\n    /** S2: an empty location is an empty list, not an error. */";
const ROUTE_START = '    {\n      method: "GET",\n      pattern: /^\\/locations\\/';

/** StockFlow before this feature: filing stock works; nothing lists a location. */
export const BEFORE = {
  "src/repositories/stock-records.ts": without(finished.repository, LIST_METHOD_START, "rows.map(toRecord);\n    },"),
  "src/services/stock.ts": without(
    without(finished.service, SERVICE_ITEM_START, "}\n\n"),
    SERVICE_METHOD_START,
    "quantity }));\n    },",
  ),
  "src/routes/index.ts": without(finished.routes, ROUTE_START, "} }),\n    },\n"),
};

/** The Driver's GREEN for T1: the migration. */
export const GREEN_T1: Record<string, string> = {
  [`migrations/${MIGRATION_ID}.up.sql`]: MIGRATION_UP,
  [`migrations/${MIGRATION_ID}.down.sql`]: MIGRATION_DOWN,
};

/**
 * The Driver's GREEN for T2: the finished code, except that an empty location answers 404 (T3,
 * not yet written, is what will prove that wrong).
 */
export const GREEN_T2: Record<string, string> = {
  "src/repositories/stock-records.ts": finished.repository,
  "src/services/stock.ts": finished.service,
  "src/routes/index.ts": finished.routes.replace(
    "handler: async (_request, [location]) => ({ status: 200, body: { items: await stock.stockAtLocation(location!) } }),",
    "handler: async (_request, [location]) => {\n        const items = await stock.stockAtLocation(location!);\n        return items.length > 0 ? { status: 200, body: { items } } : { status: 404, body: { error: `no stock at ${location}` } };\n      },",
  ),
};
if (GREEN_T2["src/routes/index.ts"] === finished.routes)
  throw new Error("the example's S2 route changed: update GREEN_T2 in test/e2e/support/feature.ts");

/** The Driver's GREEN for T3: an empty location is an empty list. */
export const GREEN_T3: Record<string, string> = {
  "src/routes/index.ts": GREEN_T2["src/routes/index.ts"]!.replace(
    "items.length > 0 ? { status: 200, body: { items } } : { status: 404, body: { error: `no stock at ${location}` } }",
    "{ status: 200, body: { items } }",
  ),
};

/** The Driver's refactor after the Navigator asked for one: the handler back to one expression. */
export const REFACTOR_T3: Record<string, string> = { "src/routes/index.ts": finished.routes };

/**
 * The Navigator's RED for T4: a static import of the declared module nobody wrote yet. The file
 * cannot load, and that is the RED: "behaviour missing", not a crash.
 */
export const RED_T4 = `import { expect, test } from "vitest";
import { totalQuantity } from "../src/services/location-summary.js";

test("${T4_TITLE}", () => {
  expect(totalQuantity([{ sku: "A-1", quantity: 2 }, { sku: "B-2", quantity: 3 }])).toBe(5);
});
`;

/** The Driver's GREEN for T4: the new module. */
export const GREEN_T4: Record<string, string> = {
  [NEW_MODULE]: `/** Totals what one location holds. */
export function totalQuantity(items: ReadonlyArray<{ quantity: number }>): number {
  return items.reduce((sum, item) => sum + item.quantity, 0);
}
`,
};

/** A module no role declared: a RED that needs it is refused, naming the legal path. */
export const UNDECLARED_MODULE = "src/services/stock-export.js";

export const REVIEW_T4 = json({
  unit: "T4",
  verdict: "accept",
  notes: ["The summary is a pure function of the listed items, as the architecture declares."],
});

export const REVIEW_T1 = json({
  unit: "T1",
  verdict: "accept",
  notes: ["The index leads with location, as NFR2 asks."],
});
export const REVIEW_T2 = json({
  unit: "T2",
  verdict: "accept",
  notes: ["Reads through the service; ordered by sku as the AC says."],
});
export const REVIEW_T3 = json({
  unit: "T3",
  verdict: "refactor",
  notes: ["The handler no longer needs a block: return the items directly."],
});
