import { createHmac, randomUUID } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { handleQueued } from "../../src/app/wire.js";
import { createConsortApp } from "../../src/index.js";
import { openDeliveryQueue, type DeliveryQueue } from "../../src/queue/deliveries.js";
import { createTestProbot, GitHubMock, TEST_APP_ID, TEST_WEBHOOK_SECRET } from "../helpers/github.js";
import { freshDatabase } from "../helpers/postgres.js";
import { webhookPayload } from "../helpers/webhooks.js";

/**
 * The webhook route with a queue: a delivery whose signature verifies is stored and answered
 * without any GitHub call; a worker then hands it to its handler. Real signature checking
 * (Probot's verifyAndReceive, as its HTTP middleware calls it), real Postgres.
 */

const drops: Array<() => Promise<void>> = [];
let queue: DeliveryQueue | undefined;
let github: GitHubMock | undefined;
afterEach(async () => {
  await queue?.stop();
  github?.dispose();
});
afterAll(async () => {
  for (const drop of drops) await drop();
});

const sign = (body: string) => `sha256=${createHmac("sha256", TEST_WEBHOOK_SECRET).update(body).digest("hex")}`;

async function setUp() {
  const db = await freshDatabase("wire");
  drops.push(db.drop);
  queue = await openDeliveryQueue({ url: db.url, pollMs: 50 });
  github = new GitHubMock();
  const probot = createTestProbot();
  const opened = queue;
  await probot.load(
    createConsortApp({
      appId: TEST_APP_ID,
      stateKey: "k".repeat(40),
      clock: () => new Date(),
      openProvider: async () => {
        throw new Error("no database in this test");
      },
      enqueue: (delivery) => opened.enqueue(delivery),
    }),
  );
  const payload = webhookPayload("installation", "created");
  const body = JSON.stringify(payload);
  const deliver = (id: string, signature = sign(body)) =>
    probot.webhooks.verifyAndReceive({ id, name: "installation", payload: body, signature } as never);
  return { probot, queue: opened, deliver, github };
}

describe("the webhook route with a delivery queue", () => {
  it("stores a verified delivery and answers without calling GitHub; a worker then runs its handler", async () => {
    const { probot, queue, deliver, github } = await setUp();
    const id = randomUUID();
    await deliver(id);
    expect(await queue.stored([id])).toEqual(new Set([id]));
    expect(github.requests).toEqual([]);

    // The handler's first call is for the installation's token: that it comes shows the handler ran.
    github.on("POST", /^\/app\/installations\/\d+\/access_tokens$/, [404, { message: "Not Found" }], Infinity);
    await queue.work((delivery) => handleQueued(probot, delivery));
    const end = Date.now() + 20_000;
    while (github.calls("POST", /access_tokens/).length === 0 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    expect(github.calls("POST", /access_tokens/).length).toBeGreaterThan(0);
  });

  it("stores nothing when the signature does not verify", async () => {
    const { queue, deliver } = await setUp();
    const id = randomUUID();
    await expect(deliver(id, sign("another body"))).rejects.toThrow();
    expect(await queue.stored([id])).toEqual(new Set());
  });
});
