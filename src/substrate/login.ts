import pg from "pg";

/** One login with `url`: connect and `SELECT 1`. Rejects with the server's message; never leaves a client open. */
export async function pgLogin(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } finally {
    await client.end().catch(() => {});
  }
}
