import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { branchRoleName } from "../../src/substrate/branch-role.js";
import { createProvider } from "../../src/substrate/create-provider.js";
import type { PostgresBranchProvider } from "../../src/substrate/postgres-provider.js";
import { postgresUrl, sql } from "../helpers/postgres.js";

/**
 * Each branch's URL is a login of its own on the real embedded server: it owns its database and
 * what the parent's migrations made there, and reaches no other database of the root.
 */

const suffix = randomBytes(3).toString("hex");
const rootDatabase = `role_root_${suffix}`;
const id = (name: string) => `${name}-${suffix}`;
let provider: PostgresBranchProvider;

/** What connecting to `database` with a branch's login says: "connected" or the server's refusal. */
async function reach(url: string, database: string): Promise<string> {
  const other = new URL(url);
  other.pathname = `/${database}`;
  return sql(other.href, "SELECT 1").then(
    () => "connected",
    (error: Error) => error.message,
  );
}

beforeAll(async () => {
  const config = ConsortConfig.parse({ database: { provider: "postgres", postgres: { rootDatabase } } });
  provider = (await createProvider(config.database, {
    env: { CONSORT_POSTGRES_URL: postgresUrl() },
  })) as PostgresBranchProvider;
  await sql(
    await provider.connectionUrl(await provider.rootBranch()),
    "CREATE TABLE stock (sku text PRIMARY KEY, quantity int NOT NULL); INSERT INTO stock VALUES ('A-1', 5)",
  );
  await provider.refreshBase(rootDatabase);
});
afterAll(async () => {
  await provider?.close();
});

describe("a branch's login", () => {
  it("is the branch's own role, not the admin, with a password that is not the admin's", async () => {
    await provider.createBranch(id("track-a"), { from: rootDatabase });
    const url = new URL(await provider.connectionUrl(id("track-a")));
    const admin = new URL(postgresUrl());
    expect(decodeURIComponent(url.username)).toBe(branchRoleName(rootDatabase, id("track-a")));
    expect(url.password).not.toBe(admin.password);
    expect(url.password.length).toBeGreaterThanOrEqual(40);
    expect(url.pathname).toBe(`/${id("track-a")}`);
  });

  it("owns what the parent's migrations made: a fork's migration may alter the parent's table", async () => {
    await provider.createBranch(id("track-b"), { from: rootDatabase });
    const url = await provider.connectionUrl(id("track-b"));
    await sql(url, "ALTER TABLE stock ADD COLUMN location text; UPDATE stock SET location = 'L1'");
    expect(await sql(url, "SELECT sku, quantity, location FROM stock")).toEqual([
      { sku: "A-1", quantity: 5, location: "L1" },
    ]);
  });

  it("reaches neither the root nor another track's database, and cannot make roles or databases", async () => {
    await provider.createBranch(id("track-c"), { from: rootDatabase });
    await provider.createBranch(id("track-d"), { from: rootDatabase });
    const url = await provider.connectionUrl(id("track-c"));
    await provider.connectionUrl(id("track-d"));
    expect(await reach(url, id("track-d"))).toBe(`permission denied for database "${id("track-d")}"`);
    expect(await reach(url, rootDatabase)).toBe(`permission denied for database "${rootDatabase}"`);
    await expect(sql(url, "CREATE ROLE intruder LOGIN")).rejects.toThrow("permission denied to create role");
    await expect(sql(url, "CREATE DATABASE intruder")).rejects.toThrow("permission denied to create database");
  });

  it("goes with its branch", async () => {
    await provider.createBranch(id("track-e"), { from: rootDatabase });
    await provider.connectionUrl(id("track-e"));
    await provider.deleteBranch(id("track-e"));
    const roles = await sql(
      postgresUrl(),
      `SELECT rolname FROM pg_roles WHERE rolname = '${branchRoleName(rootDatabase, id("track-e"))}'`,
    );
    expect(roles).toEqual([]);
  });
});

describe("a new branch", () => {
  it("is shut to other branches' logins from its creation, before anyone asked for its own URL", async () => {
    await provider.createBranch(id("track-f"), { from: rootDatabase });
    const url = await provider.connectionUrl(id("track-f"));
    await provider.createBranch(id("track-g"), { from: rootDatabase });
    expect(await reach(url, id("track-g"))).toBe(`permission denied for database "${id("track-g")}"`);
  });
});
