import pg from "pg";
import { localUrlEnv, type ConsortConfig } from "../config/consort-config.js";
import { adminConfig } from "./admin-session.js";
import { LOCAL_ROOT_DATABASE, ensureLocalServer, resolveLocalDataDir } from "./local-server.js";
import { describeServer, toSubstrateError } from "./pg-errors.js";
import { PostgresBranchProvider } from "./postgres-provider.js";
import { createLakebaseProvider } from "./lakebase/provider.js";
import { placementOf } from "../contracts/placement.js";
import { SubstrateError, type BranchProvider } from "./provider.js";
import { consortCommand } from "../contracts/command.js";

export interface CreateProviderOptions {
  /** Where secrets and overrides come from (CONSORT_DATA_DIR, the postgres URL, Lakebase tokens). */
  env?: NodeJS.ProcessEnv;
  /** Progress for slow steps (starting the embedded server). */
  onProgress?: (message: string) => void;
}

/**
 * The root branch's id where the configuration alone tells it (the database it names), without
 * reaching the provider: the default branch pairs with it. Lakebase's root is its project's
 * default branch, known only by asking (undefined).
 */
export function configuredRootBranch(database: ConsortConfig["database"]): string | undefined {
  if (database.provider === "local") return LOCAL_ROOT_DATABASE;
  if (database.provider === "postgres") return database.postgres.rootDatabase;
  return undefined;
}

/** The provider the configuration names, ready to use (the embedded server started or reused). */
export async function createProvider(
  database: ConsortConfig["database"],
  options: CreateProviderOptions = {},
): Promise<BranchProvider> {
  const env = options.env ?? process.env;
  switch (database.provider) {
    case "local": {
      const start = async () =>
        (
          await ensureLocalServer({
            dataDir: resolveLocalDataDir(database.local.dataDir, env),
            ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          })
        ).url("postgres");
      return new PostgresBranchProvider({
        kind: "local",
        adminUrl: await start(),
        rootDatabase: LOCAL_ROOT_DATABASE,
        // The embedded server died (a crash, kill -9): start it again (on a new port) once its old processes are gone.
        recover: start,
      });
    }
    case "postgres": {
      const adminUrl = postgresUrlFrom(env, database.postgres.urlEnv);
      await checkCanCreateDatabases(adminUrl);
      return new PostgresBranchProvider({ kind: "postgres", adminUrl, rootDatabase: database.postgres.rootDatabase });
    }
    case "lakebase": {
      if (!database.lakebase) {
        throw new SubstrateError(
          "database.provider is lakebase but database.lakebase is not set",
          "set database.lakebase.host and database.lakebase.project in .github/consort.yml",
          "CONFIG_MISSING",
        );
      }
      return createLakebaseProvider(database.lakebase, {
        env,
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });
    }
  }
}

/**
 * The provider a dispatched job (cycle, release, promotion) uses. With `local` on a self-hosted
 * runner the jobs share the app's branches: they use the app's embedded server, handed over in
 * `database.local.urlEnv`, and never start one of their own (which would quietly give them other
 * databases than the app's). Elsewhere it is the configured provider.
 */
export async function openJobProvider(
  config: Pick<ConsortConfig, "database" | "jobs">,
  options: CreateProviderOptions = {},
): Promise<BranchProvider> {
  const placement = placementOf(config);
  if (placement.provider !== "local" || placement.runner !== "self-hosted")
    return createProvider(config.database, options);
  const name = localUrlEnv(config.database);
  const env = options.env ?? process.env;
  if (!env[name]?.trim())
    throw new SubstrateError(
      `the jobs run on a self-hosted runner (jobs.runsOn in .github/consort.yml), so they use the app's embedded server, but ${name} is not set`,
      `on the app's host run \`${consortCommand(`db url ${LOCAL_ROOT_DATABASE}`)}\` and store the URL as the repository secret ${name}; the workflows pass it to the Consort step`,
      "CONFIG_MISSING",
    );
  // The handed-over URL may name any database; branches are made from a session on `postgres`,
  // never on the root, whose sessions would block copying it.
  const url = new URL(postgresUrlFrom(env, name));
  url.pathname = "/postgres";
  const adminUrl = url.toString();
  await checkCanCreateDatabases(adminUrl);
  return new PostgresBranchProvider({ kind: "local", adminUrl, rootDatabase: LOCAL_ROOT_DATABASE });
}

function postgresUrlFrom(env: NodeJS.ProcessEnv, urlEnv: string): string {
  const raw = env[urlEnv]?.trim();
  if (!raw) {
    throw new SubstrateError(
      `the postgres provider needs a server URL in the environment variable ${urlEnv}, which is not set`,
      `export ${urlEnv}=postgresql://user:password@host:5432/postgres (a role that may create databases)`,
      "CONFIG_MISSING",
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SubstrateError(
      `${urlEnv} is not a URL`,
      `set it to postgresql://user:password@host:5432/postgres`,
      "CONFIG_INVALID",
    );
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new SubstrateError(
      `${urlEnv} must be a postgresql:// URL, not ${url.protocol}//`,
      `set it to postgresql://user:password@host:5432/postgres`,
      "CONFIG_INVALID",
    );
  }
  return raw;
}

async function checkCanCreateDatabases(adminUrl: string): Promise<void> {
  const server = describeServer(adminUrl);
  const client = new pg.Client({ ...adminConfig(adminUrl), connectionTimeoutMillis: 10_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    const row = await client.query<{ ok: boolean; version: number }>(
      "SELECT (rolcreatedb OR rolsuper) AS ok, pg_catalog.current_setting('server_version_num')::int AS version FROM pg_catalog.pg_roles WHERE rolname = CURRENT_USER",
    );
    const first = row.rows[0];
    if (!first?.ok) {
      throw new SubstrateError(
        `the role in the URL may not create databases on ${server}`,
        "grant it: ALTER ROLE <user> CREATEDB",
        "PERMISSION_DENIED",
      );
    }
    if (first.version < 150000) {
      throw new SubstrateError(
        `${server} runs Postgres ${Math.floor(first.version / 10000)}; branches need CREATE DATABASE … STRATEGY (Postgres 15 or later)`,
        "use Postgres 15 or later (18 for file_copy_method = clone)",
        "SERVER_TOO_OLD",
      );
    }
  } catch (error) {
    throw toSubstrateError(error, { server, action: "connecting" });
  } finally {
    await client.end().catch(() => {});
  }
}
