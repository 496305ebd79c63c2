import { afterAll, beforeAll, expect, test } from "vitest";
import type pg from "pg";
import { postJson, startApp, unique } from "./helpers.js";

let app: { baseUrl: string; db: pg.Pool; stop: () => Promise<void> };
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app.stop();
});

test("filing stock persists one row with sku, location, quantity and code", async () => {
  const sku = unique("SKU");
  const response = await postJson(`${app.baseUrl}/stock`, { sku, location: "A-01", quantity: 12, inventoryCode: "A01-B7-S1" });
  expect(response.status).toBe(201);
  const { rows } = await app.db.query("SELECT sku, location, quantity, inventory_code FROM stock_records WHERE sku = $1", [sku]);
  expect(rows).toEqual([{ sku, location: "A-01", quantity: 12, inventory_code: "A01-B7-S1" }]);
});

test("a filed record reads back exactly as filed", async () => {
  const sku = unique("SKU");
  const filed = await (await postJson(`${app.baseUrl}/stock`, { sku, location: "B-02", quantity: 3, inventoryCode: "B02-X" })).json();
  const response = await fetch(`${app.baseUrl}/stock/${sku}/B-02`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual(filed);
  expect(filed).toMatchObject({ sku, location: "B-02", quantity: 3, inventoryCode: "B02-X" });
});

test("filing the same sku and location again updates the row in place", async () => {
  const sku = unique("SKU");
  const first = (await (await postJson(`${app.baseUrl}/stock`, { sku, location: "C-03", quantity: 5, inventoryCode: "C03-OLD" })).json()) as {
    id: string;
    createdAt: string;
  };
  const second = await postJson(`${app.baseUrl}/stock`, { sku, location: "C-03", quantity: 9, inventoryCode: "C03-NEW" });
  expect(second.status).toBe(201);
  const { rows } = await app.db.query("SELECT id, quantity, inventory_code, created_at FROM stock_records WHERE sku = $1", [sku]);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ id: first.id, quantity: 9, inventory_code: "C03-NEW" });
  expect(rows[0].created_at.toISOString()).toBe(first.createdAt);
});

test("a negative quantity is refused naming the field and nothing is stored", async () => {
  const sku = unique("SKU");
  const response = await postJson(`${app.baseUrl}/stock`, { sku, location: "D-04", quantity: -1, inventoryCode: "D04" });
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ field: "quantity" });
  const { rows } = await app.db.query("SELECT 1 FROM stock_records WHERE sku = $1", [sku]);
  expect(rows).toEqual([]);
});
