-- S1 file stock: one row per SKU at a location (db-design.json, migration M1).
CREATE TABLE stock_records (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  sku text NOT NULL,
  location text NOT NULL,
  quantity integer NOT NULL CONSTRAINT stock_records_quantity_not_negative CHECK (quantity >= 0),
  inventory_code text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT stock_records_sku_location_key UNIQUE (sku, location)
);
