import pg from "pg";
import { describe, expect, it } from "vitest";
import { DbBranchOutput } from "../../src/tools/db-branch.js";
import { call, errorText } from "./mcp-client.js";
import { toolsOnCheckout } from "./fixture.js";

describe("db_branch on the real postgres provider", () => {
  const tools = toolsOnCheckout();

  it("creates a branch from the root, lists it, and gives a URL a client can connect with", async () => {
    const name = tools.checkout.unique("track");
    const created = await call(tools.client, "db_branch", { action: "create", branch: name });
    expect(created.isError).toBeFalsy();
    expect(DbBranchOutput.parse(created.structuredContent)).toMatchObject({
      action: "create",
      provider: "postgres",
      branch: { name, parent: tools.checkout.rootDatabase, isRoot: false },
    });

    const listed = DbBranchOutput.parse((await call(tools.client, "db_branch", { action: "list" })).structuredContent);
    expect(listed.branches?.map((branch) => branch.name)).toEqual([tools.checkout.rootDatabase, name]);

    const { url } = DbBranchOutput.parse(
      (await call(tools.client, "db_branch", { action: "url", branch: name })).structuredContent,
    );
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const { rows } = await db.query<{ name: string }>("SELECT current_database() AS name");
    await db.end();
    expect(rows[0]!.name).toBe(name);
  });

  it("forks a throwaway child with a time to live and deletes it again", async () => {
    const parent = tools.checkout.unique("track");
    const child = tools.checkout.unique("try");
    await call(tools.client, "db_branch", { action: "create", branch: parent });
    const created = DbBranchOutput.parse(
      (await call(tools.client, "db_branch", { action: "create", branch: child, from: parent, ttlSeconds: 600 }))
        .structuredContent,
    );
    expect(created.branch).toMatchObject({ name: child, parent });
    expect(Date.parse(created.branch!.expiresAt!)).toBeGreaterThan(Date.now());

    const deleted = await call(tools.client, "db_branch", { action: "delete", branch: child });
    expect(deleted.structuredContent).toEqual({
      action: "delete",
      provider: "postgres",
      deleted: child,
      existed: true,
      children: [],
    });
    const listed = DbBranchOutput.parse((await call(tools.client, "db_branch", { action: "list" })).structuredContent);
    expect(listed.branches?.map((branch) => branch.name)).not.toContain(child);
  });

  it("refuses to delete the root branch, and the root is still there", async () => {
    const result = await call(tools.client, "db_branch", { action: "delete", branch: tools.checkout.rootDatabase });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain("ROOT_BRANCH");
    const listed = DbBranchOutput.parse((await call(tools.client, "db_branch", { action: "list" })).structuredContent);
    expect(listed.branches?.[0]).toMatchObject({ name: tools.checkout.rootDatabase, isRoot: true });
  });

  it("answers a URL request for a branch that does not exist with what to do", async () => {
    const result = await call(tools.client, "db_branch", { action: "url", branch: tools.checkout.unique("missing") });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(
      /NO_SUCH_BRANCH: There is no database branch named .*\nWhat to do: List the branches/,
    );
  });

  it("passes the provider's refusal of an invalid name back as a tool error", async () => {
    const result = await call(tools.client, "db_branch", { action: "create", branch: "Not_A_Valid_Name" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(/Not_A_Valid_Name/);
  });
});
