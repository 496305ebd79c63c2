import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import {
  API,
  P,
  api,
  branch,
  endpoint,
  fakeClock,
  mockEndpointCreated,
  mockProject,
  notFound,
  production,
  provider,
  type FakeClock,
} from "../../helpers/lakebase.js";

/** The Lakebase provider under weather: slow operations, quotas, lost answers, conflicts (issue #17). */

afterEach(() => {
  nock.cleanAll();
});

const cycle = (id: string, from = "production") =>
  branch(id, {
    spec: { source_branch: `${P}/branches/${from}`, ttl: "600s" },
    status: { current_state: "READY", source_branch: `${P}/branches/${from}`, expire_time: "2026-01-01T00:10:00Z" },
  });

/** A fork whose branch and endpoint operations each take `ms` of the fake clock, as the service would. */
function mockTimedFork(clock: FakeClock, id: string, ms: number) {
  const scope = api();
  mockProject(scope);
  scope.get(`${API}/${P}/branches/${id}`).reply(404, notFound);
  scope.get(`${API}/${P}/branches/production`).reply(200, production);
  let branchDue = 0;
  let endpointDue = 0;
  scope
    .post(`${API}/${P}/branches`)
    .query({ branch_id: id })
    .reply(200, () => ((branchDue = clock.now() + ms), { name: "ops/b", done: false }));
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
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-new`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    let posts = 0;
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-new" })
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
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/pr-9-t1`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope.post(`${API}/${P}/branches`).query({ branch_id: "pr-9-t1" }).reply(200, { name: "ops/slow", done: false });
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
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/pr-9-t2`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope.post(`${API}/${P}/branches`).query({ branch_id: "pr-9-t2" }).reply(200, { name: "ops/slow", done: false });
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
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-cart" })
      .replyWithError({ code: "ECONNRESET", message: "socket hang up" });
    // The service made the branch although the answer never arrived: no second create is sent.
    scope.get(`${API}/${P}/branches/feature-cart`).reply(200, branch("feature-cart"));
    mockEndpointCreated(scope, "feature-cart");
    const clock = fakeClock();
    await expect(provider(clock).createBranch("feature-cart")).resolves.toMatchObject({ name: "feature-cart" });
    expect(clock.sleeps.length).toBe(1);
    expect(scope.isDone()).toBe(true);
  });

  it("creates the branch again when a create's answer is lost and the branch does not exist", async () => {
    const scope = api();
    mockProject(scope);
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope.get(`${API}/${P}/branches/production`).reply(200, production);
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-cart" })
      .replyWithError({ code: "ECONNRESET", message: "socket hang up" });
    scope.get(`${API}/${P}/branches/feature-cart`).reply(404, notFound);
    scope
      .post(`${API}/${P}/branches`)
      .query({ branch_id: "feature-cart" })
      .reply(200, { name: "ops/c", done: true, response: branch("feature-cart") });
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
