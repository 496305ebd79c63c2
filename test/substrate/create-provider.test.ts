import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { createProvider } from "../../src/substrate/create-provider.js";
import { stopLocalServer } from "../../src/substrate/local-server.js";
import type { PostgresBranchProvider } from "../../src/substrate/postgres-provider.js";

/**
 * The local provider surviving its server: a real `kill -9` of the embedded postmaster during a
 * fork. Its own server and data folder, never the shared test server.
 */

const dataDir = mkdtempSync(join(tmpdir(), "consort-crash-"));
chmodSync(dataDir, 0o755);
const cluster = join(dataDir, "cluster");
let provider: PostgresBranchProvider;

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The server's own admin URL, from the state file the provider keeps (a branch's URL is a least-privilege login). */
function adminUrl(database = "postgres"): string {
  const state = JSON.parse(readFileSync(join(dataDir, "server.json"), "utf8")) as {
    user: string;
    password: string;
    port: number;
  };
  return `postgresql://${encodeURIComponent(state.user)}:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/${database}`;
}

const postmasterPid = () => Number(readFileSync(join(cluster, "postmaster.pid"), "utf8").split("\n")[0]);

beforeAll(async () => {
  const config = ConsortConfig.parse({ database: { provider: "local" } });
  provider = (await createProvider(config.database, { env: { CONSORT_DATA_DIR: dataDir } })) as PostgresBranchProvider;
  const root = await provider.rootBranch();
  // Enough data that a copy takes a moment, so the kill lands in the middle of one.
  await sql(
    await provider.connectionUrl(root),
    "CREATE TABLE items AS SELECT g AS id, md5(g::text) || repeat('x', 200) AS note FROM generate_series(1, 150000) g",
  );
  await provider.refreshBase(root);
}, 120_000);

afterAll(async () => {
  await provider?.close().catch(() => {});
  await stopLocalServer(dataDir).catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the local provider when its server is killed mid-fork", () => {
  it("fails that fork clearly, keeps the process alive, restarts the server and leaves nothing half-made", async () => {
    const root = await provider.rootBranch();
    const watcher = new pg.Client({ connectionString: adminUrl() });
    watcher.on("error", () => {});
    await watcher.connect();
    const oldPort = new URL(await provider.connectionUrl(root)).port;
    const fork = provider.createBranch("crash-track").then(
      () => undefined,
      (error: unknown) => error,
    );
    // Kill the postmaster as soon as a copy runs.
    for (let i = 0; i < 2000; i++) {
      const copying = await watcher.query(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = 'consort-substrate' AND query LIKE 'CREATE DATABASE%' AND state = 'active'",
      );
      if (copying.rowCount) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    process.kill(postmasterPid(), "SIGKILL");
    const error = await fork;
    await watcher.end().catch(() => {});
    expect(error).toMatchObject({ code: expect.stringMatching(/^SERVER_/) });

    // The same provider object recovers: the server is restarted (on a new port) once the old one's processes are gone.
    const started = Date.now();
    const branches = await provider.listBranches();
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(branches.map((b) => b.name)).toEqual([root]);
    expect(new URL(await provider.connectionUrl(root)).port).not.toBe(oldPort);

    // Nothing half-made is kept: whatever the killed fork left is reaped.
    await provider.reapOrphans();
    const names = (await sql(adminUrl(), "SELECT datname FROM pg_database WHERE datname LIKE 'consort\\_%'")).rows.map(
      (r: { datname: string }) => r.datname,
    );
    expect(names.filter((n) => n.startsWith("consort_new_"))).toEqual([]);
    expect(names.filter((n) => n.startsWith("consort_base_"))).toHaveLength(1); // the root's own

    // And forking works again.
    await expect(provider.createBranch("crash-track")).resolves.toMatchObject({ name: "crash-track" });
  }, 120_000);
});
