import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import {
  API,
  api,
  branch,
  branchCreate,
  endpoint,
  ENDPOINT_SPEC,
  fakeClock,
  HOST,
  mockEndpointCreated,
  mockEndpointReady,
  mockForkFromProduction,
  mockProject,
  notFound,
  P,
  production,
  provider,
  type FakeClock,
} from "../../helpers/lakebase.js";

/**
 * The Lakebase provider against HTTP mocks that follow shared/reference/lakebase-api.md exactly
 * (test/helpers/lakebase.ts), including its weather: slow operations, quotas, lost answers,
 * conflicts (issue #17).
 */

afterEach(() => {
  nock.cleanAll();
});

describe("the lakebase provider creating branches", () => {
  it("creates a track with no_expiry, polls the operation, waits for READY and gets-or-creates the endpoint", async () => {
    const scope = mockForkFromProduction("feature-cart");
    scope
      .post(`${API}/${P}/branches`, { spec: { source_branch: `${P}/branches/production`, no_expiry: true } })
      .query({ branch_id: "feature-cart" })
      .reply(200, { name: `${P}/branches/feature-cart/operations/op-1`, done: false });
    scope
      .get(`${API}/${P}/branches/feature-cart/operations/op-1`)
      .reply(200, { name: `${P}/branches/feature-cart/operations/op-1`, done: false });
    scope.get(`${API}/${P}/branches/feature-cart/operations/op-1`).reply(200, {
      name: `${P}/branches/feature-cart/operations/op-1`,
      done: true,
      response: branch("feature-cart", { status: { current_state: "INIT" } }),
    });
    scope
      .get(`${API}/${P}/branches/feature-cart`)
      .reply(200, branch("feature-cart", { status: { current_state: "INIT" } }));
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    // A fresh branch's endpoint is created at once, without reading it first.
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
    mockEndpointCreated(scope, "pr-42-t3");
    const created = await provider().createBranch("pr-42-t3", { from: "feature-cart", ttlSeconds: 3600 });
    expect(created).toMatchObject({ name: "pr-42-t3", parent: "feature-cart", expiresAt: "2026-01-01T01:00:00Z" });
    expect(scope.isDone()).toBe(true);
  });

  it("reuses an existing branch only when its parent matches", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).twice().reply(200, branch("feature-cart"));
    // The parent is read alongside the branch.
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope.get(`${API}/${P}/branches/feature-other`).reply(404, notFound);
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
    const scope = mockForkFromProduction("feature-cart");
    branchCreate(scope, "feature-cart").reply(409, {
      error_code: "ALREADY_EXISTS",
      message: "branch already exists",
      details: [],
    });
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
    const scope = mockForkFromProduction("feature-cart");
    branchCreate(scope, "feature-cart").reply(200, { name: "ops/op-3", done: false });
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
    const scope = mockForkFromProduction("feature-cart");
    branchCreate(scope, "feature-cart").reply(200, { name: "ops/slow", done: false });
    scope.get(`${API}/ops/slow`).times(1000).reply(200, { name: "ops/slow", done: false });
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

  it("retries 503 with growing, jittered backoff up to a deadline, then reports an actionable error", async () => {
    let asked = 0;
    api()
      .get(`${API}/${P}`)
      .times(50)
      .reply(503, () => (asked++, { error_code: "TEMPORARILY_UNAVAILABLE", message: "try later", details: [] }));
    const clock = fakeClock();
    const error = await provider(clock)
      .rootBranch()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "TEMPORARILY_UNAVAILABLE", hint: expect.stringContaining("again") });
    expect(asked).toBe(clock.sleeps.length + 1);
    clock.sleeps.forEach((ms, i) => {
      const step = Math.min(1000 * 2 ** i, 30_000);
      expect(ms).toBeGreaterThanOrEqual(step / 2);
      expect(ms).toBeLessThanOrEqual(step);
    });
    expect(clock.sleeps.length).toBeGreaterThanOrEqual(4);
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(60_000);
    nock.cleanAll();
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

const cycle = (id: string, from = "production") =>
  branch(id, {
    spec: { source_branch: `${P}/branches/${from}`, ttl: "600s" },
    status: { current_state: "READY", source_branch: `${P}/branches/${from}`, expire_time: "2026-01-01T00:10:00Z" },
  });

/** A fork whose branch and endpoint operations each take `ms` of the fake clock, as the service would. */
function mockTimedFork(clock: FakeClock, id: string, ms: number) {
  const scope = mockForkFromProduction(id);
  let branchDue = 0;
  let endpointDue = 0;
  branchCreate(scope, id).reply(200, () => ((branchDue = clock.now() + ms), { name: "ops/b", done: false }));
  scope
    .get(`${API}/ops/b`)
    .times(500)
    .reply(200, () =>
      clock.now() >= branchDue ? { name: "ops/b", done: true, response: branch(id) } : { name: "ops/b", done: false },
    );
  scope
    .post(`${API}/${P}/branches/${id}/endpoints`)
    .query({ endpoint_id: "primary" })
    .reply(200, () => ((endpointDue = clock.now() + ms), { name: "ops/e", done: false }));
  scope
    .get(`${API}/ops/e`)
    .times(500)
    .reply(200, () =>
      clock.now() >= endpointDue
        ? { name: "ops/e", done: true, response: endpoint(id) }
        : { name: "ops/e", done: false },
    );
  return scope;
}

describe("the lakebase provider under weather", () => {
  it("notices finished operations soon: a fork adds under 250 ms to operations of 0.3 s to 10 s", async () => {
    for (const ms of [300, 700, 1000, 3000, 6500, 10_000]) {
      const clock = fakeClock();
      const scope = mockTimedFork(clock, "feature-cart", ms);
      const started = clock.now();
      await expect(provider(clock).createBranch("feature-cart")).resolves.toMatchObject({ name: "feature-cart" });
      const added = clock.now() - started - 2 * ms;
      expect(added, `operations of ${ms} ms`).toBeLessThan(250);
      expect(clock.sleeps[0]).toBeGreaterThanOrEqual(100);
      expect(clock.sleeps[0]).toBeLessThanOrEqual(250);
      expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(1000);
      nock.cleanAll();
      expect(scope.pendingMocks().filter((m) => !m.includes("/ops/"))).toEqual([]);
    }
  });

  it("does not retry the branch limit, and says which branches exist and how to delete them", async () => {
    const scope = mockForkFromProduction("feature-new");
    let posts = 0;
    branchCreate(scope, "feature-new")
      .times(10)
      .reply(429, () => (posts++, { error_code: "RESOURCE_EXHAUSTED", message: "branch limit reached", details: [] }));
    scope
      .get(`${API}/${P}/branches`)
      .query({ page_size: "100" })
      .reply(200, { branches: [production, branch("feature-cart"), cycle("pr-7-t2", "feature-cart")] });
    const clock = fakeClock();
    const error = await provider(clock)
      .createBranch("feature-new")
      .catch((e: unknown) => e);
    expect(posts).toBe(1);
    expect(clock.sleeps).toEqual([]);
    expect(error).toMatchObject({
      code: "RESOURCE_EXHAUSTED",
      message: expect.stringMatching(/feature-cart \(track\).*pr-7-t2 \(throwaway/),
      hint: expect.stringContaining("consort db delete pr-7-t2"),
    });
  });

  it("a timed-out fork retries its cleanup delete while the create still runs (409 ABORTED), leaving nothing", async () => {
    const scope = mockForkFromProduction("pr-9-t1");
    branchCreate(scope, "pr-9-t1").reply(200, { name: "ops/slow", done: false });
    scope.get(`${API}/ops/slow`).times(1000).reply(200, { name: "ops/slow", done: false });
    const deletes: string[] = [];
    scope
      .delete(`${API}/${P}/branches/pr-9-t1`)
      .query({ purge: "true" })
      .times(2)
      .reply(409, () => (deletes.push("aborted"), { error_code: "ABORTED", message: "operation in progress" }));
    scope
      .delete(`${API}/${P}/branches/pr-9-t1`)
      .query({ purge: "true" })
      .reply(200, () => (deletes.push("deleted"), { name: "ops/del", done: true, response: {} }));
    const progress: string[] = [];
    const error = await provider(fakeClock(), { onProgress: (m) => progress.push(m) })
      .createBranch("pr-9-t1", { ttlSeconds: 600 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "OPERATION_TIMEOUT" });
    expect(deletes).toEqual(["aborted", "aborted", "deleted"]);
    expect(progress).toContain('creating "pr-9-t1" failed; deleting what was made');
  });

  it("names the branch a failed fork could not delete", async () => {
    const scope = mockForkFromProduction("pr-9-t2");
    branchCreate(scope, "pr-9-t2").reply(200, { name: "ops/slow", done: false });
    scope.get(`${API}/ops/slow`).times(1000).reply(200, { name: "ops/slow", done: false });
    scope
      .delete(`${API}/${P}/branches/pr-9-t2`)
      .query({ purge: "true" })
      .times(1000)
      .reply(409, { error_code: "ABORTED", message: "operation in progress" });
    const error = await provider(fakeClock())
      .createBranch("pr-9-t2", { ttlSeconds: 600 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "PARTIAL_FORK",
      message: expect.stringMatching(/did not finish.*branch "pr-9-t2".*could not be deleted/s),
      hint: expect.stringContaining("consort db delete pr-9-t2"),
    });
  });

  it("retries reads and polls whose connection dropped, and reads the branch when a create's answer is lost", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).replyWithError({ code: "ECONNRESET", message: "socket hang up" });
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    branchCreate(scope, "feature-cart").replyWithError({ code: "ECONNRESET", message: "socket hang up" });
    // The service made the branch although the answer never arrived: no second create is sent.
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    mockEndpointCreated(scope, "feature-cart");
    const clock = fakeClock();
    await expect(provider(clock).createBranch("feature-cart")).resolves.toMatchObject({ name: "feature-cart" });
    expect(clock.sleeps.length).toBe(1);
    expect(scope.isDone()).toBe(true);
  });

  it("creates the branch again when a create's answer is lost and the branch does not exist", async () => {
    const scope = mockForkFromProduction("feature-cart");
    branchCreate(scope, "feature-cart").replyWithError({ code: "ECONNRESET", message: "socket hang up" });
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    branchCreate(scope, "feature-cart").reply(200, { name: "ops/c", done: true, response: branch("feature-cart") });
    mockEndpointCreated(scope, "feature-cart");
    await expect(provider().createBranch("feature-cart")).resolves.toMatchObject({ name: "feature-cart" });
    expect(scope.isDone()).toBe(true);
  });

  it("names the variable tokenEnv names when the token is refused (401)", async () => {
    const scope = nock("https://dbc-test.cloud.databricks.com").matchHeader("authorization", "Bearer pat-x");
    scope.get(`${API}/${P}`).reply(401, { error_code: "UNAUTHENTICATED", message: "invalid token", details: [] });
    const lakebase = provider(fakeClock(), {
      settings: { tokenEnv: "LAKEBASE_PAT" },
      env: { LAKEBASE_PAT: "pat-x" },
    });
    const error = (await lakebase.rootBranch().catch((e: unknown) => e)) as Error & { hint: string };
    expect(error).toMatchObject({ code: "UNAUTHENTICATED", hint: expect.stringContaining("LAKEBASE_PAT") });
    expect(error.hint).not.toContain("DATABRICKS_TOKEN");
  });

  it("takes database.lakebase.host as a URL with scheme and port, or as a bare host", async () => {
    const proxied = api("http://127.0.0.1:8443");
    mockProject(proxied);
    await expect(provider(fakeClock(), { settings: { host: "http://127.0.0.1:8443/" } }).rootBranch()).resolves.toBe(
      "production",
    );
    expect(proxied.isDone()).toBe(true);
    const bare = api("https://dbc-other.cloud.databricks.com");
    mockProject(bare);
    await expect(
      provider(fakeClock(), { settings: { host: "dbc-other.cloud.databricks.com" } }).rootBranch(),
    ).resolves.toBe("production");
    expect(bare.isDone()).toBe(true);
    expect(() => provider(fakeClock(), { settings: { host: "ftp://files.example.com" } })).toThrow(
      /neither a host nor an http\(s\) URL/,
    );
  });

  it("deletes a branch and its six children with one listing", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    const children = Array.from({ length: 6 }, (_, i) => cycle(`pr-1-t${i}`, "feature-cart"));
    let lists = 0;
    scope
      .get(`${API}/${P}/branches`)
      .query({ page_size: "100" })
      .times(10)
      .reply(200, () => (lists++, { branches: [production, branch("feature-cart"), ...children] }));
    const deleted: string[] = [];
    for (const child of children) {
      const id = child.name.split("/").pop()!;
      scope
        .delete(`${API}/${P}/branches/${id}`)
        .query({ purge: "true" })
        .reply(200, () => (deleted.push(id), { name: `ops/d-${id}`, done: true, response: {} }));
    }
    scope
      .delete(`${API}/${P}/branches/feature-cart`)
      .reply(200, () => (deleted.push("feature-cart"), { name: "ops/d", done: true, response: {} }));
    await provider().deleteBranch("feature-cart");
    expect(lists).toBe(1);
    expect(deleted).toHaveLength(7);
    expect(deleted.at(-1)).toBe("feature-cart");
  });
});
