import pg from "pg";

/** The one place the connection comes from: DATABASE_URL (a Consort cycle sets it to a throwaway branch). */
export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set: point it at the StockFlow database (a Consort cycle sets it for you)");
  return url;
}

export function createPool(url: string = databaseUrl()): pg.Pool {
  return new pg.Pool({ connectionString: url, max: 5 });
}
