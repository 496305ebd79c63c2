import nock from "nock";
import { LakebaseProviderSettings } from "../../../src/config/consort-config.js";
import { createLakebaseProvider } from "../../../src/substrate/lakebase/provider.js";
import { resolveParentBranch } from "../../../src/substrate/names.js";
import { Scenario } from "./scenario.js";

/**
 * A scenario whose repository is on Lakebase: the app's provider is the real Lakebase provider
 * (waits on a fake clock) against the Databricks Postgres REST API mocked at HTTP exactly as
 * shared/reference/lakebase-api.md describes it.
 */

const HOST = "dbc-e2e.cloud.databricks.com";
export const API = "/api/2.0/postgres";
export const P = "projects/stockflow";
const production = {
  name: `${P}/branches/production`,
  uid: "br-prod",
  parent: P,
  spec: { no_expiry: true, is_protected: true },
  status: { current_state: "READY", default: true },
};
const notFound = { error_code: "NOT_FOUND", message: "branch id not found", details: [] };

export function lakebaseScenario(): { s: Scenario; api: nock.Scope; trackBranch: string; sleeps: number[] } {
  const sleeps: number[] = [];
  let now = Date.parse("2026-03-01T12:00:00Z");
  const settings = LakebaseProviderSettings.parse({ host: HOST, project: "stockflow" });
  const s = new Scenario({
    config: { database: { provider: "lakebase", lakebase: { host: HOST, project: "stockflow" } } },
    openProvider: async () =>
      createLakebaseProvider(settings, {
        env: { DATABRICKS_TOKEN: "dapi-e2e", DATABRICKS_POSTGRES_USER: "consort@example.com" },
        sleep: async (ms) => void (sleeps.push(ms), (now += ms)),
        now: () => now,
        tryLogin: async () => {},
      }),
  });
  const trackBranch = resolveParentBranch({ branch: s.branch, defaultBranch: "main", rootBranch: "production" }).branch;
  const api = nock(`https://${HOST}`).matchHeader("authorization", "Bearer dapi-e2e");
  api
    .get(`${API}/${P}`)
    .times(2)
    .reply(200, { name: P, status: { default_branch: `${P}/branches/production` } });
  api.get(`${API}/${P}/branches/${trackBranch}`).reply(404, notFound);
  api.get(`${API}/${P}/branches/production`).reply(200, production);
  return { s, api, trackBranch, sleeps };
}
