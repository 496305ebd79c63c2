import { describe, expect, it } from "vitest";
import { describeServer, toSubstrateError } from "../../src/substrate/pg-errors.js";

describe("server errors a person can act on", () => {
  const context = { server: "db.internal:5432 as consort", action: 'forking "feature-a"' };

  it("says the disk is full, whether the server sends 53100 or an I/O message", () => {
    expect(
      toSubstrateError(Object.assign(new Error("could not extend file"), { code: "53100" }), context),
    ).toMatchObject({ code: "DISK_FULL", hint: expect.stringContaining("free disk space") });
    expect(
      toSubstrateError(
        Object.assign(new Error('could not write to file "base/1/2": No space left on device'), { code: "58030" }),
        context,
      ),
    ).toMatchObject({ code: "DISK_FULL" });
  });

  it("names the database in use and what to close", () => {
    const error = toSubstrateError(
      Object.assign(new Error('source database "feature-a" is being accessed by other users'), { code: "55006" }),
      { ...context, database: "feature-a" },
    );
    expect(error).toMatchObject({ code: "DATABASE_IN_USE", message: expect.stringContaining('database "feature-a"') });
  });

  it.each([
    [
      "ECONNREFUSED",
      "connect ECONNREFUSED 127.0.0.1:5432",
      "SERVER_UNREACHABLE",
      "the server is unreachable (ECONNREFUSED)",
    ],
    ["28P01", 'password authentication failed for user "consort"', "LOGIN_REFUSED", "the server refused the login"],
    ["42501", "permission denied to create database", "PERMISSION_DENIED", "permission denied to create database"],
    ["3D000", 'database "gone" does not exist', "DATABASE_MISSING", 'database "gone" does not exist'],
    ["53300", "sorry, too many clients already", "TOO_MANY_CONNECTIONS", "sorry, too many clients already"],
    [
      "57P01",
      "terminating connection due to administrator command",
      "SERVER_CONNECTION_LOST",
      "the server went away (terminating connection due to administrator command)",
    ],
    [
      "",
      "Connection terminated unexpectedly",
      "SERVER_CONNECTION_LOST",
      "the connection to the server was lost mid-way (Connection terminated unexpectedly)",
    ],
    ["42P07", 'relation "items" already exists', "PG_42P07", 'relation "items" already exists'],
    ["", "something else", "SUBSTRATE_ERROR", "something else"],
  ])("code %j with %j is %s, saying what failed where", (code, message, kind, said) => {
    const error = toSubstrateError(Object.assign(new Error(message), code ? { code } : {}), context);
    expect(error.code).toBe(kind);
    expect(error.message).toBe(`forking "feature-a" on db.internal:5432 as consort failed: ${said}\n  → ${error.hint}`);
    expect(error.hint).not.toBe("");
  });

  it("never shows the password of a server URL", () => {
    expect(describeServer("postgresql://consort:s3cret@db.internal:6432/postgres")).toBe("db.internal:6432 as consort");
  });
});

describe("choosing the provider from the configuration", () => {
  it("builds the lakebase provider from database.lakebase and the token variable, without calling out yet", async () => {
    const { createProvider } = await import("../../src/substrate/create-provider.js");
    const { ConsortConfig } = await import("../../src/config/consort-config.js");
    const config = ConsortConfig.parse({
      database: { provider: "lakebase", lakebase: { host: "dbc-1.cloud.databricks.com", project: "shop" } },
    });
    const provider = await createProvider(config.database, { env: { DATABRICKS_TOKEN: "dapi-x" } });
    expect(provider.kind).toBe("lakebase");
    await provider.close();
  });
});
