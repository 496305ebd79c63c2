import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { createProvider } from "../../src/substrate/create-provider.js";
import { baseDatabaseName, spareDatabaseName } from "../../src/substrate/postgres-catalog.js";
import { PostgresBranchProvider } from "../../src/substrate/postgres-provider.js";
import { sanitiseBranchName } from "../../src/substrate/names.js";
import { SubstrateError } from "../../src/substrate/provider.js";
import { postgresUrl } from "../helpers/postgres.js";

/** Each test file gets its own root on the shared server, so files run in parallel. */
const suffix = randomBytes(3).toString("hex");
const rootDatabase = `root_${suffix}`;
const id = (name: string) => `${name}-${suffix}`;

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function databaseNames(): Promise<string[]> {
  return (await sql<{ datname: string }>(postgresUrl(), "SELECT datname FROM pg_database")).map((r) => r.datname);
}

let provider: PostgresBranchProvider;

beforeAll(async () => {
  const config = ConsortConfig.parse({ database: { provider: "postgres", postgres: { rootDatabase } } });
  provider = (await createProvider(config.database, {
    env: { CONSORT_POSTGRES_URL: postgresUrl() },
  })) as PostgresBranchProvider;
  const root = await provider.rootBranch();
  await sql(
    await provider.connectionUrl(root),
    "CREATE TABLE stock (sku text PRIMARY KEY, quantity int NOT NULL); INSERT INTO stock VALUES ('A-1', 3), ('B-2', 0)",
  );
  await provider.refreshBase(root);
});

afterAll(async () => {
  for (const branch of await provider.listBranches()) if (!branch.isRoot) await provider.deleteBranch(branch.name);
  await provider.close();
  await sql(postgresUrl(), `DROP DATABASE IF EXISTS "${rootDatabase}" WITH (FORCE)`);
  await sql(postgresUrl(), `DROP DATABASE IF EXISTS "${baseDatabaseName(rootDatabase)}" WITH (FORCE)`);
  await sql(postgresUrl(), `DROP DATABASE IF EXISTS "${spareDatabaseName(rootDatabase)}" WITH (FORCE)`);
});

describe("the postgres provider", () => {
  it("forks a branch that holds the parent's data and is independent of it", async () => {
    const branch = await provider.createBranch(id("feature-cart"));
    expect(branch).toMatchObject({ name: id("feature-cart"), parent: rootDatabase, isRoot: false });
    const url = await provider.connectionUrl(branch.name);
    await sql(url, "UPDATE stock SET quantity = 99 WHERE sku = 'A-1'");
    const rootRows = await sql<{ quantity: number }>(
      await provider.connectionUrl(rootDatabase),
      "SELECT quantity FROM stock WHERE sku = 'A-1'",
    );
    expect(rootRows[0]!.quantity).toBe(3);
    const branchRows = await sql<{ n: number }>(url, "SELECT count(*)::int AS n FROM stock");
    expect(branchRows[0]!.n).toBe(2);
  });

  it("forks a child while the parent has open connections", async () => {
    const parent = await provider.createBranch(id("busy-parent"));
    const holder = new pg.Client({ connectionString: await provider.connectionUrl(parent.name) });
    await holder.connect();
    try {
      await holder.query("BEGIN; INSERT INTO stock VALUES ('C-3', 1)");
      const child = await provider.createBranch(id("busy-child"), { from: parent.name, ttlSeconds: 600 });
      expect(child.parent).toBe(parent.name);
      expect(child.expiresAt).toBeDefined();
      const rows = await sql<{ n: number }>(
        await provider.connectionUrl(child.name),
        "SELECT count(*)::int AS n FROM stock",
      );
      expect(rows[0]!.n).toBe(2);
    } finally {
      await holder.end();
    }
  });

  it("runs eight concurrent forks of one parent and all succeed", async () => {
    const parent = await provider.createBranch(id("fan-out"));
    const names = Array.from({ length: 8 }, (_, i) => id(`fan-${i}`));
    const forks = await Promise.all(
      names.map((name) => provider.createBranch(name, { from: parent.name, ttlSeconds: 600 })),
    );
    expect(forks.map((f) => f.parent)).toEqual(names.map(() => parent.name));
    const listed = (await provider.listBranches()).map((b) => b.name);
    for (const name of names) expect(listed).toContain(name);
  });

  it("returns an existing branch when asked again with the same parent, and refuses another parent", async () => {
    const first = await provider.createBranch(id("again"));
    const second = await provider.createBranch(id("again"));
    expect(second).toEqual(first);
    const other = await provider.createBranch(id("other-parent"));
    await expect(provider.createBranch(id("again"), { from: other.name })).rejects.toMatchObject({
      code: "PARENT_MISMATCH",
    });
  });

  it("refuses a missing parent and leaves nothing behind", async () => {
    await provider.settled();
    const before = await databaseNames();
    await expect(provider.createBranch(id("orphan"), { from: id("no-such-parent") })).rejects.toMatchObject({
      code: "PARENT_MISSING",
    });
    expect(await databaseNames()).toEqual(before);
  });

  it("refuses a name that is not a sanitised branch id", async () => {
    await expect(provider.createBranch("Feature/Cart")).rejects.toMatchObject({ code: "INVALID_BRANCH_NAME" });
    await expect(provider.createBranch("x".repeat(64))).rejects.toBeInstanceOf(SubstrateError);
  });

  it("refuses to fork from a throwaway branch, as Lakebase does", async () => {
    const throwaway = await provider.createBranch(id("cycle-1"), { ttlSeconds: 60 });
    await expect(provider.createBranch(id("cycle-1-child"), { from: throwaway.name })).rejects.toMatchObject({
      code: "PARENT_IS_THROWAWAY",
    });
  });

  it("a failed fork leaves no database behind", async () => {
    const parent = await provider.createBranch(id("broken-base"));
    // Make the parent's base unusable as a template: drop it behind the provider's back.
    await provider.settled();
    await sql(postgresUrl(), `DROP DATABASE "${baseDatabaseName(parent.name)}" WITH (FORCE)`);
    const before = await databaseNames();
    await expect(provider.createBranch(id("broken-child"), { from: parent.name })).rejects.toMatchObject({
      code: "BASE_MISSING",
    });
    expect(await databaseNames()).toEqual(before);
  });

  it("never touches a database it did not make", async () => {
    const name = id("foreign");
    await sql(postgresUrl(), `CREATE DATABASE "${name}"`);
    try {
      await expect(provider.createBranch(name)).rejects.toMatchObject({ code: "NOT_A_BRANCH" });
      await expect(provider.deleteBranch(name)).rejects.toMatchObject({ code: "NOT_A_BRANCH" });
      expect(await databaseNames()).toContain(name);
    } finally {
      await sql(postgresUrl(), `DROP DATABASE "${name}"`);
    }
  });

  it("never touches a database whose branch comment is not a whole branch record", async () => {
    const name = id("half-comment");
    await sql(postgresUrl(), `CREATE DATABASE "${name}"`);
    await sql(postgresUrl(), `COMMENT ON DATABASE "${name}" IS 'consort-branch:{"root":"${rootDatabase}"}'`);
    try {
      await expect(provider.deleteBranch(name)).rejects.toMatchObject({ code: "NOT_A_BRANCH" });
      expect(await databaseNames()).toContain(name);
    } finally {
      await sql(postgresUrl(), `DROP DATABASE "${name}"`);
    }
  });

  it("deletes children first, drops the base, and deleting a missing branch is not an error", async () => {
    const parent = await provider.createBranch(id("parent-del"));
    const child = await provider.createBranch(id("child-del"), { from: parent.name });
    const grandchild = await provider.createBranch(id("grandchild-del"), { from: child.name, ttlSeconds: 60 });
    const holder = new pg.Client({ connectionString: await provider.connectionUrl(grandchild.name) });
    holder.on("error", () => {});
    await holder.connect();
    const progress: string[] = [];
    await provider.deleteBranch(parent.name, { onProgress: (m) => progress.push(m) });
    await holder.end().catch(() => {});
    const names = await databaseNames();
    await provider.settled();
    const after = await databaseNames();
    for (const gone of [
      parent.name,
      child.name,
      grandchild.name,
      baseDatabaseName(parent.name),
      baseDatabaseName(child.name),
      spareDatabaseName(parent.name),
      spareDatabaseName(child.name),
    ]) {
      expect(after).not.toContain(gone);
    }
    expect(names).not.toContain(parent.name);
    expect(progress.some((m) => m.includes(child.name))).toBe(true);
    await expect(provider.deleteBranch(parent.name)).resolves.toBeUndefined();
  });

  it("keeps metadata on the server: a second provider lists the same branches and parents", async () => {
    const created = await provider.createBranch(id("shared-meta"), { ttlSeconds: 3600 });
    const second = new PostgresBranchProvider({ adminUrl: postgresUrl(), rootDatabase });
    try {
      const seen = await second.getBranch(created.name);
      expect(seen).toEqual(created);
      expect((await second.listBranches())[0]).toMatchObject({ name: rootDatabase, isRoot: true, parent: undefined });
    } finally {
      await second.close();
    }
  });

  it("children see what the parent held when its base was last refreshed", async () => {
    const track = await provider.createBranch(id("track-refresh"));
    const url = await provider.connectionUrl(track.name);
    await sql(url, "INSERT INTO stock VALUES ('D-4', 5)");
    // A warm spare of the track's old base is ready: the throwaway fork takes it.
    await provider.settled();
    const oid = async (datname: string) =>
      (
        await sql<{ oid: number }>(postgresUrl(), "SELECT oid::int AS oid FROM pg_database WHERE datname = $1", [
          datname,
        ])
      )[0]?.oid;
    const spare = await oid(spareDatabaseName(track.name));
    expect(spare).toBeDefined();
    const stale = await provider.createBranch(id("before-refresh"), { from: track.name, ttlSeconds: 600 });
    expect(await oid(stale.name)).toBe(spare);
    expect(
      (await sql<{ n: number }>(await provider.connectionUrl(stale.name), "SELECT count(*)::int AS n FROM stock"))[0]!
        .n,
    ).toBe(2);
    const refreshed = await provider.refreshBase(track.name);
    // The refresh dropped the stale spare; the one made now holds the new state.
    await provider.settled();
    expect(Date.parse(refreshed.frozenAt!)).toBeGreaterThanOrEqual(Date.parse(track.frozenAt!));
    const fresh = await provider.createBranch(id("after-refresh"), { from: track.name, ttlSeconds: 600 });
    expect(
      (await sql<{ n: number }>(await provider.connectionUrl(fresh.name), "SELECT count(*)::int AS n FROM stock"))[0]!
        .n,
    ).toBe(3);
  });

  it("will not refresh a base while the branch has open connections, and says who holds it", async () => {
    const track = await provider.createBranch(id("track-busy"));
    const holder = new pg.Client({
      connectionString: await provider.connectionUrl(track.name),
      application_name: "migrate-step",
    });
    await holder.connect();
    // A session that stays open is refused once the wait for it to end has run out.
    const impatient = new PostgresBranchProvider({ adminUrl: postgresUrl(), rootDatabase, sessionExitWaitMs: 200 });
    try {
      await expect(impatient.refreshBase(track.name)).rejects.toMatchObject({
        code: "DATABASE_IN_USE",
        message: expect.stringContaining("migrate-step"),
      });
    } finally {
      await holder.end();
      await impatient.close();
    }
  });

  it("retakes a base at once after a client has closed whose server process has not exited yet", async () => {
    const track = await provider.createBranch(id("track-closing"));
    const holder = new pg.Client({
      connectionString: await provider.connectionUrl(track.name),
      application_name: "seed-step",
    });
    holder.on("error", () => {});
    await holder.connect();
    // The client hangs up while its server process is busy: the process notices and exits only
    // when the statement ends (as a closing client's backend that has not exited yet).
    const busy = holder.query("SELECT pg_sleep(0.6)").catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    (holder as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const lingering = await sql<{ n: number }>(
      postgresUrl(),
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'seed-step'",
      [track.name],
    );
    expect(lingering[0]!.n).toBe(1);
    const refreshed = await provider.refreshBase(track.name);
    expect(Date.parse(refreshed.frozenAt!)).toBeGreaterThanOrEqual(Date.parse(track.frozenAt!));
    await busy;
  });

  it("gives git branches that differ only in case or punctuation their own databases", async () => {
    const upper = sanitiseBranchName(`Feature/Cart-${suffix}`);
    const lower = sanitiseBranchName(`feature/cart-${suffix}`);
    const a = await provider.createBranch(upper, { ttlSeconds: 600 });
    const b = await provider.createBranch(lower, { ttlSeconds: 600 });
    expect(a.name).not.toBe(b.name);
    await sql(await provider.connectionUrl(a.name), "UPDATE stock SET quantity = 50 WHERE sku = 'A-1'");
    const other = await sql<{ quantity: number }>(
      await provider.connectionUrl(b.name),
      "SELECT quantity FROM stock WHERE sku = 'A-1'",
    );
    expect(other[0]!.quantity).toBe(3);
  });

  it("reapOrphans drops frozen bases, spares and half-made copies nothing will finish, and spares a branch being made", async () => {
    const ghost = id("ghost");
    const busy = id("busy-making");
    const deadMaker = `consort_new_${Date.now().toString(36)}_${(4_000_000).toString(36)}_${suffix}`;
    const leftovers = [
      [baseDatabaseName(ghost), `consort-base:${ghost}`],
      [spareDatabaseName(ghost), `consort-spare:${ghost}`],
      [deadMaker, null],
      [baseDatabaseName(busy), `consort-base:${busy}`],
    ] as const;
    for (const [db, comment] of leftovers) {
      await sql(postgresUrl(), `CREATE DATABASE "${db}"`);
      if (comment) await sql(postgresUrl(), `COMMENT ON DATABASE "${db}" IS '${comment}'`);
    }
    // Another process is making `busy` right now: it holds the branch's lock (LOCK_BRANCH in the provider).
    const maker = new pg.Client({ connectionString: postgresUrl() });
    await maker.connect();
    try {
      await maker.query("SELECT pg_advisory_lock($1::int, hashtext($2))", [0x436f6e73, busy]);
      const reaped = await provider.reapOrphans();
      expect(reaped).toEqual(expect.arrayContaining([baseDatabaseName(ghost), spareDatabaseName(ghost), deadMaker]));
      expect(reaped).not.toContain(baseDatabaseName(busy));
      const left = await databaseNames();
      for (const db of [baseDatabaseName(ghost), spareDatabaseName(ghost), deadMaker]) expect(left).not.toContain(db);
      expect(left).toContain(baseDatabaseName(busy));
    } finally {
      await maker.end();
      await sql(postgresUrl(), `DROP DATABASE IF EXISTS "${baseDatabaseName(busy)}"`);
    }
  });

  it("a throwaway fork arriving while a spare is being made waits for that spare instead of copying", async () => {
    const track = await provider.createBranch(id("track-spares"));
    await provider.settled();
    const oid = async (datname: string) =>
      (
        await sql<{ oid: number }>(postgresUrl(), "SELECT oid::int AS oid FROM pg_database WHERE datname = $1", [
          datname,
        ])
      )[0]?.oid;
    for (let round = 0; round < 3; round++) {
      const first = await provider.createBranch(id(`spare-a${round}`), { from: track.name, ttlSeconds: 600 });
      // The first fork took the spare; its replacement is being made now.
      const second = await provider.createBranch(id(`spare-b${round}`), { from: track.name, ttlSeconds: 600 });
      await provider.settled();
      const [a, b, spare] = [await oid(first.name), await oid(second.name), await oid(spareDatabaseName(track.name))];
      // The second fork is the spare made after the first fork, and a new one was made after it.
      expect(a!).toBeLessThan(b!);
      expect(b!).toBeLessThan(spare!);
    }
  });

  it("after a burst of 16 concurrent forks keeps 16 spares, so the next burst is served from them", async () => {
    const track = await provider.createBranch(id("track-burst"));
    await provider.settled();
    const burst = (tag: string) =>
      Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          provider.createBranch(id(`${tag}-${i}`), { from: track.name, ttlSeconds: 600 }),
        ),
      );
    await burst("burst-a");
    await provider.settled();
    const spares = await sql<{ oid: number }>(
      postgresUrl(),
      "SELECT oid::int AS oid FROM pg_database WHERE shobj_description(oid, 'pg_database') = $1",
      [`consort-spare:${track.name}`],
    );
    expect(spares).toHaveLength(16);
    const second = await burst("burst-b");
    const oids = await sql<{ oid: number }>(
      postgresUrl(),
      "SELECT oid::int AS oid FROM pg_database WHERE datname = ANY($1)",
      [second.map((b) => b.name)],
    );
    expect(new Set(oids.map((r) => r.oid))).toEqual(new Set(spares.map((r) => r.oid)));
    await provider.settled();
  }, 120_000);

  it("two processes creating the same branch at once get the same branch", async () => {
    const second = new PostgresBranchProvider({ adminUrl: postgresUrl(), rootDatabase });
    try {
      const [a, b] = await Promise.all([provider.createBranch(id("same-time")), second.createBranch(id("same-time"))]);
      expect(a).toEqual(b);
    } finally {
      await second.close();
    }
  });

  it("reaps expired throwaway branches when the next branch is created", async () => {
    const expired = await provider.createBranch(id("short-lived"), { ttlSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await provider.createBranch(id("next-cycle"), { ttlSeconds: 600 });
    expect(await provider.getBranch(expired.name)).toBeUndefined();
    expect(await databaseNames()).not.toContain(expired.name);
  });

  it("refuses to delete the root branch", async () => {
    await expect(provider.deleteBranch(rootDatabase)).rejects.toMatchObject({ code: "ROOT_PROTECTED" });
  });

  it("reports a branch that does not exist when asked for its URL", async () => {
    await expect(provider.connectionUrl(id("nowhere"))).rejects.toMatchObject({ code: "BRANCH_MISSING" });
  });
});

describe("creating the postgres provider", () => {
  it("says which variable to set when the server URL is missing", async () => {
    const config = ConsortConfig.parse({ database: { provider: "postgres" } });
    await expect(createProvider(config.database, { env: {} })).rejects.toThrow(/CONSORT_POSTGRES_URL/);
  });

  it("says the server is unreachable instead of hanging", async () => {
    const config = ConsortConfig.parse({ database: { provider: "postgres" } });
    const error = await createProvider(config.database, {
      env: { CONSORT_POSTGRES_URL: "postgresql://u:secret-pw@127.0.0.1:1/postgres" },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "SERVER_UNREACHABLE" });
    expect(String((error as Error).message)).not.toContain("secret-pw");
  });

  it("refuses a role that may not create databases", async () => {
    const role = `nocreate_${suffix}`;
    await sql(postgresUrl(), `CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    try {
      const url = new URL(postgresUrl());
      url.username = role;
      url.password = "pw";
      const config = ConsortConfig.parse({ database: { provider: "postgres" } });
      await expect(
        createProvider(config.database, { env: { CONSORT_POSTGRES_URL: url.toString() } }),
      ).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    } finally {
      await sql(postgresUrl(), `DROP ROLE ${role}`);
    }
  });
});
