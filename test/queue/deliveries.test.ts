import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { GitHubError } from "../../src/github/errors.js";
import {
  deadDeliveries,
  openDeliveryQueue,
  type DeliveryQueue,
  type QueuedDelivery,
} from "../../src/queue/deliveries.js";
import { freshDatabase } from "../helpers/postgres.js";

/** The delivery queue on the real embedded Postgres: several queue "processes" share one database. */

const WORKER_PROCESS = fileURLToPath(new URL("./support/worker-process.ts", import.meta.url));

const drops: Array<() => Promise<void>> = [];
const open: DeliveryQueue[] = [];
afterEach(async () => {
  for (const queue of open.splice(0)) await queue.stop();
});
afterAll(async () => {
  for (const drop of drops) await drop();
});

async function database(): Promise<string> {
  const db = await freshDatabase("queue");
  drops.push(db.drop);
  return db.url;
}

async function queueOn(url: string, concurrency = 4): Promise<DeliveryQueue> {
  const queue = await openDeliveryQueue({ url, concurrency, sweepMs: 200, pollMs: 50 });
  open.push(queue);
  return queue;
}

const delivery = (id: string, repository: string, name = "push"): QueuedDelivery => ({
  id,
  name,
  payload: { repository: { full_name: repository } },
});

const until = async (done: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("the delivery queue", () => {
  it("runs one repository's deliveries one at a time in arrival order across processes, and repositories in parallel", async () => {
    const url = await database();
    const [a, b] = [await queueOn(url), await queueOn(url)];
    const ran: string[] = [];
    const running = new Map<string, number>();
    let mostAtOnce = 0;
    let reposAtOnce = 0;
    const handle = async (d: QueuedDelivery) => {
      const repo = (d.payload.repository as { full_name: string }).full_name;
      const now = (running.get(repo) ?? 0) + 1;
      running.set(repo, now);
      mostAtOnce = Math.max(mostAtOnce, now);
      reposAtOnce = Math.max(reposAtOnce, [...running.values()].filter((n) => n > 0).length);
      await new Promise((r) => setTimeout(r, 15));
      ran.push(d.id);
      running.set(repo, now - 1);
    };
    for (let i = 0; i < 12; i++) {
      await a.enqueue(delivery(`one-${i}`, "acme/one"));
      await b.enqueue(delivery(`two-${i}`, "acme/two"));
    }
    await Promise.all([a.work(handle), b.work(handle)]);
    await until(() => ran.length === 24);
    expect(mostAtOnce).toBe(1);
    expect(reposAtOnce).toBe(2);
    expect(ran.filter((id) => id.startsWith("one-"))).toEqual(Array.from({ length: 12 }, (_, i) => `one-${i}`));
    expect(ran.filter((id) => id.startsWith("two-"))).toEqual(Array.from({ length: 12 }, (_, i) => `two-${i}`));
  });

  it("keeps a repository's deliveries in arrival order when the first fails once: the second never overtakes it", async () => {
    // Attack: a delivery handed back for a retry used to leave its repository's queue unlocked and
    // be scheduled later, so the repository's next delivery ran first, on a state it did not follow.
    const url = await database();
    const queue = await openDeliveryQueue({ url, concurrency: 2, sweepMs: 200, pollMs: 50, retryDelayMs: () => 300 });
    open.push(queue);
    const ran: string[] = [];
    let failed = false;
    await queue.enqueue(delivery("d-1", "acme/one"));
    await queue.enqueue(delivery("d-2", "acme/one"));
    await queue.enqueue(delivery("e-1", "acme/two"));
    await queue.work(async (d) => {
      ran.push(d.id);
      if (d.id === "d-1" && !failed) {
        failed = true;
        throw Object.assign(new Error("Server Error"), { status: 502 });
      }
    });
    await until(() => ran.includes("d-2"));
    expect(ran.filter((id) => id.startsWith("d-"))).toEqual(["d-1", "d-1", "d-2"]);
    // Another repository is not held up by the wait.
    expect(ran.indexOf("e-1")).toBeLessThan(ran.lastIndexOf("d-1"));
    expect(await queue.deadLetters()).toEqual([]);
  });

  it("stores a delivery id once: GitHub's redelivery of a stored delivery adds nothing", async () => {
    const queue = await queueOn(await database());
    expect(await queue.enqueue(delivery("d-1", "acme/one"))).toBe(true);
    expect(await queue.enqueue(delivery("d-1", "acme/one"))).toBe(false);
    const ran: string[] = [];
    await queue.work(async (d) => void ran.push(d.id));
    await until(() => ran.length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await queue.enqueue(delivery("d-1", "acme/one"))).toBe(false);
    expect(ran).toEqual(["d-1"]);
  });

  it("ends a refused delivery as a dead letter at once, with GitHub's reason, and does not block its repository", async () => {
    const url = await database();
    expect(await deadDeliveries(url, "acme/one")).toEqual([]);
    const queue = await queueOn(url);
    // As the state store throws it: its own error, GitHub's answer as the cause.
    const answer = Object.assign(new Error("Repository rule violations found"), { status: 409 });
    const refusal = new Error("409 Repository rule violations found", { cause: GitHubError.from(answer) });
    const ran: string[] = [];
    await queue.enqueue(delivery("d-1", "acme/One"));
    await queue.enqueue(delivery("d-2", "acme/one"));
    await queue.work(async (d) => {
      ran.push(d.id);
      if (d.id === "d-1") throw refusal;
    });
    await until(() => ran.includes("d-2"));
    expect(ran).toEqual(["d-1", "d-2"]);
    const dead = await queue.deadLetters("acme/one");
    expect(dead).toMatchObject([
      { id: "d-1", repository: "acme/one", event: "push", attempts: 1, reason: "409 Repository rule violations found" },
    ]);
    // What `consort reconcile` shows, read from the app's database alone.
    expect(await deadDeliveries(url, "acme/One")).toEqual(dead);
    expect(await deadDeliveries(url, "acme/two")).toEqual([]);
  });

  it("runs again, at once, the delivery of a process killed mid-job, in another process", async () => {
    const url = await database();
    const first = await queueOn(url);
    await first.enqueue(delivery("d-1", "acme/one"));
    await first.enqueue(delivery("d-2", "acme/one"));
    await first.stop();
    open.splice(open.indexOf(first), 1);
    const child = spawn(process.execPath, ["--import", "tsx", WORKER_PROCESS, url], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await until(() => output.includes("started d-1"), 60_000);
    child.kill("SIGKILL");
    await new Promise((done) => child.once("exit", done));

    const survivor = await queueOn(url);
    const ran: string[] = [];
    await survivor.work(async (d) => void ran.push(d.id));
    await until(() => ran.length === 2);
    // The killed process's delivery first, then the one queued behind it: the order holds.
    expect(ran).toEqual(["d-1", "d-2"]);
  });
});
