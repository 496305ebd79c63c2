import { z } from "zod";
import type { ToolDefinition } from "./registry.js";

/**
 * JSON Schema renderings of the registry. MCP clients validate with draft-07 validators (the SDK
 * uses ajv's default), so every schema is emitted as draft-07 without a `$schema` line.
 */

export type JsonSchema = { [key: string]: unknown };

export function inputJsonSchema(tool: ToolDefinition): JsonSchema {
  return render(tool.input, "input");
}

export function outputJsonSchema(tool: ToolDefinition): JsonSchema {
  return render(tool.output, "output");
}

function render(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: "draft-7",
    io,
    unrepresentable: "throw",
  }) as JsonSchema;
  return rest;
}

export interface OpenAIFunctionTool {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean };
}

/**
 * The registry as OpenAI function tools (the Chat Completions `tools` array). Parameters are made
 * strict-mode compatible: every object closed, every property listed as required, an optional
 * property made nullable (the call path reads a null as "not given"), defaults moved into the
 * description. A schema that cannot be made strict (a free-form map) is sent with strict false.
 */
export function openAITools(tools: readonly ToolDefinition[]): OpenAIFunctionTool[] {
  return tools.map((tool) => {
    const strict = toStrict(inputJsonSchema(tool));
    return {
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: strict.schema, strict: strict.ok },
    };
  });
}

/** The flat form the OpenAI Responses API takes: `{ type, name, description, parameters, strict }`. */
export function openAIResponsesTools(
  tools: readonly ToolDefinition[],
): Array<{ type: "function"; name: string; description: string; parameters: JsonSchema; strict: boolean }> {
  return openAITools(tools).map(({ function: fn }) => ({ type: "function", ...fn }));
}

function toStrict(schema: JsonSchema): { schema: JsonSchema; ok: boolean } {
  let ok = true;
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== "object") return node;
    const { default: defaultValue, ...rest } = node as JsonSchema;
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(rest))
      out[key] = key === "properties" || key === "definitions" ? mapValues(value, visit) : visit(value);
    if (defaultValue !== undefined) {
      const note = `Default: ${JSON.stringify(defaultValue)}.`;
      out.description = typeof out.description === "string" ? `${out.description} ${note}` : note;
    }
    if (out.type === "object") {
      const properties = (out.properties ?? {}) as Record<string, JsonSchema>;
      if (out.additionalProperties && out.additionalProperties !== false) ok = false;
      const required = new Set((out.required as string[] | undefined) ?? []);
      out.properties = Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, required.has(key) ? value : nullable(value)]),
      );
      out.required = Object.keys(properties);
      out.additionalProperties = false;
    }
    return out;
  };
  return { schema: visit(schema) as JsonSchema, ok };
}

function mapValues(value: unknown, fn: (v: unknown) => unknown): unknown {
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fn(v)]));
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === "string" && !("anyOf" in schema)) {
    const widened: JsonSchema = { ...schema, type: [schema.type, "null"] };
    if (Array.isArray(schema.enum)) widened.enum = [...(schema.enum as unknown[]), null];
    return widened;
  }
  const { description, ...rest } = schema;
  return description === undefined
    ? { anyOf: [rest, { type: "null" }] }
    : { description, anyOf: [rest, { type: "null" }] };
}
