import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DbBranchOutput } from "../../src/tools/db-branch.js";
import { consortTools } from "../../src/tools/index.js";
import { postgresUrl } from "../helpers/postgres.js";
import { stockflowCheckout, URL_ENV, type StockflowCheckout } from "./fixture.js";

describe("consort mcp over real stdio", () => {
  let checkout: StockflowCheckout;
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = "";
  beforeAll(async () => {
    checkout = await stockflowCheckout();
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [resolve("bin/consort.js"), "mcp", "--repo", checkout.path],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", [URL_ENV]: postgresUrl() },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: "consort-stdio-test", version: "1.0.0" });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await checkout.cleanup();
  });

  it("lists the registry's tools to a client that spawned `node bin/consort.js mcp`", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(consortTools.map((tool) => tool.name));
    expect(stderr).toContain(`serving ${consortTools.length} tools for ${checkout.path}`);
  });

  it("runs a tool against the checkout's configured database and keeps stdout clean for the protocol", async () => {
    const result = await client.callTool({ name: "db_branch", arguments: { action: "list" } }, CallToolResultSchema);
    expect(result.isError).toBeFalsy();
    expect(DbBranchOutput.parse(result.structuredContent).branches?.[0]).toMatchObject({ name: checkout.rootDatabase, isRoot: true });
  });

  it("answers a malformed call with a tool error and stays up", async () => {
    const bad = await client.callTool({ name: "db_branch", arguments: { action: "drop-everything" } }, CallToolResultSchema);
    expect(bad.isError).toBe(true);
    const { tools } = await client.listTools();
    expect(tools.length).toBe(consortTools.length);
  });
});
