import { rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { simpleGit } from "simple-git";
import { defaultConfig } from "../../src/config/consort-config.js";
import { createTrack } from "../../src/orchestrator/index.js";
import { trackIdForBranch } from "../../src/state/index.js";
import { NextActionOutput } from "../../src/tools/track-tools.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DbBranchOutput } from "../../src/tools/db-branch.js";
import { consortTools } from "../../src/tools/index.js";
import { postgresUrl } from "../helpers/postgres.js";
import { stockflowCheckout, URL_ENV, type StockflowCheckout } from "../tools/fixture.js";

describe("consort mcp over real stdio", () => {
  let checkout: StockflowCheckout;
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = "";
  let statePath: string;
  beforeAll(async () => {
    checkout = await stockflowCheckout();
    // A track just started on the checkout's branch, as the app would store it.
    const head = (await simpleGit(checkout.path).revparse(["HEAD"])).trim();
    const { snapshot } = createTrack(
      {
        trackId: trackIdForBranch(checkout.branch),
        branch: checkout.branch,
        baseBranch: "main",
        head,
        databaseBranch: checkout.branch,
        parentDatabaseBranch: checkout.rootDatabase,
        at: "2026-11-30T06:00:00.000Z",
      },
      defaultConfig(),
    );
    statePath = join(checkout.path, "..", `stdio-${checkout.branch}.json`);
    await writeFile(statePath, JSON.stringify(snapshot));
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [resolve("bin/consort.js"), "mcp", "-C", checkout.path, "--state", statePath],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", [URL_ENV]: postgresUrl() },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: "consort-stdio-test", version: "1.0.0" });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await rm(statePath, { force: true });
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
    expect(DbBranchOutput.parse(result.structuredContent).branches?.[0]).toMatchObject({
      name: checkout.rootDatabase,
      isRoot: true,
    });
  });

  it("reads the track's state from the --state file: the Product Owner writes the stories first", async () => {
    const result = await client.callTool({ name: "next_action", arguments: {} }, CallToolResultSchema);
    const output = NextActionOutput.parse(result.structuredContent);
    expect(output.state).toMatchObject({ source: "file", location: statePath, verified: false });
    expect(output.action).toMatchObject({
      stage: "stories",
      actor: "agent",
      role: "product-owner",
      trailer: "Consort-Role: product-owner",
    });
  });

  it("answers a malformed call with a tool error and stays up", async () => {
    const bad = await client.callTool(
      { name: "db_branch", arguments: { action: "drop-everything" } },
      CallToolResultSchema,
    );
    expect(bad.isError).toBe(true);
    const { tools } = await client.listTools();
    expect(tools.length).toBe(consortTools.length);
  });
});
