import { run } from "probot";
import consortApp from "./index.js";
import { EnvError, loadEnv } from "./config/env.js";

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
  await run(consortApp);
}

await main();
