import { createRequire } from "node:module";

/** Real webhook payloads recorded by GitHub, from @octokit/webhooks-examples. */
const require = createRequire(import.meta.url);
interface ExampleSet {
  name: string;
  actions: string[];
  examples: Array<Record<string, unknown> & { action?: string }>;
}
const sets = require("@octokit/webhooks-examples/api.github.com/index.json") as ExampleSet[];

/**
 * A fresh copy of a recorded payload for `event` (and `action`, when the event has actions).
 * `index` picks among several recordings of the same action.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function webhookPayload<T = Record<string, any>>(event: string, action?: string, index = 0): T {
  const set = sets.find((s) => s.name === event);
  if (!set) throw new Error(`@octokit/webhooks-examples has no "${event}" event`);
  const matching = action ? set.examples.filter((e) => e.action === action) : set.examples;
  const example = matching[index];
  if (!example) {
    throw new Error(
      `@octokit/webhooks-examples has no "${event}${action ? `.${action}` : ""}" example #${index}; actions: ${set.actions.join(", ")}`,
    );
  }
  return structuredClone(example) as T;
}
