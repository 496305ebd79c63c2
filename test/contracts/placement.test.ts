import { describe, expect, test } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { allPlacements, factSources, placementOf, runnerKind } from "../../src/contracts/placement.js";

const config = (database: Record<string, unknown>, runsOn?: string[]) =>
  ConsortConfig.parse({ database, ...(runsOn ? { jobs: { runsOn } } : {}) });

describe("where each provider's branches live", () => {
  test("the default, local on GitHub-hosted runners, does not share the app's branches with the jobs", () => {
    const placement = placementOf(ConsortConfig.parse({}));
    expect(placement).toMatchObject({ provider: "local", runner: "hosted", shared: false });
    expect(placement.promote).toBe("nothing is migrated: there is no persistent parent, so the merge is the promotion");
  });

  test("local on a self-hosted runner beside the app shares its branches", () => {
    expect(placementOf(config({ provider: "local" }, ["self-hosted", "consort"]))).toMatchObject({
      provider: "local",
      runner: "self-hosted",
      shared: true,
    });
  });

  test("postgres and lakebase share their branches whatever the runner", () => {
    const lakebase = { provider: "lakebase", lakebase: { host: "dbc-1.cloud.databricks.com", project: "stockflow" } };
    for (const runsOn of [["ubuntu-latest"], ["self-hosted", "linux"]]) {
      expect(placementOf(config({ provider: "postgres" }, runsOn)).shared).toBe(true);
      expect(placementOf(config(lakebase, runsOn)).shared).toBe(true);
    }
  });

  test("a runner is self-hosted only when its labels say `self-hosted`: a custom label alone counts as hosted", () => {
    expect(runnerKind(["ubuntu-latest"])).toBe("hosted");
    expect(runnerKind(["consort-large"])).toBe("hosted");
    expect(runnerKind(["self-hosted", "consort"])).toBe("self-hosted");
  });

  test("every provider has a placement for both runner kinds, and only local on hosted runners is apart", () => {
    const rows = allPlacements();
    expect(rows.map((p) => `${p.provider}/${p.runner}`).sort()).toEqual([
      "lakebase/hosted",
      "lakebase/self-hosted",
      "local/hosted",
      "local/self-hosted",
      "postgres/hosted",
      "postgres/self-hosted",
    ]);
    expect(rows.filter((p) => !p.shared).map((p) => `${p.provider}/${p.runner}`)).toEqual(["local/hosted"]);
  });

  test("the sticky comment's sentence names where the facts come from in each case", () => {
    expect(factSources(placementOf(ConsortConfig.parse({})))).toContain(
      "the cycles and the release ran on their runner's own embedded Postgres",
    );
    expect(factSources(placementOf(config({ provider: "local" }, ["self-hosted"])))).toBe(
      "Database facts: the app, the cycles, the release and the promotion all use the same `local` branches (self-hosted runner).",
    );
  });

  test("runner labels are checked: a label with a space is refused", () => {
    expect(ConsortConfig.safeParse({ jobs: { runsOn: ["self hosted"] } }).success).toBe(false);
    expect(ConsortConfig.safeParse({ jobs: { runsOn: [] } }).success).toBe(false);
  });
});
