import type { Probot } from "probot";
import { loadEnv } from "./config/env.js";
import type { AppServices } from "./app/services.js";
import { route } from "./app/wire.js";
import { handleInstallation } from "./handlers/installation.js";
import { InstallationPayload, InstallationRepositoriesPayload } from "./handlers/payloads.js";

/**
 * The Probot app. This file only wires webhook events to handler modules; each handler
 * parses its payload, asks the pure orchestrator what to do, and runs the effects.
 */
export function createConsortApp(services: AppServices): (app: Probot) => void {
  return (app) => {
    route(app, services, ["installation.created", "installation.new_permissions_accepted"], InstallationPayload, handleInstallation);
    route(app, services, "installation_repositories.added", InstallationRepositoriesPayload, handleInstallation);
    app.log.info("Consort for GitHub loaded");
  };
}

export default function consortApp(app: Probot): void {
  createConsortApp(servicesFromEnv())(app);
}

function servicesFromEnv(): AppServices {
  const env = loadEnv();
  return {
    appId: Number(env.APP_ID ?? 0),
    stateKey: env.CONSORT_STATE_KEY ?? "",
    clock: () => new Date(),
    openProvider: async () => {
      throw new Error("no database provider is wired yet");
    },
  };
}
