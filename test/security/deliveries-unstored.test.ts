import { createHmac, randomUUID } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createConsortApp } from "../../src/index.js";
import { openDeliveryQueue, type DeliveryQueue } from "../../src/queue/deliveries.js";
import { createTestProbot, TEST_APP_ID, TEST_WEBHOOK_SECRET } from "../helpers/github.js";
import { freshDatabase } from "../helpers/postgres.js";
import { webhookPayload } from "../helpers/webhooks.js";

/**
 * A delivery the app did not store must not be acknowledged: GitHub never redelivers a delivery
 * it recorded as answered, so a 202 for a delivery that is not in the queue is a delivery lost.
 * When the app's Postgres is down, or up but not answering, the webhook answers 500 (GitHub
 * records a failed delivery, which the next boot's redelivery picks up), well before the
 * middleware's 9 s "still processing" 202. Real HTTP with a real signature, real Postgres.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

const services = (
  enqueue: (delivery: { id: string; name: string; payload: Record<string, unknown> }) => Promise<unknown>,
) => ({
  appId: TEST_APP_ID,
  stateKey: "k".repeat(40),
  clock: () => new Date(),
  openProvider: async () => {
    throw new Error("no database in this test");
  },
  enqueue: async (delivery: { id: string; name: string; payload: Record<string, unknown> }) =>
    void (await enqueue(delivery)),
});

/** The app's webhook route served over HTTP, as `npm start` serves it. */
async function serve(enqueue: Parameters<typeof services>[0]): Promise<string> {
  const probot = createTestProbot();
  await probot.load(createConsortApp(services(enqueue)));
  const middleware = await probot.getNodeMiddleware();
  const server: Server = createServer((req, res) => void middleware(req, res, () => res.writeHead(404).end()));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  cleanups.push(() => new Promise<void>((closed) => server.close(() => closed())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
}

/** POST a signed delivery as GitHub does; the status and how long the answer took. */
function post(url: string, id: string): Promise<{ status: number; ms: number; body: string }> {
  const body = JSON.stringify(webhookPayload("installation", "created"));
  const signature = `sha256=${createHmac("sha256", TEST_WEBHOOK_SECRET).update(body).digest("hex")}`;
  const started = performance.now();
  return new Promise((answered, failed) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "installation",
          "x-github-delivery": id,
          "x-hub-signature-256": signature,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => answered({ status: res.statusCode ?? 0, ms: performance.now() - started, body: text }));
      },
    );
    req.on("error", failed);
    req.end(body);
  });
}

describe("a delivery the app could not store", () => {
  it("is answered 500 when the app's Postgres is down, and nothing is acknowledged", async () => {
    // Nothing listens on this port: Postgres is down (as index.ts opens the queue: lazily, per delivery).
    const probe = createServer();
    await new Promise<void>((listening) => probe.listen(0, "127.0.0.1", listening));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((closed) => probe.close(() => closed()));
    const url = await serve(async (delivery) => {
      const queue = await openDeliveryQueue({ url: `postgres://postgres@127.0.0.1:${port}/consort_app` });
      try {
        return await queue.enqueue(delivery);
      } finally {
        await queue.stop();
      }
    });
    const answer = await post(url, randomUUID());
    expect(answer.status).toBe(500);
  });

  it("is answered 500 within the deadline, never 202, when the app's Postgres is up but does not answer", async () => {
    // Attack: a Postgres that holds the insert (here a lock on the deliveries table) used to keep
    // the route waiting until the middleware answered 202 "still processing" at 9 s; the
    // delivery was then acknowledged without being stored, and GitHub would never send it again.
    const db = await freshDatabase("unstored");
    drops.push(db.drop);
    const queue: DeliveryQueue = await openDeliveryQueue({ url: db.url });
    cleanups.push(() => queue.stop());
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE public.consort_deliveries IN ACCESS EXCLUSIVE MODE");
    cleanups.push(async () => {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
    });
    const url = await serve((delivery) => queue.enqueue(delivery));
    const id = randomUUID();
    const answer = await post(url, id);
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(/could not store delivery .* in 5 s/);
    expect(answer.ms).toBeLessThan(9000);
  }, 30_000);
});
