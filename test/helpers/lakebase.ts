import nock from "nock";
import { LakebaseProviderSettings } from "../../src/config/consort-config.js";
import { createLakebaseProvider, type LakebaseProvider } from "../../src/substrate/lakebase/provider.js";

/**
 * HTTP mocks of the Lakebase REST API that follow shared/reference/lakebase-api.md exactly:
 * paths under /api/2.0/postgres/, the Branch itself as the create body, operations polled by their
 * opaque name, error bodies `{error_code, message, details}`. Time is a fake clock, so waits are instant.
 */

export const HOST = "dbc-test.cloud.databricks.com";
export const API = "/api/2.0/postgres";
export const P = "projects/shop";
const settings = LakebaseProviderSettings.parse({ host: HOST, project: "shop" });
export const ENDPOINT_SPEC = {
  endpoint_type: "ENDPOINT_TYPE_READ_WRITE",
  autoscaling_limit_min_cu: 0.5,
  autoscaling_limit_max_cu: 2,
  suspend_timeout_duration: "300s",
};

export function fakeClock() {
  let t = Date.parse("2026-01-01T00:00:00Z");
  const sleeps: number[] = [];
  return { now: () => t, sleep: async (ms: number) => void (sleeps.push(ms), (t += ms)), sleeps };
}
export type FakeClock = ReturnType<typeof fakeClock>;

export function provider(
  clock = fakeClock(),
  extra: {
    tryLogin?: (url: string) => Promise<void>;
    env?: NodeJS.ProcessEnv;
    settings?: Partial<ReturnType<typeof LakebaseProviderSettings.parse>>;
    onProgress?: (message: string) => void;
  } = {},
): LakebaseProvider {
  return createLakebaseProvider(LakebaseProviderSettings.parse({ ...settings, ...extra.settings }), {
    env: extra.env ?? { DATABRICKS_TOKEN: "dapi-test", DATABRICKS_POSTGRES_USER: "ci@example.com" },
    sleep: clock.sleep,
    now: clock.now,
    tryLogin: extra.tryLogin ?? (async () => {}),
    ...(extra.onProgress ? { onProgress: extra.onProgress } : {}),
  });
}

export const api = (origin = `https://${HOST}`) => nock(origin).matchHeader("authorization", "Bearer dapi-test");
export const branch = (id: string, extra: Record<string, unknown> = {}) => ({
  name: `${P}/branches/${id}`,
  uid: `br-${id}`,
  parent: P,
  create_time: "2026-01-01T00:00:00Z",
  spec: { source_branch: `${P}/branches/production`, no_expiry: true },
  status: { current_state: "READY", source_branch: `${P}/branches/production` },
  ...extra,
});
export const production = {
  name: `${P}/branches/production`,
  uid: "br-prod",
  parent: P,
  spec: { no_expiry: true, is_protected: true },
  status: { current_state: "READY", default: true },
};
export const notFound = { error_code: "NOT_FOUND", message: "branch id not found", details: [] };
export const endpoint = (id: string) => ({
  name: `${P}/branches/${id}/endpoints/primary`,
  status: { current_state: "ACTIVE", hosts: { host: `ep-${id}.database.cloud.databricks.com` } },
});

export function mockProject(scope: nock.Scope) {
  return scope.get(`${API}/${P}`).reply(200, { name: P, status: { default_branch: `${P}/branches/production` } });
}
export function mockEndpointReady(scope: nock.Scope, id: string) {
  return scope.get(`${API}/${P}/branches/${id}/endpoints/primary`).reply(200, endpoint(id));
}
/** The endpoint create of a fresh branch, done at once with the endpoint (and its host) as the answer. */
export function mockEndpointCreated(scope: nock.Scope, id: string) {
  return scope
    .post(`${API}/${P}/branches/${id}/endpoints`, { spec: ENDPOINT_SPEC })
    .query({ endpoint_id: "primary" })
    .reply(200, { name: `${P}/branches/${id}/endpoints/primary/operations/op-e`, done: true, response: endpoint(id) });
}

/**
 * The reads before creating branch `id` from the default branch: the project, `id` not found yet,
 * the parent found. The test then mocks the create itself (`branchCreate`) as its case needs.
 */
export function mockForkFromProduction(id: string): nock.Scope {
  const scope = api();
  mockProject(scope);
  scope.get(`${API}/${P}/branches/${id}`).reply(404, notFound);
  scope.get(`${API}/${P}/branches/production`).reply(200, production);
  return scope;
}
/** The create of branch `id` (`POST …/branches?branch_id=id`), whatever its body; the test gives the reply. */
export const branchCreate = (scope: nock.Scope, id: string) =>
  scope.post(`${API}/${P}/branches`).query({ branch_id: id });
