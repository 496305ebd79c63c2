import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { databaseUrl } from "./pool.js";

/**
 * A tiny migration runner: applies `migrations/NNNN_name.up.sql` in order, each in its own
 * transaction, and records it in `schema_migrations`. `down` reverts the latest one.
 */
export const MIGRATIONS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../migrations");

export interface Migration {
  id: string;
  up: string;
  down: string;
}

export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".up.sql")).sort();
  return Promise.all(
    files.map(async (file) => {
      const id = file.slice(0, -".up.sql".length);
      return {
        id,
        up: await readFile(join(dir, file), "utf8"),
        down: await readFile(join(dir, `${id}.down.sql`), "utf8"),
      };
    }),
  );
}

async function applied(client: pg.ClientBase): Promise<string[]> {
  await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
  const { rows } = await client.query<{ id: string }>("SELECT id FROM schema_migrations ORDER BY id");
  return rows.map((r) => r.id);
}

/** Apply every pending migration; returns the ids applied now. */
export async function migrateUp(client: pg.ClientBase, dir?: string): Promise<string[]> {
  const done = new Set(await applied(client));
  const now: string[] = [];
  for (const migration of await loadMigrations(dir)) {
    if (done.has(migration.id)) continue;
    await client.query("BEGIN");
    try {
      await client.query(migration.up);
      await client.query("INSERT INTO schema_migrations (id) VALUES ($1)", [migration.id]);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw new Error(`migration ${migration.id} failed: ${(error as Error).message}`, { cause: error });
    }
    now.push(migration.id);
  }
  return now;
}

/** Revert the latest applied migration; returns its id, or undefined when none is applied. */
export async function migrateDown(client: pg.ClientBase, dir?: string): Promise<string | undefined> {
  const latest = (await applied(client)).at(-1);
  if (!latest) return undefined;
  const migration = (await loadMigrations(dir)).find((m) => m.id === latest);
  if (!migration) throw new Error(`migration ${latest} is applied but migrations/${latest}.down.sql is missing`);
  await client.query("BEGIN");
  try {
    await client.query(migration.down);
    await client.query("DELETE FROM schema_migrations WHERE id = $1", [latest]);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
  return latest;
}

async function main(direction: string | undefined): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    if (direction === "down") {
      const reverted = await migrateDown(client);
      console.log(reverted ? `reverted ${reverted}` : "nothing to revert");
    } else {
      const ids = await migrateUp(client);
      console.log(ids.length ? `applied ${ids.join(", ")}` : "up to date");
    }
  } finally {
    await client.end();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv[2]).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
