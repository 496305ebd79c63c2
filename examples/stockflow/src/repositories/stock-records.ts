import type pg from "pg";

/** The only module that speaks SQL to `stock_records`. */

export interface StockRecord {
  id: string;
  sku: string;
  location: string;
  quantity: number;
  inventoryCode: string;
  createdAt: string;
  updatedAt: string;
}

export interface NewStockRecord {
  sku: string;
  location: string;
  quantity: number;
  inventoryCode: string;
}

interface Row {
  id: string;
  sku: string;
  location: string;
  quantity: number;
  inventory_code: string;
  created_at: Date;
  updated_at: Date;
}

const toRecord = (row: Row): StockRecord => ({
  id: row.id,
  sku: row.sku,
  location: row.location,
  quantity: row.quantity,
  inventoryCode: row.inventory_code,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const COLUMNS = "id, sku, location, quantity, inventory_code, created_at, updated_at";

export function stockRecordsRepository(db: pg.Pool) {
  return {
    /** One statement, so a repeat filing of a (sku, location) pair updates in place: last write wins, created_at kept. */
    async upsert(record: NewStockRecord): Promise<StockRecord> {
      const { rows } = await db.query<Row>(
        `INSERT INTO stock_records (sku, location, quantity, inventory_code)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (sku, location)
         DO UPDATE SET quantity = EXCLUDED.quantity, inventory_code = EXCLUDED.inventory_code, updated_at = now()
         RETURNING ${COLUMNS}`,
        [record.sku, record.location, record.quantity, record.inventoryCode],
      );
      return toRecord(rows[0]!);
    },

    async find(sku: string, location: string): Promise<StockRecord | undefined> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM stock_records WHERE sku = $1 AND location = $2`, [sku, location]);
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    async listAtLocation(location: string): Promise<StockRecord[]> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM stock_records WHERE location = $1 ORDER BY sku`, [location]);
      return rows.map(toRecord);
    },
  };
}

export type StockRecordsRepository = ReturnType<typeof stockRecordsRepository>;
