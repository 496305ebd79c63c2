import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { postgresUrl, sql } from "../helpers/postgres.js";
import { exampleConfig, uniqueBranch } from "../cycle/stockflow.js";

/**
 * The URL a cycle's commands get reaches its own database and nothing else of the server: not the
 * `postgres` and `template1` databases every server has, and not the names of the other tracks'
 * databases, which the server's catalogs would otherwise show to every login.
 */

let provider: BranchProvider;
let root: string;
const TRACK = uniqueBranch("list-attack");
const OTHER = uniqueBranch("list-victim");
let url: string;

beforeAll(async () => {
  ({ provider, root } = await exampleConfig());
  await provider.createBranch(TRACK, { from: root });
  await provider.createBranch(OTHER, { from: root });
  url = await provider.connectionUrl(TRACK);
});
afterAll(async () => {
  await provider?.close();
});

/** What `url`'s role gets from `query`: the rows' text, or the server's refusal. */
const attempt = (query: string): Promise<string> =>
  sql(url, query).then(
    (rows) => JSON.stringify(rows),
    (error: Error) => error.message,
  );

describe("a branch's login and the rest of the server", () => {
  test("cannot connect to the postgres and template1 databases", async () => {
    const other = (database: string) => {
      const target = new URL(url);
      target.pathname = `/${database}`;
      return sql(target.href, "SELECT 1").then(
        () => "connected",
        (error: Error) => error.message,
      );
    };
    expect(await other("postgres")).toBe('permission denied for database "postgres"');
    expect(await other("template1")).toBe('permission denied for database "template1"');
    expect(await other("template0")).toBe('database "template0" is not currently accepting connections');
  });

  test("cannot list the server's databases or read another track's name through any catalog it can reach", async () => {
    const [{ oid }] = (await sql(postgresUrl(), `SELECT oid::int FROM pg_database WHERE datname = '${OTHER}'`)) as [
      { oid: number },
    ];

    const routes: Record<string, string> = {
      pg_database: "SELECT datname FROM pg_catalog.pg_database",
      pg_stat_database: "SELECT datname FROM pg_catalog.pg_stat_database",
      pg_stat_database_conflicts: "SELECT datname FROM pg_catalog.pg_stat_database_conflicts",
      pg_stat_activity: "SELECT datname FROM pg_catalog.pg_stat_activity",
      pg_shdescription: "SELECT description FROM pg_catalog.pg_shdescription",
      shobj_description: `SELECT pg_catalog.shobj_description(${oid}, 'pg_database')`,
      pg_describe_object: `SELECT pg_catalog.pg_describe_object('pg_catalog.pg_database'::regclass, ${oid}, 0)`,
      pg_identify_object: `SELECT name FROM pg_catalog.pg_identify_object('pg_catalog.pg_database'::regclass, ${oid}, 0)`,
      pg_identify_object_as_address: `SELECT object_names FROM pg_catalog.pg_identify_object_as_address('pg_catalog.pg_database'::regclass, ${oid}, 0)`,
      pg_database_size: `SELECT pg_catalog.pg_database_size(${oid}::oid)`,
      pg_replication_slots: "SELECT database FROM pg_catalog.pg_replication_slots",
      pg_prepared_xacts: "SELECT database FROM pg_catalog.pg_prepared_xacts",
      pg_stat_progress_vacuum: "SELECT datname FROM pg_catalog.pg_stat_progress_vacuum",
    };
    const answers: Record<string, string> = {};
    for (const [route, query] of Object.entries(routes)) answers[route] = await attempt(query);

    // Every route is refused by name: nothing of another database comes back, not even in an error.
    const kinds: Record<string, string> = {
      pg_database: "table",
      pg_shdescription: "table",
      shobj_description: "table",
    };
    const functions = ["pg_describe_object", "pg_identify_object", "pg_identify_object_as_address", "pg_database_size"];
    expect(answers).toEqual(
      Object.fromEntries(
        Object.keys(routes).map((route) => [
          route,
          route === "shobj_description"
            ? "permission denied for table pg_shdescription"
            : `permission denied for ${kinds[route] ?? (functions.includes(route) ? "function" : "view")} ${route}`,
        ]),
      ),
    );
    // Its own database it may still name.
    expect(await attempt("SELECT pg_catalog.current_database() AS name")).toBe(JSON.stringify([{ name: TRACK }]));
  });
});
