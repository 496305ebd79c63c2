import type { ApplicationFunctionOptions, Probot } from "probot";
import { BoardChanges } from "./board/app-source.js";
import { boardRoutes } from "./board/mount.js";
import type { GitHubClient } from "./github/client.js";
import { loadEnv } from "./config/env.js";
import { appLoginOnce } from "./github/app-login.js";
import type { AppServices } from "./app/services.js";
import { handleQueued, route } from "./app/wire.js";
import { appStoreOnce } from "./app-store/app-store.js";
import { openDeliveryQueue, type DeliveryQueue } from "./queue/deliveries.js";
import { redeliverFailed } from "./queue/redeliver.js";
import { seenSequencesIn } from "./state/index.js";
import { createProvider } from "./substrate/index.js";
import { handleCheckRun } from "./handlers/check-run.js";
import { handleCheckSuite } from "./handlers/check-suite.js";
import { branchOfRef, reportingFailuresOf } from "./engine/delivery.js";
import { handleCreate } from "./handlers/create.js";
import { handleDelete, handlePullRequestClosed } from "./handlers/delete.js";
import { handleInstallation } from "./handlers/installation.js";
import { handleMergeGroup, handleMergeGroupDestroyed } from "./handlers/merge-group.js";
import { handlePullRequestUpdated } from "./handlers/pull-request.js";
import { handlePush } from "./handlers/push.js";
import { handleReview } from "./handlers/review.js";
import { handleWorkflowRun } from "./handlers/workflow-run.js";
import {
  CheckRunPayload,
  CheckSuitePayload,
  CreatePayload,
  DeletePayload,
  InstallationPayload,
  InstallationRepositoriesPayload,
  MergeGroupPayload,
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
    route(
      app,
      services,
      "push",
      PushPayload,
      reportingFailuresOf(handlePush, (p) =>
        p.deleted ? undefined : { branch: branchOfRef(p.ref), headSha: p.after },
      ),
    );
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
    route(
      app,
      services,
      ["check_run.requested_action", "check_run.rerequested"],
      CheckRunPayload,
      reportingFailuresOf(handleCheckRun, (p) =>
        p.check_run.app?.id === services.appId
          ? { branch: p.check_run.check_suite?.head_branch ?? undefined, headSha: p.check_run.head_sha }
          : undefined,
      ),
    );
    route(
      app,
      services,
      "check_suite.rerequested",
      CheckSuitePayload,
      reportingFailuresOf(handleCheckSuite, (p) =>
        p.check_suite.app?.id === services.appId
          ? { branch: p.check_suite.head_branch ?? undefined, headSha: p.check_suite.head_sha }
          : undefined,
      ),
    );
    route(app, services, "workflow_run.completed", WorkflowRunPayload, handleWorkflowRun);
    route(app, services, "merge_group.checks_requested", MergeGroupPayload, handleMergeGroup);
    route(app, services, "merge_group.destroyed", MergeGroupPayload, handleMergeGroupDestroyed);
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

export default function consortApp(app: Probot, options?: ApplicationFunctionOptions): void {
  const changes = new BoardChanges();
  const queue = process.env.CONSORT_QUEUE === "off" ? undefined : deliveryQueueOnce(app);
  createConsortApp({
    ...servicesFromEnv(),
    appLogin: appLoginOnce(async () => (await (await app.auth()).request("GET /app")).data),
    onStateWritten: (repository) => changes.notify(repository),
    // Deliveries are stored and answered; `startDeliveryWork` handles them (CONSORT_QUEUE=off: inline).
    ...(queue ? { enqueue: async (delivery) => (await queue()).enqueue(delivery) } : {}),
  })(app);
  if (queue) deliveries = { app, queue };
  // The board under /consort, in the same server (src/board).
  options?.addHandler(
    boardRoutes({
      env: loadEnv(),
      changes,
      installationClient: async (id) => (await app.auth(id)) as unknown as GitHubClient,
      log: app.log,
    }),
  );
}

/** The app `npm start` serves and its delivery queue, for `startDeliveryWork` (one app per process). */
let deliveries: { app: Probot; queue: () => Promise<DeliveryQueue> } | undefined;

/** The delivery queue on the app's own database, opened on first use; a failed open is tried again next time. */
function deliveryQueueOnce(app: Probot): () => Promise<DeliveryQueue> {
  const store = appStoreOnce({ ...loadEnv(), CONSORT_EMBEDDED_POSTGRES: process.env.CONSORT_EMBEDDED_POSTGRES });
  let opening: Promise<DeliveryQueue> | undefined;
  return () => {
    opening ??= store()
      .then(({ url }) => openDeliveryQueue({ url, log: app.log }))
      .catch((error: unknown) => {
        opening = undefined;
        throw error;
      });
    return opening;
  };
}

/**
 * `npm start`, once the server listens: work on the delivery queue, then ask GitHub to redeliver
 * the recent deliveries that failed before the app could store them (a crash, Postgres down).
 */
export async function startDeliveryWork(): Promise<void> {
  if (!deliveries) return;
  const { app, queue } = deliveries;
  const opened = await queue();
  await opened.work((delivery) => handleQueued(app, delivery));
  const asked = await redeliverFailed((await app.auth()) as unknown as GitHubClient, opened);
  if (asked.length > 0)
    app.log.info(`asked GitHub to redeliver ${asked.length} delivery(ies) that failed: ${asked.join(", ")}`);
}

/** The app's services from its validated environment. */
export function servicesFromEnv(): AppServices {
  const env = loadEnv();
  return {
    appId: Number(env.APP_ID ?? 0),
    stateKey: env.CONSORT_STATE_KEY ?? "",
    previousStateKeys: env.CONSORT_STATE_KEYS_PREVIOUS,
    clock: () => new Date(),
    openProvider: (database) => createProvider(database),
    stateSequences: new Map(),
    // Versions seen are kept in the app's own database, and consort/state must keep its ruleset (issue #30).
    seenSequences: seenSequencesIn(
      appStoreOnce({ ...env, CONSORT_EMBEDDED_POSTGRES: process.env.CONSORT_EMBEDDED_POSTGRES }),
    ),
    protectedStateBranch: true,
    stateBlobs: new Map(),
    stickyComments: new Map(),
    configReads: new Map(),
    commitTexts: new Map(),
  };
}
