import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { openDeliveryQueue, type QueuedDelivery } from "../src/queue/deliveries.js";
import { ensureLocalServer, stopLocalServer } from "../src/substrate/local-server.js";
import { printJson, summarise } from "./lib.js";

/**
 * `npm run bench:soak`: the delivery queue under a busy day (issue #33), so far at the queue's
 * level: 1,000 deliveries over 20 tracks in 4 repositories, 10 % delivered twice, 10 % out of
 * order, two queue processes' workers sharing one Postgres. Each delivery's effect is applied to
 * its track's state once per delivery id (as the state file records them), and every run of an
 * effect is counted. Not yet here: the GitHub double with its limits, and kills of a process
 * (test/queue/deliveries.test.ts kills one mid-job). With --json the last line is
 * { soak_lost, soak_doubled, soak_deliveries_per_min, ack_ms_p99 }.
 */

const DELIVERIES = Number(process.env.SOAK_DELIVERIES ?? 1000);
const REPOSITORIES = 4;
const TRACKS = 20;

const dataDir = mkdtempSync(join(tmpdir(), "consort-soak-"));
chmodSync(dataDir, 0o755);
try {
  const server = await ensureLocalServer({ dataDir, throwaway: true });
  const url = server.url("postgres");
  const db = new pg.Pool({ connectionString: url, max: 8 });
  await db.query(`CREATE TABLE soak_tracks (track text PRIMARY KEY, applied text[] NOT NULL DEFAULT '{}')`);
  await db.query(`CREATE TABLE soak_effects (delivery text NOT NULL)`);
  for (let t = 0; t < TRACKS; t++) await db.query("INSERT INTO soak_tracks (track) VALUES ($1)", [`track-${t}`]);

  const planned: QueuedDelivery[] = Array.from({ length: DELIVERIES }, (_, i) => {
    const track = i % TRACKS;
    return {
      id: `delivery-${i}`,
      name: "push",
      payload: { repository: { full_name: `acme/repo-${track % REPOSITORIES}` }, track: `track-${track}` },
    };
  });
  // 10 % out of order (swapped with their neighbour), 10 % delivered twice.
  const sent = [...planned];
  for (let i = 0; i + 1 < sent.length; i += 10) [sent[i], sent[i + 1]] = [sent[i + 1]!, sent[i]!];
  for (let i = 5; i < planned.length; i += 10) sent.splice(Math.min(sent.length, i + 7), 0, planned[i]!);

  const handle = async (delivery: QueuedDelivery) => {
    const track = String(delivery.payload.track);
    // Idempotent on the delivery id, as the state file is: applied once, whoever runs it.
    const applied = await db.query(
      "UPDATE soak_tracks SET applied = applied || $2::text WHERE track = $1 AND NOT ($2 = ANY(applied))",
      [track, delivery.id],
    );
    if ((applied.rowCount ?? 0) > 0) await db.query("INSERT INTO soak_effects (delivery) VALUES ($1)", [delivery.id]);
  };
  const queues = [
    await openDeliveryQueue({ url, concurrency: 4, pollMs: 50 }),
    await openDeliveryQueue({ url, concurrency: 4, pollMs: 50 }),
  ];
  const started = process.hrtime.bigint();
  await Promise.all(queues.map((queue) => queue.work(handle)));
  const acks: number[] = [];
  for (const [i, delivery] of sent.entries()) {
    const at = process.hrtime.bigint();
    await queues[i % 2]!.enqueue(delivery);
    acks.push(Number(process.hrtime.bigint() - at) / 1e6);
  }
  const count = async () =>
    Number((await db.query("SELECT count(DISTINCT delivery) AS n FROM soak_effects")).rows[0].n);
  const deadline = Date.now() + 10 * 60_000;
  while ((await count()) < DELIVERIES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const minutes = Number(process.hrtime.bigint() - started) / 6e10;
  const effects = await db.query<{ delivery: string; n: string }>(
    "SELECT delivery, count(*) AS n FROM soak_effects GROUP BY delivery",
  );
  const lost = DELIVERIES - effects.rows.length;
  const doubled = effects.rows.filter((row) => Number(row.n) > 1).length;
  for (const queue of queues) await queue.stop();
  await db.end();
  const ack = summarise("ack", acks);
  console.log(
    `${DELIVERIES} deliveries (${sent.length} sent), ${TRACKS} tracks in ${REPOSITORIES} repositories, 2 queue processes: ` +
      `lost ${lost}, doubled ${doubled}, ${(DELIVERIES / minutes).toFixed(0)} deliveries/min, ack ${ack.tail.label} ${ack.tail.value.toFixed(2)} ms`,
  );
  printJson({
    soak_lost: lost,
    soak_doubled: doubled,
    soak_deliveries_per_min: Math.round(DELIVERIES / minutes),
    [`ack_ms_${ack.tail.label}`]: Number(ack.tail.value.toFixed(2)),
  });
} finally {
  await stopLocalServer(dataDir).catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
}
