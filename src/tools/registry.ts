import type { z } from "zod";
import { formatZodError } from "../contracts/zod-error.js";
import type { ToolContext } from "./context.js";
import { ToolError } from "./errors.js";

// The tools declare their errors with the registry they register in.
export { ToolError } from "./errors.js";

/**
 * The agents' tool surface as data: every tool has a name, a description written for a model,
 * zod schemas for what it takes and what it returns, and a handler. The MCP server and the
 * OpenAI specification are both rendered from this one list, so the two never drift.
 */

export type ToolInputSchema = z.ZodObject;
export type ToolOutputSchema = z.ZodObject;

export interface ToolDefinition<
  I extends ToolInputSchema = ToolInputSchema,
  O extends ToolOutputSchema = ToolOutputSchema,
> {
  /** snake_case, at most 64 characters: valid for MCP and for OpenAI function names. */
  name: string;
  title: string;
  /** For the model: when to call it, what it returns, what it never does. */
  description: string;
  input: I;
  output: O;
  /** True when the tool only reads; false when it creates or deletes something (a database branch). */
  readOnly: boolean;
  /** True when calling it twice with the same input has no further effect. */
  idempotent: boolean;
  /** True when it may delete something (a database branch). */
  destructive?: boolean;
  /** True when it reads the checkout's files: the call then first checks the checkout is there (NO_CHECKOUT). */
  readsCheckout?: boolean;
  run(input: z.output<I>, context: ToolContext): Promise<z.input<O>>;
}

/** Keeps the input and output types of one tool tied together where it is declared. */
export function defineTool<I extends ToolInputSchema, O extends ToolOutputSchema>(
  tool: ToolDefinition<I, O>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

export type ToolOutcome =
  | { ok: true; output: Record<string, unknown> }
  | { ok: false; error: { code: string; message: string; hint?: string } };

/**
 * Run one tool call from an untrusted caller: parse the arguments with the tool's zod schema,
 * run the handler, and check the result against the output schema (a handler that returns
 * something else is our bug, reported as a failure rather than passed on).
 */
export async function callTool(
  tools: readonly ToolDefinition[],
  name: string,
  rawArgs: unknown,
  context: ToolContext,
): Promise<ToolOutcome> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) {
    return failure(
      "UNKNOWN_TOOL",
      `There is no tool named "${name}".`,
      `Call one of: ${tools.map((t) => t.name).join(", ")}.`,
    );
  }
  const parsed = tool.input.safeParse(withoutNulls(rawArgs ?? {}));
  if (!parsed.success) {
    return failure(
      "INVALID_INPUT",
      formatZodError(parsed.error, `Invalid arguments for ${name}`, { inline: true }),
      "Fix the arguments to match the tool's input schema and call it again.",
    );
  }
  let raw: unknown;
  try {
    if (tool.readsCheckout) await context.assertCheckout();
    raw = await tool.run(parsed.data, context);
  } catch (error) {
    return failureFrom(error);
  }
  const output = tool.output.safeParse(raw);
  if (!output.success) {
    return failure(
      "INTERNAL_ERROR",
      formatZodError(output.error, `${name} produced a result that does not match its output schema`, { inline: true }),
      "This is a bug in Consort; report it with the arguments you used.",
    );
  }
  return { ok: true, output: output.data };
}

function failure(code: string, message: string, hint?: string): ToolOutcome {
  return { ok: false, error: hint ? { code, message, hint } : { code, message } };
}

function failureFrom(error: unknown): ToolOutcome {
  if (error instanceof ToolError) return failure(error.code, error.message, error.hint);
  const message = error instanceof Error ? error.message : String(error);
  const hint = (error as { hint?: unknown })?.hint;
  const code = (error as { code?: unknown })?.code;
  return failure(
    typeof code === "string" ? code : "TOOL_FAILED",
    message,
    typeof hint === "string" && !message.includes(hint) ? hint : undefined,
  );
}

/**
 * OpenAI strict mode sends every optional argument, as null when unset; treat a null as absent so
 * the same zod schema serves both surfaces. A null for a required field still fails as missing.
 */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}
