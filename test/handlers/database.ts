import { randomBytes } from "node:crypto";
import pg from "pg";
import type { DatabaseConfig } from "../../src/config/consort-config.js";
import { createProvider } from "../../src/substrate/create-provider.js";
import { baseDatabaseName } from "../../src/substrate/postgres-catalog.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import type { z } from "zod";
import { postgresUrl } from "../helpers/postgres.js";

/**
 * The database side of handler tests: the REAL postgres provider on the run's shared server, with
 * a root database of its own so tests never see each other's branches.
 */
export const PG_URL_ENV = "CONSORT_HANDLER_TEST_PG_URL";

export interface TestDatabase {
  root: string;
  /** The `.github/consort.yml` lines that select this provider. */
  configYaml: string;
  openProvider: (database: z.infer<typeof DatabaseConfig>) => Promise<BranchProvider>;
  /** Is there a database branch by this name? (asked of the real provider) */
  branchExists(name: string): Promise<boolean>;
  /** Drop the root, every branch made in the test and their frozen bases. */
  cleanup(branches: string[]): Promise<void>;
}

export function testDatabase(): TestDatabase {
  const root = `root_${randomBytes(5).toString("hex")}`;
  const env = { [PG_URL_ENV]: postgresUrl() };
  const openProvider = (database: z.infer<typeof DatabaseConfig>) => createProvider(database, { env });
  return {
    root,
    configYaml: `database:\n  provider: postgres\n  postgres:\n    urlEnv: ${PG_URL_ENV}\n    rootDatabase: ${root}\n`,
    openProvider,
    async branchExists(name) {
      const provider = await openProvider({
        provider: "postgres",
        local: {},
        postgres: { urlEnv: PG_URL_ENV, rootDatabase: root },
      });
      try {
        return (await provider.getBranch(name)) !== undefined;
      } finally {
        await provider.close();
      }
    },
    async cleanup(branches) {
      const client = new pg.Client({ connectionString: postgresUrl() });
      await client.connect();
      try {
        for (const name of [...branches, root]) {
          for (const db of [name, baseDatabaseName(name)])
            await client.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
        }
      } finally {
        await client.end();
      }
    },
  };
}
