import { createServer, type Server } from "node:http";
import type pg from "pg";
import { stockRecordsRepository } from "./repositories/stock-records.js";
import { createRequestHandler, stockRoutes } from "./routes/index.js";
import { stockService } from "./services/stock.js";

/** Wire the layers: repositories → services → routes. */
export function createApp(db: pg.Pool): Server {
  const handle = createRequestHandler(stockRoutes(stockService(stockRecordsRepository(db))));
  return createServer((request, response) => void handle(request, response));
}
