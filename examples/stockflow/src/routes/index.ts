import type { IncomingMessage, ServerResponse } from "node:http";
import { ValidationError, type StockService } from "../services/stock.js";

/** HTTP boundary: parse the request, call a service, shape the response. Never touches the database. */

type Handler = (request: IncomingMessage, params: string[]) => Promise<{ status: number; body: unknown }>;

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError("body", "is not valid JSON");
  }
}

export function stockRoutes(stock: StockService): Route[] {
  return [
    {
      method: "POST",
      pattern: /^\/stock$/,
      handler: async (request) => ({ status: 201, body: await stock.fileStock(await readJson(request)) }),
    },
    {
      method: "GET",
      pattern: /^\/stock\/([^/]+)\/([^/]+)$/,
      handler: async (_request, [sku, location]) => {
        const record = await stock.getStock(sku!, location!);
        return record ? { status: 200, body: record } : { status: 404, body: { error: `no stock for ${sku} at ${location}` } };
      },
    },
    {
      method: "GET",
      pattern: /^\/locations\/([^/]+)\/stock$/,
      handler: async (_request, [location]) => ({ status: 200, body: { items: await stock.stockAtLocation(location!) } }),
    },
  ];
}

export function createRequestHandler(routes: Route[]) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    let result: { status: number; body: unknown };
    try {
      const route = routes.find((r) => r.method === request.method && r.pattern.test(path));
      const params = route ? (route.pattern.exec(path) ?? []).slice(1).map((p) => decodeURIComponent(p)) : [];
      result = route ? await route.handler(request, params) : { status: 404, body: { error: `no route for ${request.method} ${path}` } };
    } catch (error) {
      result =
        error instanceof ValidationError
          ? { status: 400, body: { error: error.message, field: error.field } }
          : { status: 500, body: { error: "internal error" } };
    }
    response.writeHead(result.status, { "content-type": "application/json" });
    response.end(JSON.stringify(result.body));
  };
}
