import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { runPromote } from "../../src/deploy/promote.js";
import { PromoteRequest } from "../../src/contracts/deploy.js";
import { branchRoleName } from "../../src/substrate/branch-role.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { compareBranches } from "../../src/substrate/schema/index.js";
import { postgresUrl, sql } from "../helpers/postgres.js";
import { checkout, exampleConfig, uniqueBranch, type Checkout } from "../cycle/stockflow.js";

/**
 * A track's migration runs as the branch's own role, which owns its database. Whatever it plants
 * there must never run in a session of the server's admin: the provider connects as the admin
 * inside the branch's database each time it hands out a URL (the cycle, the release's schema
 * comparison, the promotion), and a fork or a promotion carries the planted objects onward.
 *
 * Each plant calls `public.escalate(route)`, which records `session_user` and tries to make the
 * track's role SUPERUSER: that succeeds only when the admin runs it.
 */

let config: ConsortConfig;
let provider: BranchProvider;
let root: string;

beforeAll(async () => {
  ({ config, provider, root } = await exampleConfig());
});
afterAll(async () => {
  await provider?.close();
});

/** What the track's migration sets up first: the log of who ran its code, and the escalation. */
const ESCALATE = `
CREATE TABLE public.ran_as (who text, route text);
GRANT ALL ON public.ran_as TO PUBLIC;
CREATE TABLE public.me AS SELECT current_user::text AS role;
GRANT SELECT ON public.me TO PUBLIC;
CREATE FUNCTION public.escalate(route text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.ran_as VALUES (session_user, route);
  BEGIN
    EXECUTE pg_catalog.format('ALTER ROLE %I SUPERUSER', (SELECT role FROM public.me));
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
END $$;
-- A schema and a table of its own, so the admin's ownership pass has work to do here.
CREATE SCHEMA app;
CREATE TABLE app.items (id int);
`;

/** Per route: what a track's migration defines so that a careless admin statement would call it. */
const ROUTES: Record<string, string> = {
  // Better matches than pg_catalog.format(text, VARIADIC "any") for the admin's format(...) calls.
  "a function": `
CREATE FUNCTION public.format(text, name, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM public.escalate('function'); RETURN pg_catalog.format($1, $2, $3); END $$;
CREATE FUNCTION public.format(text, text, regclass, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM public.escalate('function'); RETURN pg_catalog.format($1, $2, $3, $4); END $$;
CREATE FUNCTION public.format(text, regprocedure, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM public.escalate('function'); RETURN pg_catalog.format($1, $2, $3); END $$;`,
  // An exact match for "oid <> regrole", which pg_catalog answers only through oid <> oid.
  "an operator": `
CREATE FUNCTION public.differs(oid, regrole) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.escalate('operator'); RETURN $1 OPERATOR(pg_catalog.<>) $2::oid; END $$;
CREATE OPERATOR public.<> (LEFTARG = oid, RIGHTARG = regrole, FUNCTION = public.differs);
CREATE FUNCTION public.unlike(name, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.escalate('operator'); RETURN $1::text OPERATOR(pg_catalog.!~~) $2; END $$;
CREATE OPERATOR public.!~~ (LEFTARG = name, RIGHTARG = text, FUNCTION = public.unlike);`,
  // A type of the track's own with an implicit cast to text: any admin statement that turned one
  // of its values into text would call the cast's function.
  "a cast": `
CREATE TYPE public.mood AS ENUM ('calm');
CREATE FUNCTION public.mood_text(public.mood) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM public.escalate('cast'); RETURN 'calm'; END $$;
CREATE CAST (public.mood AS text) WITH FUNCTION public.mood_text(public.mood) AS IMPLICIT;
CREATE TABLE app.moods (m public.mood DEFAULT 'calm');`,
  // SECURITY DEFINER runs as the track's role, but the admin's session still ran the track's code.
  "a SECURITY DEFINER function": `
CREATE FUNCTION public.format(text, name, text) RETURNS text LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN PERFORM public.escalate('security definer'); RETURN pg_catalog.format($1, $2, $3); END $$;
CREATE FUNCTION public.format(text, text, regclass, text) RETURNS text LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN PERFORM public.escalate('security definer'); RETURN pg_catalog.format($1, $2, $3, $4); END $$;`,
};

/** Who ran the track's code, and whether its role became a superuser; `[]` and false when nothing ran. */
async function evidence(branch: string): Promise<{ ran: unknown[]; superuser: boolean }> {
  const ran = await sql(postgresUrl(branch), "SELECT who, route FROM public.ran_as ORDER BY route");
  const role = await sql(
    postgresUrl(),
    `SELECT rolsuper FROM pg_roles WHERE rolname = '${branchRoleName(root, branch)}'`,
  );
  return { ran, superuser: role[0]?.rolsuper === true };
}

describe("a track's migration and the admin's sessions", { timeout: 120_000 }, () => {
  for (const [route, plant] of Object.entries(ROUTES)) {
    test(`${route} planted by the track never runs in the admin's session of the release's schema comparison`, async () => {
      const branch = uniqueBranch(`hijack-${route.split(" ")[1]!.toLowerCase()}`);
      await provider.createBranch(branch, { from: root });
      // The track's migration, with the URL a cycle gets.
      await sql(await provider.connectionUrl(branch), ESCALATE + plant);

      await compareBranches(provider, branch);

      expect(await evidence(branch)).toEqual({ ran: [], superuser: false });
    });
  }

  test("an event trigger's function the track took over never runs in the admin's session", async () => {
    // A root adopted with event triggers (made by a superuser: nobody else can), as a dump of a
    // hosted database brings them: on DDL and on every login.
    const { provider: adopted, root: adoptedRoot } = await exampleConfig();
    try {
      await adopted.rootBranch();
      await sql(
        postgresUrl(adoptedRoot),
        `CREATE FUNCTION public.audit_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$;
         CREATE EVENT TRIGGER audit_ddl ON ddl_command_end EXECUTE FUNCTION public.audit_ddl();
         CREATE FUNCTION public.audit_login() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$;
         CREATE EVENT TRIGGER audit_login ON login EXECUTE FUNCTION public.audit_login();`,
      );
      await adopted.refreshBase!(adoptedRoot);
      const branch = uniqueBranch("hijack-event");
      await adopted.createBranch(branch, { from: adoptedRoot });
      const url = await adopted.connectionUrl(branch);
      await sql(url, ESCALATE);
      // The track rewrites the triggers' functions where it can; what it may not is refused.
      const refused: string[] = [];
      for (const fn of ["audit_ddl", "audit_login"])
        await sql(
          url,
          `CREATE OR REPLACE FUNCTION public.${fn}() RETURNS event_trigger LANGUAGE plpgsql AS $$
           BEGIN PERFORM public.escalate('event trigger ${fn}'); END $$`,
        ).catch((error: Error) => refused.push(error.message));

      await compareBranches(adopted, branch);

      // Rows the admin's sessions wrote (the track's own logins may run its login trigger: that is its own).
      // Read in a session of our own with event triggers off: the login trigger would fire for it too.
      const quiet = `${postgresUrl(branch)}?options=${encodeURIComponent("-c event_triggers=off")}`;
      const ran = await sql(quiet, "SELECT who, route FROM public.ran_as WHERE who = current_user");
      const role = await sql(
        postgresUrl(),
        `SELECT rolsuper FROM pg_roles WHERE rolname = '${branchRoleName(adoptedRoot, branch)}'`,
      );
      expect({ ran, superuser: role[0]?.rolsuper }).toEqual({ ran: [], superuser: false });
      expect(refused).toEqual(["must be owner of function audit_ddl", "must be owner of function audit_login"]);
      // The track cannot make event triggers of its own either.
      await expect(
        sql(url, "CREATE EVENT TRIGGER mine ON ddl_command_start EXECUTE FUNCTION public.audit_ddl()"),
      ).rejects.toThrow('permission denied to create event trigger "mine"');
    } finally {
      await adopted.close();
    }
  });

  test("ALTER DEFAULT PRIVILEGES reaches only the track's own objects, never the admin's", async () => {
    const branch = uniqueBranch("hijack-defaults");
    await provider.createBranch(branch, { from: root });
    const url = await provider.connectionUrl(branch);
    const admin = decodeURIComponent(new URL(postgresUrl()).username);
    await sql(url, ESCALATE + "ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO PUBLIC");
    await expect(
      sql(url, `ALTER DEFAULT PRIVILEGES FOR ROLE "${admin}" GRANT ALL ON TABLES TO PUBLIC`),
    ).rejects.toThrow("permission denied to change default privileges");

    await compareBranches(provider, branch);

    expect(await evidence(branch)).toEqual({ ran: [], superuser: false });
  });

  test("what a promoted migration planted in the parent never runs as the admin, in the parent or in its later forks", async () => {
    const parent = uniqueBranch("hijack-trunk");
    await provider.createBranch(parent, { from: root });
    const done: Checkout = await checkout([
      {
        message: "a migration that plants",
        mutate: [(dir) => writeFile(join(dir, "plant.sql"), ESCALATE + ROUTES["a function"]!)],
      },
    ]);
    const planting = `node -e '
      const pg = require("pg");
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      client.connect().then(() => client.query(require("fs").readFileSync("plant.sql", "utf8")))
        .then(() => client.end(), (e) => { console.error(e.message); process.exit(1); });
    '`;
    try {
      const promoted = await runPromote(
        PromoteRequest.parse({ track: "hijack", commit: done.commit, database: { parent } }),
        { provider, config: { ...config, commands: { ...config.commands, migrate: planting } }, cwd: done.dir },
      );
      expect(promoted.reasons).toEqual([]);

      // The next release compares a fork of the promoted parent with it.
      const child = uniqueBranch("hijack-fork");
      await provider.createBranch(child, { from: parent });
      await compareBranches(provider, child);

      expect(await evidence(parent)).toEqual({ ran: [], superuser: false });
      expect(await evidence(child)).toEqual({ ran: [], superuser: false });
    } finally {
      await done.remove();
    }
  });
});
