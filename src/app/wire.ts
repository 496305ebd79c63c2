import type { Probot } from "probot";
import type { z } from "zod";
import { formatZodError } from "../contracts/zod-error.js";
import type { GitHub } from "./github.js";
import type { AppServices, Handler } from "./services.js";

/**
 * Bind a webhook event to a handler: parse the payload with its zod schema (a payload that does
 * not parse fails the delivery, it is never half-handled), then call the handler with only what
 * it needs.
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
    await handler({
      octokit: context.octokit as unknown as GitHub,
      payload: parsed.data,
      log: context.log,
      deliveryId: context.id,
      services,
    });
  });
}
