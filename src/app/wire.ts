import { AsyncLocalStorage } from "node:async_hooks";
import type { Probot } from "probot";
import type { z } from "zod";
import { formatZodError } from "../contracts/zod-error.js";
import type { GitHub } from "./github.js";
import type { AppServices, Handler } from "./services.js";

/**
 * How long the route waits for the queue to store a delivery (ms): well under the 9 s after which
 * the webhook middleware answers 202 "still processing", since a 202 for a delivery that was never
 * stored is one GitHub counts as delivered and never sends again; a 500 it records as failed.
 */
const STORE_DEADLINE_MS = 5000;

/** Store a delivery, or throw (the route then answers 500) when the queue cannot within the deadline. */
async function storeInTime(enqueue: () => Promise<unknown>, id: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () =>
        fail(
          new Error(
            `could not store delivery ${id} in ${STORE_DEADLINE_MS / 1000} s: the app's Postgres is not answering; GitHub records the delivery as failed and the app redelivers it on its next start (or \`consort reconcile\`)`,
          ),
        ),
      STORE_DEADLINE_MS,
    );
  });
  try {
    await Promise.race([enqueue(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Set while a queue worker hands a stored delivery back: then it is handled, not stored again. */
const fromQueue = new AsyncLocalStorage<true>();

/** Handle a delivery the queue stored: Probot runs its handlers as if it had just arrived. */
export function handleQueued(
  app: Pick<Probot, "receive">,
  delivery: { id: string; name: string; payload: Record<string, unknown> },
): Promise<void> {
  return fromQueue.run(true, () => app.receive(delivery as Parameters<Probot["receive"]>[0]));
}

/**
 * Bind a webhook event to a handler: parse the payload with its zod schema (a payload that does
 * not parse fails the delivery, it is never half-handled), then call the handler with only what
 * it needs. With a queue (`services.enqueue`) a delivery from GitHub is only stored, and answered;
 * the handler runs when a worker hands it back (`handleQueued`).
 */
export function route<Schema extends z.ZodType>(
  app: Probot,
  services: AppServices,
  events: string | string[],
  schema: Schema,
  handler: Handler<z.infer<Schema>>,
): void {
  const names = (Array.isArray(events) ? events : [events]) as Parameters<Probot["on"]>[0];
  app.on(names, async (context) => {
    const parsed = schema.safeParse(context.payload);
    if (!parsed.success) {
      const refused = formatZodError(parsed.error, `${context.name} delivery ${context.id} has an unexpected payload`, {
        inline: true,
      });
      context.log.error({ event: context.name, delivery: context.id }, refused);
      throw new Error(refused);
    }
    if (services.enqueue && !fromQueue.getStore()) {
      const payload = context.payload as unknown as Record<string, unknown>;
      const enqueue = services.enqueue;
      await storeInTime(() => enqueue({ id: context.id, name: context.name, payload }), context.id);
      return;
    }
    await handler({
      octokit: context.octokit as unknown as GitHub,
      payload: parsed.data,
      log: context.log,
      deliveryId: context.id,
      services,
    });
  });
}
