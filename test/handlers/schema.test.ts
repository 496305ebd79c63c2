import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { reach } from "../orchestrator/helpers/reach.js";
import { createHarness, type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { FakeStateBranch, INSTALLATION_ID } from "./fake-repo.js";
import { PG_URL_ENV, testDatabase, type TestDatabase } from "./database.js";
import { createdChecks, expectChecks, expectConfig, pullRequestPayload, stateOf } from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let db: TestDatabase;
let branch: string;

beforeEach(() => {
  db = testDatabase();
  ({ h, state, branch } = trackRepo({ openProvider: db.openProvider }));
});
afterEach(async () => {
  h.github.dispose();
  await db.cleanup([branch]);
});

/** A track whose preview deploy is verified (at the deploy gate), paired with `branch` on the real server. */
function atDeployGate() {
  const snapshot = structuredClone(reach("deploy-gate").snapshot);
  Object.assign(snapshot.context, { trackId: branch, branch, databaseBranch: branch, parentDatabaseBranch: db.root });
  state.seed(stateOf(branch, snapshot));
  return snapshot;
}

/** A track just started (no release cycle yet), paired with `branch` on the real server. */
function justStarted() {
  const snapshot = structuredClone(reach("stories").snapshot);
  Object.assign(snapshot.context, { trackId: branch, branch, databaseBranch: branch, parentDatabaseBranch: db.root });
  state.seed(stateOf(branch, snapshot));
  return snapshot;
}

/** Run SQL on the root (the parent), then fork the track's branch from it, then run SQL on the branch. */
async function forkWith(onParent: string[], onBranch: string[]) {
  const provider = await db.openProvider({
    provider: "postgres",
    local: {},
    postgres: { urlEnv: PG_URL_ENV, rootDatabase: db.root },
  });
  const run = async (name: string, statements: string[]) => {
    const client = new pg.Client({ connectionString: await provider.connectionUrl(name) });
    await client.connect();
    try {
      for (const sql of statements) await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    const root = await provider.rootBranch();
    await run(root, onParent);
    // Children fork from a frozen base of the parent: refresh it so the parent's rows reach the fork.
    await provider.refreshBase?.(root);
    await provider.createBranch(branch, { from: root });
    await run(branch, onBranch);
  } finally {
    await provider.close();
  }
}

async function openPr(head: string) {
  mockInstallationToken(h.github, INSTALLATION_ID);
  expectConfig(h.github, db.configYaml);
  expectChecks(h.github, head);
  h.github.on("GET", "/repos/acme/shop/pulls", [200, []]);
  await h.receive("pull_request", pullRequestPayload(webhookPayload("pull_request", "opened"), branch, head));
  h.github.verify();
}

describe("consort/schema", () => {
  it("shows the track's schema diff against its parent, from the real catalogs, and passes when no row breaks", async () => {
    const snapshot = atDeployGate();
    const provider = await db.openProvider({
      provider: "postgres",
      local: {},
      postgres: { urlEnv: PG_URL_ENV, rootDatabase: db.root },
    });
    try {
      await provider.createBranch(branch, { from: await provider.rootBranch() });
      const client = new pg.Client({ connectionString: await provider.connectionUrl(branch) });
      await client.connect();
      await client.query(
        "CREATE TABLE stock_records (id serial PRIMARY KEY, sku text NOT NULL, quantity integer NOT NULL)",
      );
      await client.end();
    } finally {
      await provider.close();
    }
    await openPr(snapshot.context.head);
    const schema = createdChecks(h.github)["consort/schema"]!;
    expect(schema, schema.output.summary).toMatchObject({ status: "completed", conclusion: "success" });
    expect(schema.output.summary).toContain("stock_records");
  });

  it("a diff that cannot be computed (the branch is gone) fails the check with the reason", async () => {
    const snapshot = atDeployGate();
    await openPr(snapshot.context.head);
    const schema = createdChecks(h.github)["consort/schema"]!;
    expect(schema).toMatchObject({ conclusion: "failure" });
    expect(schema.output.summary).toContain("could not be computed");
  });

  it("is computed on every check update, before any release cycle: a track that changes nothing passes", async () => {
    const snapshot = justStarted();
    await forkWith(
      ["CREATE TABLE items (id serial PRIMARY KEY, sku text)", "INSERT INTO items (sku) VALUES ('a'), ('b')"],
      [],
    );
    await openPr(snapshot.context.head);
    const schema = createdChecks(h.github)["consort/schema"]!;
    expect(schema, schema.output.summary).toMatchObject({ status: "completed", conclusion: "success" });
  });

  it("fails, naming the rows lost, when the track's branch drops a table its parent holds rows in", async () => {
    const snapshot = justStarted();
    await forkWith(
      ["CREATE TABLE items (id serial PRIMARY KEY, sku text)", "INSERT INTO items (sku) VALUES ('a'), ('b')"],
      ["DROP TABLE items"],
    );
    await openPr(snapshot.context.head);
    const schema = createdChecks(h.github)["consort/schema"]!;
    expect(schema, schema.output.summary).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(schema.output.summary).toMatch(/dropping table .*items loses 2 rows/);
  });

  it("fails closed, with the reason, when the database provider cannot be opened", async () => {
    h.github.dispose();
    h = createHarness({
      openProvider: async () => {
        throw new Error("connection refused by the database host");
      },
    });
    state = new FakeStateBranch(h.github);
    const snapshot = justStarted();
    await openPr(snapshot.context.head);
    const schema = createdChecks(h.github)["consort/schema"]!;
    expect(schema, schema.output.summary).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(schema.output.summary).toContain("connection refused by the database host");
  });
});
