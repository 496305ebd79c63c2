import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../../src/mcp/server.js";
import type { ToolContext } from "../../src/tools/context.js";
import type { ToolDefinition } from "../../src/tools/registry.js";

/** The SDK's own client, linked to our server over the SDK's in-memory transport. */
export async function connectClient(
  tools: readonly ToolDefinition[],
  context: ToolContext,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const server = createMcpServer(tools, context);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "consort-test-agent", version: "1.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  // Listing caches each tool's outputSchema: from then on callTool validates structuredContent.
  await client.listTools();
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** Call a tool and return the result; the client itself checks structuredContent against the tool's outputSchema. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeout = 60_000,
  onProgress?: (message: string) => void,
): Promise<CallToolResult> {
  const progress = onProgress
    ? { onprogress: (p: { message?: string }) => onProgress(p.message ?? ""), resetTimeoutOnProgress: true }
    : {};
  return (await client.callTool({ name, arguments: args }, CallToolResultSchema, {
    timeout,
    ...progress,
  })) as CallToolResult;
}

/** The text of a tool error, for asserting on what the agent is told. */
export function errorText(result: CallToolResult): string {
  const first = result.content[0];
  return first && first.type === "text" ? first.text : "";
}
