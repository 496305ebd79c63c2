import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolContext } from "../tools/index.js";
import { inputJsonSchema, outputJsonSchema } from "../tools/json-schema.js";
import { callTool, type ToolDefinition } from "../tools/registry.js";

/**
 * The registry as an MCP server. Every call goes through `callTool`, so arguments are parsed by
 * the tool's zod schema and any failure comes back as a tool result with `isError: true` (the
 * model sees it and can correct itself), never as a protocol error or a crashed server.
 */
export function createMcpServer(
  tools: readonly ToolDefinition[] | Promise<readonly ToolDefinition[]>,
  context: ToolContext | Promise<ToolContext>,
  version = "0.1.0",
): Server {
  const server = new Server(
    { name: "consort", title: "Consort", version },
    {
      capabilities: { tools: {} },
      instructions:
        "Consort enforces spec-first, test-driven work on this repository. Call next_action before you change anything: it says which role acts now, the task, and the only paths that role may touch. Tools only read, validate and run local cycles; they never approve a gate or change the track's state.",
    },
  );
  // The tools may still be loading while the client initializes: listing and calls wait for them.
  const listing: Promise<Tool[]> = Promise.resolve(tools).then((loaded) =>
    loaded.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputJsonSchema(tool) as Tool["inputSchema"],
      outputSchema: outputJsonSchema(tool) as Tool["outputSchema"],
      annotations: {
        title: tool.title,
        readOnlyHint: tool.readOnly,
        destructiveHint: tool.destructive ?? false,
        idempotentHint: tool.idempotent,
        openWorldHint: false,
      },
    })),
  );
  // A registry that failed to load fails each listing and call with its error, not the process.
  listing.catch(() => {});
  Promise.resolve(context).catch(() => {});

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // A client that sent a progress token hears each slow step (fork, migrate, test) as it starts.
    const token = request.params._meta?.progressToken;
    let step = 0;
    const [loadedTools, loadedContext] = await Promise.all([tools, context]);
    const callContext =
      token === undefined
        ? loadedContext
        : loadedContext.withProgress((message) => {
            step += 1;
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: step, message },
              })
              .catch(() => {});
          });
    const outcome = await callTool(loadedTools, request.params.name, request.params.arguments, callContext);
    if (outcome.ok) {
      return {
        content: [{ type: "text", text: JSON.stringify(outcome.output, null, 2) }],
        structuredContent: outcome.output,
      };
    }
    const { message, hint, code } = outcome.error;
    return {
      isError: true,
      content: [{ type: "text", text: `${code}: ${message}${hint ? `\nWhat to do: ${hint}` : ""}` }],
    };
  });
  return server;
}

/**
 * Serve over stdin/stdout until the client hangs up. stdout belongs to the protocol, so anything
 * our own code prints with console.log/info goes to stderr instead of corrupting a message.
 */
export async function serveStdio(server: Server, onClose: () => Promise<void>): Promise<void> {
  console.log = console.error;
  console.info = console.error;
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stdin.once("end", () => void server.close());
  await closed;
  await onClose();
}
