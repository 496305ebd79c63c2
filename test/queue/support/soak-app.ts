import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Probot } from "probot";
import { z } from "zod";
import { route } from "../../../src/app/wire.js";
import type { AppServices } from "../../../src/app/services.js";
import type { GitHubClient } from "../../../src/github/client.js";
import { ConsortOctokit } from "../../../src/github/throttle.js";
import { openDeliveryQueue } from "../../../src/queue/deliveries.js";
import { redeliverFailed } from "../../../src/queue/redeliver.js";
import { createStateStore, emptyTrackState } from "../../../src/state/index.js";
import { handleQueued } from "../../../src/app/wire.js";
import { TEST_APP_ID, TEST_WEBHOOK_SECRET, testPrivateKey } from "../../helpers/github.js";

/**
 * One app process of the soak (test/queue/support/soak.ts): Probot's webhook server with the
 * app's route (signature checked, delivery stored in the shared queue, answered), the queue's
 * workers, and on boot the redelivery of failed deliveries, as `npm start` runs them. Its GitHub
 * is the soak's double, over HTTP at SOAK_GITHUB_URL. A delivery's work is what the app's
 * handlers do to GitHub, kept to its two kinds of write: a check run found by head and name
 * before it is created, and the track's state file on consort/state (compare-and-swap, delivery
 * ids recorded). It prints "listening <port>" once it serves.
 */

const KEY = "soak-state-key-0123456789abcdefghijklmnop";
const env = z
  .object({ SOAK_DATABASE_URL: z.string().min(1), SOAK_GITHUB_URL: z.url(), SOAK_WORKERS: z.coerce.number().int() })
  .parse(process.env);

const Push = z
  .object({
    after: z.string().regex(/^[0-9a-f]{40}$/),
    repository: z.object({ name: z.string(), owner: z.object({ login: z.string() }).loose() }).loose(),
    track: z.string().min(1),
  })
  .loose();

const probot = new Probot({
  appId: TEST_APP_ID,
  privateKey: testPrivateKey(),
  secret: TEST_WEBHOOK_SECRET,
  baseUrl: env.SOAK_GITHUB_URL,
  logLevel: "fatal",
  // The app's own client: plugin-retry and the throttling that waits out GitHub's limits.
  Octokit: ConsortOctokit.defaults((o: Record<string, unknown>) => ({
    ...o,
    retry: { ...(o.retry as object), retryAfterBaseValue: 10 },
    throttle: { ...(o.throttle as object), retryAfterBaseValue: 10 },
  })),
});

const queue = await openDeliveryQueue({
  url: env.SOAK_DATABASE_URL,
  concurrency: env.SOAK_WORKERS,
  sweepMs: 500,
  pollMs: 100,
  retryDelayMs: () => 50,
});

const services = {
  appId: TEST_APP_ID,
  enqueue: (delivery: { id: string; name: string; payload: Record<string, unknown> }) => queue.enqueue(delivery),
} as unknown as AppServices;

await probot.load((app: Probot) =>
  route(app, services, "push", Push, async ({ octokit, payload, deliveryId }) => {
    const client = octokit as unknown as GitHubClient;
    const owner = payload.repository.owner.login;
    const repo = payload.repository.name;
    const name = `soak/${deliveryId}`;
    // Found by head and name first: a delivery run again after a kill writes no second check run.
    const found = await client.request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
      owner,
      repo,
      ref: payload.after,
      check_name: name,
    });
    if ((found.data as { total_count: number }).total_count === 0)
      await client.request("POST /repos/{owner}/{repo}/check-runs", {
        owner,
        repo,
        name,
        head_sha: payload.after,
        status: "completed",
        conclusion: "success",
      });
    const store = createStateStore({ octokit: client, owner, repo, key: KEY });
    await store.update(payload.track, deliveryId, (current) => {
      const state =
        current ??
        emptyTrackState({
          trackId: payload.track,
          repository: `${owner}/${repo}`,
          branch: payload.track,
          snapshot: { value: "soak", context: { applied: [] } },
          now: new Date(),
        });
      const applied = (state.snapshot as { context: { applied: string[] } }).context.applied;
      return { ...state, snapshot: { value: "soak", context: { applied: [...applied, deliveryId] } } };
    });
  }),
);

const middleware = await probot.getNodeMiddleware();
const server = createServer((req, res) => void middleware(req, res, () => res.writeHead(404).end()));
await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
await queue.work((delivery) => handleQueued(probot, delivery));
// As `npm start` does once it serves: redeliver what failed before it could be stored.
await redeliverFailed((await probot.auth()) as unknown as GitHubClient, queue);
process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
