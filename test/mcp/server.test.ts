import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolContext } from "../../src/tools/context.js";
import { consortTools } from "../../src/tools/index.js";
import { call, connectClient, errorText } from "../tools/mcp-client.js";

/** A context whose database must never be reached: every call here is refused before it. */
const refusingContext = new ToolContext({
  repoPath: process.cwd(),
  state: { kind: "none" },
  createProvider: async () => {
    throw new Error("the provider was asked for, but this call should have been refused first");
  },
});

describe("the MCP server", () => {
  let client: Client;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ client, close } = await connectClient(consortTools, refusingContext));
  });
  afterAll(async () => close());

  it("lists every tool of the registry with object input and output schemas and honest hints", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(consortTools.map((tool) => tool.name));
    for (const tool of tools) {
      const definition = consortTools.find((candidate) => candidate.name === tool.name)!;
      expect(tool.description).toBe(definition.description);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations?.readOnlyHint).toBe(definition.readOnly);
      expect(tool.name).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
    }
  });

  it("answers an unknown action with a tool error naming the field and the allowed values", async () => {
    const result = await call(client, "db_branch", { action: "explode", branch: "t1" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(/INVALID_INPUT: Invalid arguments for db_branch: action: .*"create"/);
  });

  it("answers a missing branch name with a tool error that says which action needs it", async () => {
    const result = await call(client, "db_branch", { action: "url" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain('branch: action "url" needs a branch name');
  });

  it("refuses arguments the tool does not take instead of ignoring them", async () => {
    const result = await call(client, "db_branch", { action: "list", force: true });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain("force");
  });

  it("answers a call to a tool that does not exist with a tool error listing the real ones", async () => {
    const result = await call(client, "approve_gate", {});
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain('There is no tool named "approve_gate"');
    expect(errorText(result)).toContain("db_branch");
  });

  it("keeps serving after a failed call", async () => {
    await call(client, "db_branch", { action: 42 });
    const { tools } = await client.listTools();
    expect(tools.length).toBe(consortTools.length);
  });
});
