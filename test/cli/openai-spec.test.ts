import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { OPENAI_SPEC_PATH, openAISpecText } from "../../src/cli/tools.js";
import {
  callTool,
  consortTools,
  openAIResponsesTools,
  openAITools,
  type ToolDefinition,
} from "../../src/tools/index.js";
import { stockflowCheckout } from "../tools/fixture.js";

type Schema = Record<string, unknown>;

/** Every object node of a JSON Schema, however deeply nested. */
function objectNodes(node: unknown, found: Schema[] = []): Schema[] {
  if (Array.isArray(node)) for (const item of node) objectNodes(item, found);
  else if (node && typeof node === "object") {
    if ((node as Schema).type === "object") found.push(node as Schema);
    for (const value of Object.values(node)) objectNodes(value, found);
  }
  return found;
}

describe("the OpenAI tool specification", () => {
  it("committed in tools/openai-tools.json is what the registry renders today (run `npm run tools:openai` when this fails)", () => {
    expect(readFileSync(OPENAI_SPEC_PATH, "utf8")).toBe(openAISpecText());
  });

  it("has one function per tool of the registry, with the same name and description", () => {
    const spec = openAITools(consortTools);
    expect(spec.map((tool) => [tool.type, tool.function.name, tool.function.description])).toEqual(
      consortTools.map((tool) => ["function", tool.name, tool.description]),
    );
  });

  it("has the flat Responses API form with the same functions", () => {
    expect(openAIResponsesTools(consortTools)).toEqual(
      openAITools(consortTools).map((tool) => ({ type: "function", ...tool.function })),
    );
  });

  it("meets strict mode: every object closed, every property required, no defaults", () => {
    for (const tool of openAITools(consortTools)) {
      expect(tool.function.strict, tool.function.name).toBe(true);
      expect(JSON.stringify(tool.function.parameters)).not.toContain('"default"');
      for (const node of objectNodes(tool.function.parameters)) {
        expect(node.additionalProperties, tool.function.name).toBe(false);
        expect(node.required).toEqual(Object.keys((node.properties ?? {}) as Schema));
      }
    }
  });

  it("accepts a strict-mode call (unset arguments sent as null) that the tool itself then accepts", async () => {
    const dbBranch = consortTools.find((tool) => tool.name === "db_branch") as ToolDefinition;
    const parameters = openAITools([dbBranch])[0]!.function.parameters;
    // A strict-mode model sends every property: the ones it does not mean to set as null.
    const strictCall = {
      ...Object.fromEntries((parameters.required as string[]).map((key) => [key, null])),
      action: "list",
    };
    expect(Object.keys(strictCall)).toEqual(expect.arrayContaining(["branch", "from", "ttlSeconds"]));
    expect(new Ajv({ strict: false }).validate(parameters, strictCall)).toBe(true);

    const checkout = await stockflowCheckout();
    try {
      expect(await callTool([dbBranch], "db_branch", strictCall, checkout.context())).toEqual({
        ok: true,
        output: {
          action: "list",
          provider: "postgres",
          branches: [{ name: checkout.rootDatabase, parent: null, isRoot: true, createdAt: expect.any(String) }],
        },
      });
    } finally {
      await checkout.cleanup();
    }
  });
});
