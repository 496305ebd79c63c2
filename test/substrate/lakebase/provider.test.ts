import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import { LakebaseProviderSettings } from "../../../src/config/consort-config.js";
import { createLakebaseProvider, type LakebaseProvider } from "../../../src/substrate/lakebase/provider.js";

/**
 * The Lakebase provider against HTTP mocks that follow shared/reference/lakebase-api.md exactly:
 * paths under /api/2.0/postgres/, the Branch itself as the create body, operations polled by their
 * opaque name, error bodies `{error_code, message, details}`. Time is a fake clock, so waits are instant.
 */

const HOST = "dbc-test.cloud.databricks.com";
const API = "/api/2.0/postgres";
const P = "projects/shop";
const settings = LakebaseProviderSettings.parse({ host: HOST, project: "shop" });
const ENDPOINT_SPEC = {
  endpoint_type: "ENDPOINT_TYPE_READ_WRITE",
  autoscaling_limit_min_cu: 0.5,
  autoscaling_limit_max_cu: 2,
  suspend_timeout_duration: "300s",
};

function fakeClock() {
  let t = Date.parse("2026-01-01T00:00:00Z");
  const sleeps: number[] = [];
  return { now: () => t, sleep: async (ms: number) => void (sleeps.push(ms), (t += ms)), sleeps };
}

function provider(
  clock = fakeClock(),
  extra: { tryLogin?: (url: string) => Promise<void>; env?: NodeJS.ProcessEnv } = {},
): LakebaseProvider {
  return createLakebaseProvider(settings, {
    env: extra.env ?? { DATABRICKS_TOKEN: "dapi-test", DATABRICKS_POSTGRES_USER: "ci@example.com" },
    sleep: clock.sleep,
    now: clock.now,
    tryLogin: extra.tryLogin ?? (async () => {}),
  });
}

const api = () => nock(`https://${HOST}`).matchHeader("authorization", "Bearer dapi-test");
const branch = (id: string, extra: Record<string, unknown> = {}) => ({
  name: `${P}/branches/${id}`,
  uid: `br-${id}`,
  parent: P,
  create_time: "2026-01-01T00:00:00Z",
  spec: { source_branch: `${P}/branches/production`, no_expiry: true },
  status: { current_state: "READY", source_branch: `${P}/branches/production` },
  ...extra,
});
const production = {
  name: `${P}/branches/production`,
  uid: "br-prod",
  parent: P,
  spec: { no_expiry: true, is_protected: true },
  status: { current_state: "READY", default: true },
};
const notFound = { error_code: "NOT_FOUND", message: "branch id not found", details: [] };

function mockProject(scope: nock.Scope) {
  return scope.get(`${API}/${P}`).reply(200, { name: P, status: { default_branch: `${P}/branches/production` } });
}
function mockEndpointReady(scope: nock.Scope, id: string) {
  return scope.get(`${API}/${P}/branches/${id}/endpoints/primary`).reply(200, {
    name: `${P}/branches/${id}/endpoints/primary`,
    status: { current_state: "ACTIVE", hosts: { host: `ep-${id}.database.cloud.databricks.com` } },
  });
}

afterEach(() => {
  nock.cleanAll();
});

describe("the lakebase provider creating branches", () => {
  it("creates a track with no_expiry, polls the operation, waits for READY and gets-or-creates the endpoint", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope
      .post(`${API}/${P}/branches`, { spec: { source_branch: `${P}/branches/production`, no_expiry: true } })
      .query({ branch_id: "feature-cart" })
      .reply(200, { name: `${P}/branches/feature-cart/operations/op-1`, done: false });
    scope
      .get(`${API}/${P}/branches/feature-cart/operations/op-1`)
      .reply(200, { name: `${P}/branches/feature-cart/operations/op-1`, done: false });
    scope
      .get(`${API}/${P}/branches/feature-cart/operations/op-1`)
      .reply(200, { name: `${P}/branches/feature-cart/operations/op-1`, done: true, response: branch("feature-cart") });
    scope
      .get(`${API}/${P}/branches/feature-cart`)
      .reply(200, branch("feature-cart", { status: { current_state: "INIT" } }));
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    scope
      .get(`${API}/${P}/branches/feature-cart/endpoints/primary`)
      .reply(404, { error_code: "NOT_FOUND", message: "endpoint not found" });
    scope
      .post(`${API}/${P}/branches/feature-cart/endpoints`, { spec: ENDPOINT_SPEC })
      .query({ endpoint_id: "primary" })
      .reply(200, { name: `${P}/branches/feature-cart/endpoints/primary/operations/op-2`, done: true, response: {} });
    scope
      .get(`${API}/${P}/branches/feature-cart/endpoints/primary`)
      .reply(200, { status: { current_state: "INIT", hosts: {} } });
    mockEndpointReady(scope, "feature-cart");

    const clock = fakeClock();
    const created = await provider(clock).createBranch("feature-cart");
    expect(created).toEqual({
      name: "feature-cart",
      parent: "production",
      createdAt: "2026-01-01T00:00:00Z",
      isRoot: false,
    });
    expect(scope.isDone()).toBe(true);
    expect(clock.sleeps.length).toBeGreaterThanOrEqual(3);
  });

  it("gives a throwaway branch a ttl", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/pr-42-t3`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    scope
      .post(`${API}/${P}/branches`, { spec: { source_branch: `${P}/branches/feature-cart`, ttl: "3600s" } })
      .query({ branch_id: "pr-42-t3" })
      .reply(200, { name: "ops/op-9", done: true, response: {} });
    const cycle = branch("pr-42-t3", {
      spec: { source_branch: `${P}/branches/feature-cart`, ttl: "3600s" },
      status: { current_state: "READY", expire_time: "2026-01-01T01:00:00Z" },
    });
    scope.get(`${API}/${P}/branches/pr-42-t3`).reply(200, cycle);
    mockEndpointReady(scope, "pr-42-t3");
    const created = await provider().createBranch("pr-42-t3", { from: "feature-cart", ttlSeconds: 3600 });
    expect(created).toMatchObject({ name: "pr-42-t3", parent: "feature-cart", expiresAt: "2026-01-01T01:00:00Z" });
    expect(scope.isDone()).toBe(true);
  });

  it("reuses an existing branch only when its parent matches", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).twice().reply(200, branch("feature-cart"));
    mockEndpointReady(scope, "feature-cart");
    const lakebase = provider();
    await expect(lakebase.createBranch("feature-cart")).resolves.toMatchObject({
      name: "feature-cart",
      parent: "production",
    });
    await expect(lakebase.createBranch("feature-cart", { from: "feature-other" })).rejects.toMatchObject({
      code: "PARENT_MISMATCH",
    });
    expect(scope.isDone()).toBe(true);
  });

  it("reuses the branch when another process created it first (409)", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-cart" })
      .reply(409, { error_code: "ALREADY_EXISTS", message: "branch already exists", details: [] });
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    mockEndpointReady(scope, "feature-cart");
    await expect(provider().createBranch("feature-cart")).resolves.toMatchObject({ name: "feature-cart" });
    expect(scope.isDone()).toBe(true);
  });

  it("refuses a missing parent and a parent with an expiry without creating anything", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/child-a`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/ghost`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/child-b`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/cycle-1`).reply(
      200,
      branch("cycle-1", {
        spec: { ttl: "3600s" },
        status: { current_state: "READY", expire_time: "2026-01-01T01:00:00Z" },
      }),
    );
    const lakebase = provider();
    await expect(lakebase.createBranch("child-a", { from: "ghost" })).rejects.toMatchObject({ code: "PARENT_MISSING" });
    await expect(lakebase.createBranch("child-b", { from: "cycle-1" })).rejects.toMatchObject({
      code: "PARENT_IS_THROWAWAY",
    });
    expect(scope.isDone()).toBe(true);
  });

  it("deletes the branch again when its creation operation ends in an error", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-cart" })
      .reply(200, { name: "ops/op-3", done: false });
    scope.get(`${API}/ops/op-3`).reply(200, {
      name: "ops/op-3",
      done: true,
      error: { error_code: "INVALID_STATE", message: "source branch is resetting" },
    });
    scope.delete(`${API}/${P}/branches/feature-cart`).reply(200, { name: "ops/op-4", done: true, response: {} });
    const error = await provider()
      .createBranch("feature-cart")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "INVALID_STATE",
      message: expect.stringContaining("source branch is resetting"),
      hint: expect.stringContaining("wait"),
    });
    expect(scope.isDone()).toBe(true);
  });

  it("gives up on an operation after the deadline with a clear error, and cleans up", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-cart" })
      .reply(200, { name: "ops/slow", done: false });
    scope.get(`${API}/ops/slow`).times(100).reply(200, { name: "ops/slow", done: false });
    scope.delete(`${API}/${P}/branches/feature-cart`).reply(200, { name: "ops/del", done: true, response: {} });
    const clock = fakeClock();
    const started = clock.now();
    const error = await provider(clock)
      .createBranch("feature-cart")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "OPERATION_TIMEOUT", message: expect.stringContaining("within 120 s") });
    expect(clock.now() - started).toBeGreaterThanOrEqual(120_000);
    expect(clock.now() - started).toBeLessThan(140_000);
    nock.cleanAll();
  });
});

describe("the lakebase client's retries and errors", () => {
  it("honours Retry-After on 429", async () => {
    const scope = api();
    scope
      .get(`${API}/${P}`)
      .reply(429, { error_code: "REQUEST_LIMIT_EXCEEDED", message: "slow down", details: [] }, { "Retry-After": "7" });
    mockProject(scope);
    const clock = fakeClock();
    await expect(provider(clock).rootBranch()).resolves.toBe("production");
    expect(clock.sleeps).toEqual([7000]);
  });

  it("retries 503 with growing backoff, then reports an actionable error", async () => {
    const scope = api();
    scope
      .get(`${API}/${P}`)
      .times(7)
      .reply(503, { error_code: "TEMPORARILY_UNAVAILABLE", message: "try later", details: [] });
    const clock = fakeClock();
    const error = await provider(clock)
      .rootBranch()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "TEMPORARILY_UNAVAILABLE", hint: expect.stringContaining("again") });
    expect(clock.sleeps).toEqual([1000, 2000, 4000, 8000, 16000, 30000]);
    expect(scope.isDone()).toBe(true);
  });

  it("maps error codes and known messages to what to do", async () => {
    const scope = api();
    scope
      .get(`${API}/${P}`)
      .reply(403, { error_code: "PERMISSION_DENIED", message: "no access to project", details: [] });
    await expect(provider().rootBranch()).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      hint: expect.stringContaining("CAN_MANAGE"),
    });
    const again = api();
    mockProject(again);
    again.get(`${API}/${P}/branches/long-lived`).reply(404, notFound);
    again.get(`${API}/${P}/branches/production`).reply(200, production);
    again.post(`${API}/${P}/branches`).query({ branch_id: "long-lived" }).reply(400, {
      error_code: "INVALID_PARAMETER_VALUE",
      message: "expiration time exceeds the maximum expiration time",
      details: [],
    });
    await expect(provider().createBranch("long-lived", { ttlSeconds: 3600 })).rejects.toMatchObject({
      code: "INVALID_PARAMETER_VALUE",
      hint: expect.stringContaining("30 days"),
    });
  });

  it("uses OAuth machine-to-machine credentials when no token is set", async () => {
    const oidc = nock(`https://${HOST}`)
      .post("/oidc/v1/token", "grant_type=client_credentials&scope=all-apis")
      .matchHeader("authorization", `Basic ${Buffer.from("client-1:secret-1").toString("base64")}`)
      .reply(200, { access_token: "oauth-token", token_type: "Bearer", expires_in: 3600 });
    const scope = nock(`https://${HOST}`).matchHeader("authorization", "Bearer oauth-token");
    mockProject(scope);
    const lakebase = provider(fakeClock(), {
      env: { DATABRICKS_CLIENT_ID: "client-1", DATABRICKS_CLIENT_SECRET: "secret-1" },
    });
    await expect(lakebase.rootBranch()).resolves.toBe("production");
    expect(oidc.isDone() && scope.isDone()).toBe(true);
  });

  it("says which variables to set when there are no credentials", () => {
    expect(() => provider(fakeClock(), { env: {} })).toThrow(/DATABRICKS_TOKEN/);
  });
});

describe("the lakebase provider deleting and connecting", () => {
  it("deletes children first (purging throwaway ones), and a missing branch is not an error", async () => {
    const scope = api();
    const order: string[] = [];
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    scope
      .get(`${API}/${P}/branches`)
      .query({ page_size: "100" })
      .reply(200, { branches: [production, branch("feature-cart")], next_page_token: "p2" });
    scope
      .get(`${API}/${P}/branches`)
      .query({ page_size: "100", page_token: "p2" })
      .reply(200, {
        branches: [
          branch("cycle-7", {
            spec: { source_branch: `${P}/branches/feature-cart`, ttl: "600s" },
            status: { current_state: "READY", expire_time: "2026-01-01T00:10:00Z" },
          }),
        ],
      });
    scope.get(`${API}/${P}/branches/cycle-7`).reply(
      200,
      branch("cycle-7", {
        spec: { source_branch: `${P}/branches/feature-cart`, ttl: "600s" },
        status: { current_state: "READY", expire_time: "2026-01-01T00:10:00Z" },
      }),
    );
    scope
      .get(`${API}/${P}/branches`)
      .query({ page_size: "100" })
      .reply(200, { branches: [production, branch("feature-cart")] });
    // The throwaway child is purged; the track is soft-deleted.
    scope
      .delete(`${API}/${P}/branches/cycle-7`)
      .query({ purge: "true" })
      .reply(200, () => (order.push("cycle-7"), { name: "ops/d1", done: true, response: {} }));
    scope
      .delete(`${API}/${P}/branches/feature-cart`)
      .reply(200, () => (order.push("feature-cart"), { name: "ops/d2", done: true, response: {} }));
    scope.get(`${API}/${P}/branches/gone`).reply(404, notFound);
    const lakebase = provider();
    await lakebase.deleteBranch("feature-cart");
    await lakebase.deleteBranch("gone");
    expect(order).toEqual(["cycle-7", "feature-cart"]);
    expect(scope.isDone()).toBe(true);
  });

  it("refuses to delete the root branch", async () => {
    mockProject(api());
    await expect(provider().deleteBranch("production")).rejects.toMatchObject({ code: "ROOT_PROTECTED" });
  });

  it("retries a refused first login with a fresh credential, then hands out the URL", async () => {
    const scope = api();
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    mockEndpointReady(scope, "feature-cart");
    let n = 0;
    scope
      .post(`${API}/credentials`, { endpoint: `${P}/branches/feature-cart/endpoints/primary`, ttl: "3600s" })
      .times(3)
      .reply(200, () => ({ token: `tok-${++n}`, expire_time: "2026-01-01T01:00:00Z" }));
    const tried: string[] = [];
    const clock = fakeClock();
    const lakebase = provider(clock, {
      tryLogin: async (url) => {
        tried.push(new URL(url).password);
        if (tried.length === 1) throw new Error("External authorization failed");
        if (tried.length === 2) throw new Error('password authentication failed for user "ci@example.com"');
      },
    });
    const url = await lakebase.connectionUrl("feature-cart");
    expect(url).toBe(
      "postgresql://ci%40example.com:tok-3@ep-feature-cart.database.cloud.databricks.com:5432/databricks_postgres?sslmode=require",
    );
    expect(tried).toEqual(["tok-1", "tok-2", "tok-3"]);
    expect(clock.sleeps).toEqual([2000, 4000]);
  });

  it("stops retrying a refused login after about 60 seconds", async () => {
    const scope = api();
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    mockEndpointReady(scope, "feature-cart");
    scope.post(`${API}/credentials`).times(20).reply(200, { token: "tok", expire_time: "2026-01-01T01:00:00Z" });
    const clock = fakeClock();
    const lakebase = provider(clock, {
      tryLogin: async () => Promise.reject(new Error("password authentication failed")),
    });
    await expect(lakebase.connectionUrl("feature-cart")).rejects.toMatchObject({ code: "LOGIN_REFUSED" });
    const waited = clock.sleeps.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThanOrEqual(50_000);
    expect(waited).toBeLessThanOrEqual(60_000);
    nock.cleanAll();
  });
});
