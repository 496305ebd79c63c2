import { randomBytes } from "node:crypto";
import { cp, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { simpleGit } from "simple-git";
import { stringify } from "yaml";
import { parse as parseYaml } from "yaml";
import { readFileSync } from "node:fs";
import { createProvider } from "../../src/substrate/index.js";
import { baseDatabaseName } from "../../src/substrate/postgres-catalog.js";
import { consortTools, ToolContext, type StateSource } from "../../src/tools/index.js";
import { afterAll, beforeAll } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { postgresUrl } from "../helpers/postgres.js";
import { connectClient } from "./mcp-client.js";

export const STOCKFLOW = resolve("examples/stockflow");
/** The cycle runner's stage patches of the example (read only): S2's code, and T8's test. */
const STAGES = resolve("test/cycle/fixtures/stockflow-stages");
/** The variable the fixture's consort.yml names for the server URL (never the URL itself). */
export const URL_ENV = "CONSORT_TOOLS_TEST_POSTGRES_URL";

export interface StockflowCheckout {
  path: string;
  /** The git branch the checkout is on (the track's branch). */
  branch: string;
  /** The root database of this checkout's branches on the shared server. */
  rootDatabase: string;
  /** A name no other test uses, for database branches (they share one server). */
  unique: (prefix: string) => string;
  context: (options?: { state?: StateSource; stateKey?: string; allowUnverifiedState?: boolean }) => ToolContext;
  cleanup: () => Promise<void>;
}

/**
 * A git checkout of examples/stockflow in a temp folder, on a track branch, whose configuration
 * points the `postgres` provider at the test run's shared embedded Postgres under a root
 * database of its own. Everything it creates on the server is dropped by `cleanup`.
 */
export async function stockflowCheckout(
  options: { stage?: "complete" | "t7-red"; branch?: string; designOnTrack?: boolean } = {},
): Promise<StockflowCheckout> {
  const path = await mkdtemp(join(tmpdir(), "consort-tools-"));
  await cp(STOCKFLOW, path, { recursive: true, filter: (source) => !source.includes("node_modules") });
  const id = randomBytes(4).toString("hex");
  // Database branches share one server: a track branch of its own keeps parallel test files apart.
  const branch = options.branch ?? `f1-record-stock-${id}`;
  const rootDatabase = `tools_root_${id}`;
  const config = parseYaml(readFileSync(join(STOCKFLOW, ".github/consort.yml"), "utf8")) as Record<string, unknown>;
  config.database = { provider: "postgres", postgres: { urlEnv: URL_ENV, rootDatabase } };
  await writeFile(join(path, ".github/consort.yml"), stringify(config));
  // The example has no dependencies of its own: it runs with this repository's pg, vitest and tsx.
  await symlink(resolve("node_modules"), join(path, "node_modules"), "dir");
  const git = simpleGit(path);
  await git.init(["--initial-branch=main"]);
  await git.addConfig("user.name", "Test Strategist").addConfig("user.email", "strategist@example.com");
  // designOnTrack: the default branch has the code but no design yet; the roles commit it on the track.
  if (options.designOnTrack) await rm(join(path, ".consort"), { recursive: true, force: true });
  await git
    .add(".")
    .commit(
      options.designOnTrack ? "StockFlow before F1's design" : "StockFlow F1 design\n\nConsort-Role: test-strategist",
    );
  await git.checkoutLocalBranch(branch);
  if (options.stage === "t7-red") {
    // Back to where T7's failing test is written and S2 is not implemented (T8 not written yet).
    await git.raw(["apply", "-R", join(STAGES, "t8-test.patch")]);
    await git.raw(["apply", "-R", join(STAGES, "s2-code.patch")]);
    await git.add(".").commit("RED: T7 stock by location\n\nConsort-Role: navigator");
  }
  const contexts: ToolContext[] = [];
  return {
    path,
    branch,
    rootDatabase,
    unique: (prefix) => `${prefix}-${id}-${randomBytes(2).toString("hex")}`,
    context: (options = {}) => {
      const context = new ToolContext({
        repoPath: path,
        state: options.state ?? { kind: "none" },
        ...(options.stateKey ? { stateKey: options.stateKey } : {}),
        allowUnverifiedState: options.allowUnverifiedState ?? false,
        createProvider: (database) => createProvider(database, { env: { [URL_ENV]: postgresUrl() } }),
      });
      contexts.push(context);
      return context;
    },
    cleanup: async () => {
      for (const context of contexts) await context.close();
      await dropEverythingUnder(rootDatabase);
      await rm(path, { recursive: true, force: true });
    },
  };
}

/** Drop the root database, every branch under it, and their frozen bases. */
async function dropEverythingUnder(rootDatabase: string): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string; comment: string | null }>(
      "SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database",
    );
    const ours = rows
      .filter((row) => row.datname === rootDatabase || row.comment?.includes(`"root":"${rootDatabase}"`))
      .map((row) => row.datname);
    const names = new Set([...ours, ...ours.map(baseDatabaseName)]);
    for (const row of rows)
      if (names.has(row.datname)) await admin.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/**
 * For the enclosing describe: a stockflow checkout (made with `options`) and an MCP client of every
 * Consort tool on it, made before its tests; the client is closed and the checkout removed after them.
 */
export function toolsOnCheckout(options?: Parameters<typeof stockflowCheckout>[0]): {
  readonly checkout: StockflowCheckout;
  readonly client: Client;
} {
  let made: { checkout: StockflowCheckout; client: Client; close: () => Promise<void> } | undefined;
  beforeAll(async () => {
    const checkout = await stockflowCheckout(options);
    made = { checkout, ...(await connectClient(consortTools, checkout.context())) };
  });
  afterAll(async () => {
    await made?.close();
    await made?.checkout.cleanup();
  });
  const started = () => {
    if (!made) throw new Error("toolsOnCheckout: the checkout and client are made in beforeAll; use them in a test");
    return made;
  };
  return {
    get checkout() {
      return started().checkout;
    },
    get client() {
      return started().client;
    },
  };
}
