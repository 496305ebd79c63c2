import type { NewStockRecord, StockRecord, StockRecordsRepository } from "../repositories/stock-records.js";

/** Business rules of filing and viewing stock; no SQL and no HTTP here. */

export class ValidationError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "ValidationError";
  }
}

function requiredText(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (typeof value !== "string" || value.trim() === "") throw new ValidationError(field, "is required and must be a non-empty string");
  return value.trim();
}

/** Check a filing request field by field, naming the first field that is wrong. */
export function parseFiling(input: unknown): NewStockRecord {
  if (typeof input !== "object" || input === null) throw new ValidationError("body", "must be a JSON object");
  const fields = input as Record<string, unknown>;
  const sku = requiredText(fields, "sku");
  const location = requiredText(fields, "location");
  const quantity = fields.quantity;
  if (typeof quantity !== "number" || !Number.isInteger(quantity)) throw new ValidationError("quantity", "is required and must be a whole number");
  if (quantity < 0) throw new ValidationError("quantity", "must not be negative");
  const inventoryCode = requiredText(fields, "inventoryCode");
  return { sku, location, quantity, inventoryCode };
}

export interface LocationStockItem {
  sku: string;
  location: string;
  quantity: number;
}

export function stockService(records: StockRecordsRepository) {
  return {
    async fileStock(input: unknown): Promise<StockRecord> {
      return records.upsert(parseFiling(input));
    },

    async getStock(sku: string, location: string): Promise<StockRecord | undefined> {
      return records.find(sku, location);
    },

    /** S2: an empty location is an empty list, not an error. */
    async stockAtLocation(location: string): Promise<LocationStockItem[]> {
      const rows = await records.listAtLocation(location);
      return rows.map(({ sku, quantity }) => ({ sku, location, quantity }));
    },
  };
}

export type StockService = ReturnType<typeof stockService>;
