import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { sql } from "../helpers/postgres.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sanitiseBranchName, type PostgresBranchProvider } from "../../src/substrate/index.js";
import { DbBranchOutput } from "../../src/tools/db-branch.js";
import { consortTools } from "../../src/tools/index.js";
import { SchemaComparisonOutput } from "../../src/tools/schema-diff.js";
import { call, connectClient, errorText } from "./mcp-client.js";
import { stockflowCheckout, type StockflowCheckout } from "./fixture.js";

/**
 * Feature F6 of StockFlow on live data: the root holds stock_records with three filed rows; the
 * track's branch splits inventory_code into batch_number and serial_number and drops the old column.
 */
describe("schema_diff of a track's branch against the root, on real rows", () => {
  let checkout: StockflowCheckout;
  let client: Client;
  let close: () => Promise<void>;
  let track: string;
  beforeAll(async () => {
    checkout = await stockflowCheckout({ branch: `f6-split-code-${Date.now().toString(36)}` });
    const context = checkout.context();
    ({ client, close } = await connectClient(consortTools, context));
    const provider = (await context.provider()) as PostgresBranchProvider;
    const root = await provider.rootBranch();
    const rootUrl = await provider.connectionUrl(root);
    await sql(rootUrl, await readFile(join(checkout.path, "migrations/0001_create_stock_records.up.sql"), "utf8"));
    await sql(
      rootUrl,
      "INSERT INTO stock_records (sku, location, quantity, inventory_code) VALUES ('ABC-1','A-01',12,'A-01/LOT-7/S1'), ('ABC-2','A-01',3,'A-01/LOT-8/S2'), ('ABC-1','B-02',5,'unparseable')",
    );
    await provider.refreshBase!(root);

    track = sanitiseBranchName(checkout.branch);
    await call(client, "db_branch", { action: "create", branch: track });
    await sql(
      await provider.connectionUrl(track),
      "ALTER TABLE stock_records ADD COLUMN batch_number text, ADD COLUMN serial_number text; ALTER TABLE stock_records DROP COLUMN inventory_code",
    );
  }, 60_000);
  afterAll(async () => {
    await close();
    await checkout.cleanup();
  });

  it("defaults to the checkout's track branch and reports the columns added and dropped", async () => {
    const output = SchemaComparisonOutput.parse((await call(client, "schema_diff", {})).structuredContent);
    expect(output).toMatchObject({ branch: track, parent: checkout.rootDatabase });
    expect(
      output.changes.filter((change) => change.object === "column").map((change) => [change.action, change.name]),
    ).toEqual(
      expect.arrayContaining([
        ["added", "public.stock_records.batch_number"],
        ["added", "public.stock_records.serial_number"],
        ["dropped", "public.stock_records.inventory_code"],
      ]),
    );
  });

  it("counts the three filed codes the dropped column would lose, and is not ok", async () => {
    const output = SchemaComparisonOutput.parse(
      (await call(client, "schema_diff", { branch: track })).structuredContent,
    );
    expect(output.findings).toContainEqual(
      expect.objectContaining({ rule: "column-dropped", change: "public.stock_records.inventory_code", rows: 3 }),
    );
    expect(output.ok).toBe(false);
    expect(output.markdown).toContain("inventory_code");
  });

  it("gives the same comparison through db_branch's diff action", async () => {
    const viaSchemaDiff = SchemaComparisonOutput.parse(
      (await call(client, "schema_diff", { branch: track })).structuredContent,
    );
    const viaDbBranch = DbBranchOutput.parse(
      (await call(client, "db_branch", { action: "diff", branch: track })).structuredContent,
    );
    expect(viaDbBranch.diff).toEqual(viaSchemaDiff);
  });

  it("answers a branch that does not exist with a tool error saying how to list branches", async () => {
    const result = await call(client, "schema_diff", { branch: checkout.unique("nowhere") });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(/does not exist[\s\S]*list/);
  });
});
