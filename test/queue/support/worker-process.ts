import { openDeliveryQueue } from "../../../src/queue/deliveries.js";

/**
 * An app process's queue worker, for tests that kill it: it works on the queue at argv[2] and
 * prints "started <delivery id>" when a delivery begins, which then never ends.
 */
const queue = await openDeliveryQueue({ url: process.argv[2]!, concurrency: 1, pollMs: 50 });
await queue.work(async (delivery) => {
  process.stdout.write(`started ${delivery.id}\n`);
  await new Promise<never>(() => {});
});
process.stdout.write("working\n");
