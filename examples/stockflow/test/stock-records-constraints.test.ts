import { afterAll, beforeAll, expect, test } from "vitest";
import { createPool } from "../src/db/pool.js";
import { unique } from "./helpers.js";

// Persistence invariants checked on the database itself, below the service's own validation.
const db = createPool();
beforeAll(async () => {
  await db.query("SELECT 1");
});
afterAll(async () => {
  await db.end();
});

const insert = (sku: string | null, location: string, quantity: number) =>
  db.query("INSERT INTO stock_records (sku, location, quantity, inventory_code) VALUES ($1, $2, $3, 'CODE')", [sku, location, quantity]);

test("the stock_records table refuses a negative quantity, a missing sku and a second row for a sku and location", async () => {
  const sku = unique("SKU");
  await expect(insert(sku, "E-05", -1)).rejects.toMatchObject({ code: "23514", constraint: "stock_records_quantity_not_negative" });
  await expect(insert(null, "E-05", 1)).rejects.toMatchObject({ code: "23502", column: "sku" });
  await insert(sku, "E-05", 1);
  await expect(insert(sku, "E-05", 2)).rejects.toMatchObject({ code: "23505", constraint: "stock_records_sku_location_key" });
});
