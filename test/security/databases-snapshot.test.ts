import { chmod, mkdtemp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { releaseSchema } from "../../src/deploy/rebuild.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { breakingFindings, compareSchemas, snapshotSchema } from "../../src/substrate/schema/index.js";
import { postgresUrl, sql } from "../helpers/postgres.js";
import { exampleConfig, uniqueBranch } from "../cycle/stockflow.js";

/**
 * The release job's schema comparison reads the track's database, where the track's migration
 * defined what it liked. Catalog queries call functions, aggregates and operators by name: a
 * better match the track defines in `public` (an `array_agg(text)` beats the catalog's
 * polymorphic one) would run in the comparison's session, rewrite what the snapshot says (a
 * breaking UNIQUE shown on a column without duplicates), and run as whoever reads it (on a
 * provider whose logins are the app's own identity, not the branch's role).
 */

let provider: BranchProvider;
let parent: string;
/** The track's change: a UNIQUE over a column whose parent rows hold duplicates (its own no longer do). */
const BREAKING =
  "DELETE FROM public.shelf WHERE id = 2; ALTER TABLE public.shelf ADD CONSTRAINT one_spot UNIQUE (spot)";
const HONEST = ["UNIQUE public.shelf.one_spot breaks 2 rows with duplicate keys"];

beforeAll(async () => {
  let root: string;
  ({ provider, root } = await exampleConfig());
  parent = uniqueBranch("snapshot-parent");
  await provider.createBranch(parent, { from: root });
  await sql(
    await provider.connectionUrl(parent),
    "CREATE TABLE public.shelf (id int PRIMARY KEY, spot text); INSERT INTO public.shelf VALUES (1, 'a'), (2, 'a'), (3, 'b')",
  );
  await provider.refreshBase!(parent);
});
afterAll(async () => {
  await provider?.close();
});

/** Per route: what a track's migration defines so that a careless catalog query would call it. */
const ROUTES: Record<string, string> = {
  // Columns of every constraint come out as the primary key's: the UNIQUE seems to cover `id`.
  "an aggregate (array_agg(text), a better match than the catalog's array_agg(anynonarray))": `
CREATE FUNCTION public.first_column(text[], text) RETURNS text[] LANGUAGE sql AS $$ SELECT ARRAY['id'] $$;
CREATE AGGREGATE public.array_agg(text) (SFUNC = public.first_column, STYPE = text[]);`,
  // A constraint's key (int2[]) unnests to column 1 alone.
  "a set-returning function (unnest(smallint[]), a better match than unnest(anyarray))": `
CREATE FUNCTION public.unnest(smallint[]) RETURNS SETOF smallint LANGUAGE sql AS $$ SELECT 1::smallint $$;`,
  // Schemas are filtered with NOT LIKE (name !~~ unknown): an exact match hides the track's tables.
  "an operator (name !~~ name)": `
CREATE FUNCTION public.not_like(name, name) RETURNS boolean LANGUAGE sql AS $$ SELECT false $$;
CREATE OPERATOR public.!~~ (LEFTARG = name, RIGHTARG = name, FUNCTION = public.not_like);`,
};

/** A track forked from the parent whose migration ran `migration`, as the track's own role. */
async function track(prefix: string, migration: string): Promise<{ branch: string; url: string }> {
  const branch = uniqueBranch(prefix);
  await provider.createBranch(branch, { from: parent });
  const url = await provider.connectionUrl(branch);
  await sql(url, migration);
  return { branch, url };
}

describe("the release's schema snapshot and a track's shadowing definitions", { timeout: 120_000 }, () => {
  for (const [route, plant] of Object.entries(ROUTES)) {
    test(`${route} planted by the track changes nothing the release's schema comparison reports`, async () => {
      const honest = await track("snapshot-honest", BREAKING);
      const planted = await track("snapshot-planted", `${BREAKING};\n${plant}`);

      const release = await releaseSchema(provider, { branch: planted.branch, parent }, "shared", "");

      expect(release.breaking).toEqual(HONEST);
      expect(await snapshotSchema(planted.url)).toEqual(await snapshotSchema(honest.url));
    });
  }

  test("read with a login that is not the track's (the server's admin here, the app's own identity on Lakebase), the snapshot runs none of the track's code: its COPY … TO PROGRAM never runs", async () => {
    const folder = await mkdtemp(join(tmpdir(), "consort-snapshot-"));
    // The server's OS user (postgres, when the tests run as root) must be able to write the marker.
    await chmod(folder, 0o777);
    const marker = join(folder, "ran");
    try {
      const planted = await track(
        "snapshot-admin",
        `${BREAKING};
CREATE FUNCTION public.first_column(text[], text) RETURNS text[] LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE pg_catalog.format('COPY (SELECT session_user) TO PROGRAM %L', 'cat > ${marker}');
  RETURN ARRAY['id'];
EXCEPTION WHEN insufficient_privilege THEN RETURN ARRAY['id'];
END $$;
CREATE AGGREGATE public.array_agg(text) (SFUNC = public.first_column, STYPE = text[]);`,
      );

      const comparison = await compareSchemas(postgresUrl(parent), postgresUrl(planted.branch), {
        branch: planted.branch,
        parent,
      });

      expect(existsSync(marker)).toBe(false);
      expect(breakingFindings(comparison)).toEqual(HONEST);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
