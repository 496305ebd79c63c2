DROP TABLE IF EXISTS stock_records;
