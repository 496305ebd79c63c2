import { run } from "probot";
import consortApp, { startDeliveryWork } from "./index.js";
import { defaultConfig } from "./config/consort-config.js";
import { EnvError, loadEnv } from "./config/env.js";
import { consortCommand } from "./cli/invocation.js";
import { ConsortOctokit } from "./github/throttle.js";
import {
  createProvider,
  ensureLocalServer,
  resolveLocalDataDir,
  stopLocalServer,
  type LocalServer,
} from "./substrate/index.js";

/**
 * Repositories without a `database` section in their consort.yml use the embedded Postgres, so
 * `npm start` brings it up (or reuses it) at boot instead of on the first webhook, and stops when
 * it cannot. It runs after the server is listening: a slow first initdb never delays the setup page.
 * CONSORT_EMBEDDED_POSTGRES=off skips it (a deployment whose repositories all use Lakebase).
 */
async function warmEmbeddedDatabase(): Promise<void> {
  if (process.env.CONSORT_EMBEDDED_POSTGRES === "off") return;
  try {
    const dataDir = resolveLocalDataDir(defaultConfig().database.local.dataDir);
    embedded = { dataDir };
    const server = await ensureLocalServer({ dataDir });
    embedded = { dataDir, server };
    const provider = await createProvider(defaultConfig().database, {
      onProgress: (message) => console.info(`[consort] embedded Postgres: ${message}`),
    });
    const root = await provider.rootBranch();
    await provider.close();
    console.info(`[consort] embedded Postgres ready: root database branch "${root}" (the default provider)`);
  } catch (error) {
    // The default provider is down, so every repository without a database section would fail
    // its checks: stop here with the reason instead of serving as if nothing happened.
    console.error(
      `[consort] embedded Postgres could not start: ${error instanceof Error ? error.message : String(error)}\n` +
        "[consort] stopping: repositories without a database section need it. When every repository uses Lakebase " +
        "or a Postgres server of its own, set CONSORT_EMBEDDED_POSTGRES=off.",
    );
    process.exit(1);
  }
}

/** The embedded server `npm start` brought up (or found running), for what Ctrl-C says about it. */
let embedded: { dataDir: string; server?: LocalServer } | undefined;

/**
 * Ctrl-C (or SIGTERM) stops what start started: the embedded Postgres this process started is
 * stopped; one it found running keeps running, and the message names it and how to stop it.
 */
async function shutDown(signal: string): Promise<void> {
  const stopHint = `stop it with \`${consortCommand("db stop")}\` (or CONSORT_DATA_DIR=${embedded?.dataDir ?? ""} ${consortCommand("db stop")})`;
  if (embedded?.server?.started) {
    console.info(
      `[consort] ${signal}: stopping the embedded Postgres this process started (data in ${embedded.dataDir})`,
    );
    const stopped = await stopLocalServer(embedded.dataDir).catch((error: Error) => {
      console.error(`[consort] could not stop the embedded Postgres: ${error.message}; ${stopHint}`);
      return false;
    });
    if (stopped) console.info("[consort] embedded Postgres stopped");
  } else if (embedded?.server) {
    console.info(
      `[consort] ${signal}: the embedded Postgres on port ${embedded.server.port} (data in ${embedded.dataDir}) was already running before this process and keeps running; ${stopHint}`,
    );
  } else if (embedded) {
    console.info(
      `[consort] ${signal}: the embedded Postgres was still starting (data in ${embedded.dataDir}); if it is running now, ${stopHint}`,
    );
  }
  process.exit(0);
}

/** `npm start`: validate the environment, then let Probot serve the app (or its setup page). */
async function main(): Promise<void> {
  try {
    loadEnv();
  } catch (error) {
    if (error instanceof EnvError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // Without a proxy URL Probot would try to create a smee.io channel; keep setup offline-safe.
  process.env.NO_SMEE_SETUP ??= "true";
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void shutDown(signal));
  // Rate limits, secondary ones included, are waited out and retried (src/github/throttle.ts).
  await run(consortApp, { Octokit: ConsortOctokit });
  void warmEmbeddedDatabase();
  // Deliveries are answered once stored; the work runs from the queue (src/queue).
  startDeliveryWork().catch((error: unknown) =>
    console.error(
      `[consort] the delivery queue could not start: ${error instanceof Error ? error.message : String(error)}\n` +
        "[consort] deliveries are refused (GitHub records them as failed) until the app's Postgres is reachable; the next start redelivers them.",
    ),
  );
}

await main();
