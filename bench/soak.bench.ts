import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDeliveryQueue } from "../src/queue/deliveries.js";
import { ensureLocalServer, stopLocalServer } from "../src/substrate/local-server.js";
import { runSoak } from "../test/queue/support/soak.js";
import { printJson, printTable, summarise, wantsJson } from "./lib.js";

/**
 * `npm run bench:soak`: the app's deliveries on a busy day (issue #33). 1,000 deliveries over 20
 * tracks in 4 repositories, 10 % delivered twice and 10 % out of order, POSTed signed over HTTP
 * to two app processes that share one queue, with GitHub as the repositories' doubles; 10 times
 * an app process is killed (SIGKILL) at a random point of the work and started again, and the
 * deliveries that failed meanwhile are redelivered as GitHub does when the app asks on boot
 * (test/queue/support/soak.ts). The ack is timed request to response (signature checked,
 * delivery stored, answered); the baseline is the queue's enqueue alone, measured in the same run.
 * With --json the last line is { soak_lost, soak_doubled, soak_misordered,
 * soak_deliveries_per_min, ack_ms_p99, enqueue_ms_p99 }. SOAK_DELIVERIES and SOAK_KILLS shorten it.
 */

const DELIVERIES = Number(process.env.SOAK_DELIVERIES ?? 1000);
const KILLS = Number(process.env.SOAK_KILLS ?? 10);

const dataDir = mkdtempSync(join(tmpdir(), "consort-soak-"));
chmodSync(dataDir, 0o755);
try {
  const server = await ensureLocalServer({ dataDir, throwaway: true });
  const url = server.url("postgres");
  const result = await runSoak({
    databaseUrl: url,
    deliveries: DELIVERIES,
    repositories: 4,
    tracks: 20,
    kills: KILLS,
    workers: 4,
    deadlineMs: 30 * 60_000,
    log: wantsJson() ? () => {} : (line) => console.log(line),
  });

  // The baseline: storing a delivery in the same queue, without HTTP, signature or Probot.
  const queue = await openDeliveryQueue({ url });
  const enqueues: number[] = [];
  for (let i = 0; i < 200; i++) {
    const at = performance.now();
    await queue.enqueue({ id: `baseline-${i}`, name: "push", payload: { repository: { full_name: "acme/base" } } });
    enqueues.push(performance.now() - at);
  }
  await queue.stop();

  const ack = summarise("ack over signed HTTP", result.acks);
  const enqueue = summarise("enqueue alone (baseline)", enqueues);
  printTable(
    `${DELIVERIES} deliveries (${result.sent} sent), 20 tracks in 4 repositories, 2 app processes, ${result.kills} kills`,
    [enqueue, ack],
    {
      baseline: enqueue.name,
    },
  );
  console.log(
    `lost ${result.lost}, doubled ${result.doubled}, misordered ${result.misordered}, dead letters ${result.deadLetters}, ` +
      `${result.failedPosts} POSTs failed under a kill (${result.redelivered} redelivered), ` +
      `${(DELIVERIES / result.minutes).toFixed(0)} deliveries/min, double violations ${result.violations.length}`,
  );
  for (const violation of result.violations.slice(0, 5)) console.log(`  ${violation}`);
  printJson({
    soak_lost: result.lost,
    soak_doubled: result.doubled,
    soak_misordered: result.misordered,
    soak_deliveries_per_min: Math.round(DELIVERIES / result.minutes),
    [`ack_ms_${ack.tail.label}`]: Number(ack.tail.value.toFixed(2)),
    [`enqueue_ms_${enqueue.tail.label}`]: Number(enqueue.tail.value.toFixed(2)),
  });
} finally {
  await stopLocalServer(dataDir).catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
}
