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

test("stock by location lists each sku at the location with its quantity", async () => {
  const location = unique("LOC");
  await postJson(`${app.baseUrl}/stock`, { sku: "SKU-B", location, quantity: 4, inventoryCode: "B" });
  await postJson(`${app.baseUrl}/stock`, { sku: "SKU-A", location, quantity: 7, inventoryCode: "A" });
  const response = await fetch(`${app.baseUrl}/locations/${location}/stock`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({
    items: [
      { sku: "SKU-A", location, quantity: 7 },
      { sku: "SKU-B", location, quantity: 4 },
    ],
  });
});

test("a location with no stock returns an empty list with success", async () => {
  const response = await fetch(`${app.baseUrl}/locations/${unique("EMPTY")}/stock`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ items: [] });
});
