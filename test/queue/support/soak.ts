import { spawn, type ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Octokit } from "@octokit/rest";
import pg from "pg";
import type { GitHubClient } from "../../../src/github/client.js";
import { createStateStore } from "../../../src/state/index.js";
import { EXAMPLE } from "../../e2e/support/feature.js";
import { GitRepo } from "../../e2e/support/git-repo.js";
import { GitHubWorld } from "../../e2e/support/github-world.js";
import { TEST_WEBHOOK_SECRET } from "../../helpers/github.js";

/**
 * A busy day for the app's deliveries (issue #33), shared by `npm run bench:soak` and the suite's
 * short version: GitHub is the repositories' doubles (one GitHubWorld each, served to the app
 * processes over HTTP); two app processes (soak-app.ts) share one queue; deliveries are POSTed
 * to them signed, as GitHub sends them, some twice and some out of order; app processes are
 * killed (SIGKILL) at random points and started again, and GitHub's record of the deliveries
 * that failed drives their redelivery. At the end every track's state must hold each of its
 * deliveries once, in the order the queue stored them (a serial replay), and each delivery's
 * check run must exist once.
 */

const APP = fileURLToPath(new URL("./soak-app.ts", import.meta.url));
const KEY = "soak-state-key-0123456789abcdefghijklmnop";

export interface SoakOptions {
  /** The app's Postgres (the queue's database). */
  databaseUrl: string;
  deliveries: number;
  repositories: number;
  tracks: number;
  /** App processes killed and started again while the deliveries are worked on. */
  kills: number;
  /** Queue workers per app process. */
  workers?: number;
  /** How long the work may take before the soak gives up and counts what is missing as lost (ms). */
  deadlineMs?: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  /** Deliveries whose effect is missing from their track's state or check runs. */
  lost: number;
  /** Deliveries whose effect was applied or written more than once. */
  doubled: number;
  /** Tracks whose state does not replay their deliveries in the order the queue stored them. */
  misordered: number;
  deadLetters: number;
  kills: number;
  /** POSTs answered 2xx, and the ms each took (request to response, over HTTP, signature checked). */
  acks: number[];
  /** POSTs that failed (a process killed under them): GitHub records them, the next boot redelivers them. */
  failedPosts: number;
  redelivered: number;
  sent: number;
  minutes: number;
  /** What the GitHub doubles found wrong in the app's requests (their REST contract, their limits). */
  violations: string[];
}

interface Delivery {
  guid: string;
  repository: number;
  track: string;
  body: string;
}

/** The doubles over HTTP: each request goes to the world of its repository (or installation). */
function serveWorlds(worlds: GitHubWorld[]): Promise<{ server: Server; url: string }> {
  const worldOf = (path: string) => {
    const repo = /^\/repos\/[^/]+\/repo-(\d+)(\/|$)/.exec(path);
    const installation = /^\/app\/installations\/(\d+)\//.exec(path);
    const index = repo ? Number(repo[1]) : installation ? Number(installation[1]) - 100 : 0;
    return worlds[index] ?? worlds[0]!;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const world = worldOf(req.url ?? "/");
      const text = Buffer.concat(chunks).toString();
      const [status, body, headers] = world.mock.handle(
        req.method ?? "GET",
        req.url ?? "/",
        text,
        req.headers as never,
      );
      const payload = Buffer.isBuffer(body)
        ? body
        : Buffer.from(typeof body === "string" ? body : JSON.stringify(body ?? ""));
      res.writeHead(status, {
        "content-type": "application/json",
        ...headers,
        "content-length": String(payload.length),
      });
      res.end(payload);
    });
  });
  return new Promise((listening) =>
    server.listen(0, "127.0.0.1", () =>
      listening({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

/** POST a delivery as GitHub does; the status (0: no answer) and the ms it took. */
function post(port: number, event: string, delivery: Delivery): Promise<{ status: number; ms: number }> {
  const signature = `sha256=${createHmac("sha256", TEST_WEBHOOK_SECRET).update(delivery.body).digest("hex")}`;
  const started = performance.now();
  return new Promise((answered) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path: "/api/github/webhooks", method: "POST", agent: false },
      (res) => {
        res.resume();
        res.on("end", () => answered({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.setHeader("content-type", "application/json");
    req.setHeader("x-github-event", event);
    req.setHeader("x-github-delivery", delivery.guid);
    req.setHeader("x-hub-signature-256", signature);
    req.on("error", () => answered({ status: 0, ms: performance.now() - started }));
    req.setTimeout(10_000, () => req.destroy());
    req.end(delivery.body);
  });
}

interface AppProcess {
  child: ChildProcess;
  port: number | undefined;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => {});
  const worlds = Array.from(
    { length: options.repositories },
    (_, r) =>
      new GitHubWorld(GitRepo.fromDirectory(EXAMPLE, { leaveOut: ["test"] }), {
        owner: "acme",
        repo: `repo-${r}`,
        repositoryId: 5000 + r,
        installationId: 100 + r,
        apiUrl: `https://repo${r}.api.github.com`,
      }),
  );
  const github = await serveWorlds(worlds);
  log(`GitHub doubles at ${github.url}`);
  const db = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  const apps: AppProcess[] = [];
  let stopping = false;

  const start = (slot: number): Promise<void> => {
    const child = spawn(process.execPath, ["--import", "tsx", APP], {
      env: {
        ...process.env,
        SOAK_DATABASE_URL: options.databaseUrl,
        SOAK_GITHUB_URL: github.url,
        SOAK_WORKERS: String(options.workers ?? 4),
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const app: AppProcess = { child, port: undefined };
    apps[slot] = app;
    return new Promise((ready, failed) => {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const port = /listening (\d+)/.exec(output)?.[1];
        if (port && app.port === undefined) {
          app.port = Number(port);
          ready();
        }
      });
      child.once("exit", (code) => {
        app.port = undefined;
        if (!/listening/.test(output) && !stopping)
          failed(new Error(`a soak app process exited (${code}) before it served`));
      });
    });
  };

  // The deliveries: each track's pushes, spread over the repositories; 10 % out of order, 10 % twice.
  const planned: Delivery[] = Array.from({ length: options.deliveries }, (_, i) => {
    const track = i % options.tracks;
    const r = track % options.repositories;
    const world = worlds[r]!;
    const payload = {
      ref: "refs/heads/main",
      after: world.git.branchHead(world.defaultBranch)!,
      repository: world.repositoryPayload(),
      installation: { id: world.installationId },
      track: `track-${track}`,
    };
    return { guid: `soak-${i}`, repository: r, track: `track-${track}`, body: JSON.stringify(payload) };
  });
  const sent = [...planned];
  for (let i = 0; i + 1 < sent.length; i += 10) [sent[i], sent[i + 1]] = [sent[i + 1]!, sent[i]!];
  for (let i = 5; i < planned.length; i += 10) sent.splice(Math.min(sent.length, i + 7), 0, planned[i]!);

  const acks: number[] = [];
  let failedPosts = 0;
  let nextApp = 0;
  /** Deliver as GitHub does, to a serving process (a load balancer in front of the replicas). */
  async function deliver(delivery: Delivery): Promise<void> {
    let app = apps[nextApp++ % apps.length]!;
    if (app.port === undefined) app = apps.find((a) => a.port !== undefined) ?? app;
    const answer = app.port === undefined ? { status: 0, ms: 0 } : await post(app.port, "push", delivery);
    worlds[0]!.recordDelivery({ guid: delivery.guid, event: "push", statusCode: answer.status });
    if (answer.status >= 200 && answer.status < 300) acks.push(answer.ms);
    else failedPosts += 1;
  }

  const started = performance.now();
  let kills = 0;
  let redelivered = 0;
  try {
    await Promise.all([start(0), start(1)]);
    log(`2 app processes serving; sending ${sent.length} deliveries for ${options.deliveries}`);
    // One sender per repository, in order; the repositories' senders run side by side.
    const senders = Array.from({ length: options.repositories }, async (_, r) => {
      for (const delivery of sent.filter((d) => d.repository === r)) await deliver(delivery);
    });
    const sending = Promise.all(senders);

    // GitHub's side of a redelivery: what a booting app asked for is sent again, same guid.
    const byGuid = new Map(planned.map((d) => [d.guid, d]));
    let asked = 0;
    const redeliver = async () => {
      const redeliveries = worlds[0]!.redeliveries;
      while (asked < redeliveries.length) {
        const guid = redeliveries[asked++]!;
        redelivered += 1;
        await deliver(byGuid.get(guid)!);
      }
    };

    const remaining = async () =>
      Number(
        (
          await db.query(
            "SELECT (SELECT count(*) FROM graphile_worker.jobs) + (SELECT count(*) FROM unnest($1::text[]) AS g(id) WHERE id NOT IN (SELECT id FROM public.consort_deliveries)) AS n",
            [planned.map((d) => d.guid)],
          )
        ).rows[0].n,
      );
    const deadline = Date.now() + (options.deadlineMs ?? 10 * 60_000);
    let sendingDone = false;
    void sending.then(() => (sendingDone = true));
    while (Date.now() < deadline) {
      await redeliver();
      if (kills < options.kills) {
        // A kill at a random point of the work: wait a little, kill one process, start it again.
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 800));
        const slot = Math.floor(Math.random() * 2);
        const victim = apps[slot]!;
        if (victim.port !== undefined) {
          victim.child.kill("SIGKILL");
          await new Promise((exited) => victim.child.once("exit", exited));
          kills += 1;
          log(`killed app process ${slot} (${kills} of ${options.kills})`);
          await start(slot);
        }
        continue;
      }
      if (sendingDone && (await remaining()) === 0) {
        await redeliver();
        if ((await remaining()) === 0) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await sending;
    const minutes = (performance.now() - started) / 60_000;
    const unfinished = await remaining();
    if (unfinished > 0) log(`${unfinished} deliveries unstored or unfinished at the deadline`);

    // nock sees the soak's own requests (its POSTs to the app processes, its reads below) as
    // unmatched GitHub calls: only what the app asked of GitHub counts.
    const violations = worlds
      .flatMap((w) => w.mock.violations)
      .filter((v) => !v.startsWith("POST /api/github/webhooks:"));
    // What GitHub holds now: each track's state as the app's store reads it, and the check runs.
    const stored = await db.query<{ id: string }>(
      "SELECT id FROM public.consort_deliveries WHERE id = ANY($1::text[]) ORDER BY received_at, id",
      [planned.map((d) => d.guid)],
    );
    const arrival = stored.rows.map((row) => row.id);
    const byTrack = new Map<string, string[]>();
    for (const guid of arrival) {
      const track = byGuid.get(guid)!.track;
      byTrack.set(track, [...(byTrack.get(track) ?? []), guid]);
    }
    let lost = 0;
    let doubled = 0;
    let misordered = 0;
    for (const [r, world] of worlds.entries()) {
      const octokit = new Octokit({ baseUrl: github.url, auth: "ghs_soak", request: { retries: 0 } });
      const store = createStateStore({
        octokit: octokit as unknown as GitHubClient,
        owner: world.owner,
        repo: world.name,
        key: KEY,
      });
      const checks = new Map<string, number>();
      for (const run of world.checkRuns) checks.set(run.name, (checks.get(run.name) ?? 0) + 1);
      for (let t = r; t < options.tracks; t += options.repositories) {
        const track = `track-${t}`;
        const state = await store.read(track);
        const applied = (state?.snapshot as { context?: { applied?: string[] } } | undefined)?.context?.applied ?? [];
        const mine = planned.filter((d) => d.track === track).map((d) => d.guid);
        for (const guid of mine) {
          const times = applied.filter((id) => id === guid).length;
          const written = checks.get(`soak/${guid}`) ?? 0;
          if (times === 0 || written === 0) lost += 1;
          else if (times > 1 || written > 1) doubled += 1;
        }
        if (JSON.stringify(applied) !== JSON.stringify(byTrack.get(track) ?? [])) misordered += 1;
      }
    }
    const dead = Number((await db.query("SELECT count(*) AS n FROM public.consort_dead_deliveries")).rows[0].n);
    return {
      lost,
      doubled,
      misordered,
      deadLetters: dead,
      kills,
      acks,
      failedPosts,
      redelivered,
      sent: sent.length,
      minutes,
      violations,
    };
  } finally {
    stopping = true;
    for (const app of apps) {
      if (app.child.exitCode === null) {
        app.child.kill("SIGTERM");
        await new Promise((exited) => app.child.once("exit", exited));
      }
    }
    await db.end();
    await new Promise((closed) => github.server.close(closed));
    for (const world of worlds) {
      world.dispose();
      world.git.remove();
    }
  }
}
