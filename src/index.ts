import type { Probot } from "probot";
import { loadEnv } from "./config/env.js";
import type { AppServices } from "./app/services.js";
import { route } from "./app/wire.js";
import { createProvider } from "./substrate/create-provider.js";
import { handleCheckRun } from "./handlers/check-run.js";
import { handleCreate } from "./handlers/create.js";
import { handleDelete, handlePullRequestClosed } from "./handlers/delete.js";
import { handleInstallation } from "./handlers/installation.js";
import { handlePullRequestUpdated } from "./handlers/pull-request.js";
import { handlePush } from "./handlers/push.js";
import { handleReview } from "./handlers/review.js";
import { handleWorkflowRun } from "./handlers/workflow-run.js";
import {
  CheckRunPayload,
  CreatePayload,
  DeletePayload,
  InstallationPayload,
  InstallationRepositoriesPayload,
  PullRequestPayload,
  PushPayload,
  ReviewPayload,
  WorkflowRunPayload,
} from "./handlers/payloads.js";

/**
 * The Probot app. This file only wires webhook events to handler modules; each handler
 * parses its payload, asks the pure orchestrator what to do, and runs the effects.
 */
export function createConsortApp(services: AppServices): (app: Probot) => void {
  return (app) => {
    route(app, services, "create", CreatePayload, handleCreate);
    route(app, services, "delete", DeletePayload, handleDelete);
    route(app, services, "push", PushPayload, handlePush);
    route(
      app,
      services,
      ["pull_request.opened", "pull_request.reopened", "pull_request.synchronize"],
      PullRequestPayload,
      handlePullRequestUpdated,
    );
    route(app, services, "pull_request.closed", PullRequestPayload, handlePullRequestClosed);
    route(
      app,
      services,
      ["pull_request_review.submitted", "pull_request_review.dismissed"],
      ReviewPayload,
      handleReview,
    );
    route(app, services, ["check_run.requested_action", "check_run.rerequested"], CheckRunPayload, handleCheckRun);
    route(app, services, "workflow_run.completed", WorkflowRunPayload, handleWorkflowRun);
    route(
      app,
      services,
      ["installation.created", "installation.new_permissions_accepted"],
      InstallationPayload,
      handleInstallation,
    );
    route(app, services, "installation_repositories.added", InstallationRepositoriesPayload, handleInstallation);
    app.log.info("Consort for GitHub loaded");
  };
}

export default function consortApp(app: Probot): void {
  createConsortApp(servicesFromEnv())(app);
}

/** The app's services from its validated environment. */
export function servicesFromEnv(): AppServices {
  const env = loadEnv();
  return {
    appId: Number(env.APP_ID ?? 0),
    stateKey: env.CONSORT_STATE_KEY ?? "",
    clock: () => new Date(),
    openProvider: (database) => createProvider(database),
    stateSequences: new Map(),
  };
}
