import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { runCycle } from "../../src/cycle/run.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { RED_T7, checkout, exampleConfig, uniqueBranch, type Checkout } from "../cycle/stockflow.js";

/**
 * The commands' DATABASE_URL reaches the throwaway branch and nothing else. A real RED cycle on
 * StockFlow whose migrate command is an attacker's script: with the URL it was given, it tries
 * another track's database, the root, and the admin's name with the same password.
 */

const TEST_LIST = JSON.parse(
  await readFile(new URL("../../examples/stockflow/.consort/test-list.json", import.meta.url), "utf8"),
) as { tests: Array<{ id: string; file: string; title: string }> };
const T7 = TEST_LIST.tests.find((t) => t.id === "T7")!;

let config: ConsortConfig;
let provider: BranchProvider;
let root: string;
const TRACK_DB = uniqueBranch("db-attack");
const OTHER_TRACK_DB = uniqueBranch("db-victim");
let c: Checkout;

beforeAll(async () => {
  ({ config, provider, root } = await exampleConfig());
  await provider.createBranch(TRACK_DB, { from: await provider.rootBranch() });
  await provider.createBranch(OTHER_TRACK_DB, { from: await provider.rootBranch() });
  // The other track has been used: its login exists, as it would after its own cycles.
  await provider.connectionUrl(OTHER_TRACK_DB);
  c = await checkout(RED_T7);
});
afterAll(async () => {
  await c?.remove();
  await provider?.close();
});

/** The attacker's migrate script: each line says what one attempt got. */
const ATTACK = (other: string, rootDatabase: string) => `node -e '
const pg = require("pg");
const given = new URL(process.env.DATABASE_URL);
const attempt = async (label, change) => {
  const url = new URL(given);
  change(url);
  const client = new pg.Client({ connectionString: url.href });
  try { await client.connect(); await client.end(); console.log(label + ": connected"); }
  catch (error) { console.log(label + ": " + error.message); }
};
(async () => {
  await attempt("other track", (u) => { u.pathname = "/${other}"; });
  await attempt("root", (u) => { u.pathname = "/${rootDatabase}"; });
  await attempt("admin", (u) => { u.username = "postgres"; });
  await attempt("own branch", () => {});
})();
'`;

describe("the throwaway branch's login", { timeout: 120_000 }, () => {
  test("a migrate command cannot open another track's database, the root, or the admin's login with the URL it was given", async () => {
    const result = await runCycle(
      CycleRequest.parse({
        track: "db-attack",
        commit: c.commit,
        step: "red",
        database: { branch: TRACK_DB },
        tests: { inTurn: [{ id: "T7", file: T7.file, title: T7.title }], earlierGreen: [] },
      }),
      {
        provider,
        config: { ...config, commands: { ...config.commands, migrate: ATTACK(OTHER_TRACK_DB, root) } },
        cwd: c.dir,
      },
    );

    expect(result.commands.migrate!.outputTail).toBe(
      [
        `other track: permission denied for database "${OTHER_TRACK_DB}"`,
        `root: permission denied for database "${root}"`,
        `admin: password authentication failed for user "postgres"`,
        "own branch: connected",
      ].join("\n"),
    );
  });
});
