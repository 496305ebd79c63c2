import { describe, expect, it } from "vitest";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { NEVER_MERGES } from "../../src/config/branch-kind.js";
import {
  renderExperimentCheckRuns,
  renderRefusedExperimentCheckRuns,
  type ExperimentView,
} from "../../src/report/experiment.js";

const view = (schema: ExperimentView["schema"]): ExperimentView => ({
  branch: "experiment/try-index",
  databaseBranch: "experiment-try-index-1a2b3c4d",
  parentDatabaseBranch: "main",
  expiresAt: "2026-03-08T12:00:00.000Z",
  ttlDays: 7,
  schema,
});

describe("an experiment's checks", () => {
  it("the six checks but consort/schema fail saying an experiment never merges; consort/schema shows the diff", () => {
    const runs = renderExperimentCheckRuns(view({ state: "ready", diffMarkdown: "+ table `probe`", breaking: [] }));
    expect(runs.map((r) => r.name)).toEqual([...CHECK_NAMES]);
    for (const run of runs.filter((r) => r.name !== "consort/schema")) {
      expect(run).toMatchObject({ status: "completed", conclusion: "failure" });
      expect(run.output.summary).toContain(NEVER_MERGES);
      expect(run.output.summary).toContain("2026-03-08T12:00:00.000Z");
    }
    const schema = runs.find((r) => r.name === "consort/schema")!;
    expect(schema).toMatchObject({ conclusion: "success", output: { title: "Schema diff ready, nothing breaks" } });
    expect(schema.output.summary).toContain("+ table `probe`");
  });

  it("consort/schema fails on rows at risk, and when the diff could not be computed: never a pass it did not earn", () => {
    const breaking = renderExperimentCheckRuns(
      view({ state: "ready", diffMarkdown: "- column", breaking: ["drops stock.qty: 12 rows lose it"] }),
    ).find((r) => r.name === "consort/schema")!;
    expect(breaking).toMatchObject({
      conclusion: "failure",
      output: { title: "1 change(s) would break existing rows" },
    });
    expect(breaking.output.summary).toContain("drops stock.qty: 12 rows lose it");
    const failed = renderExperimentCheckRuns(view({ state: "failed", reason: "the server is down" })).find(
      (r) => r.name === "consort/schema",
    )!;
    expect(failed).toMatchObject({ conclusion: "failure", output: { title: "Schema check failed" } });
  });

  it("past experiments.max every check fails naming the limit and the experiments to delete", () => {
    const runs = renderRefusedExperimentCheckRuns("experiment/c", 2, ["experiment/a", "experiment/b"]);
    expect(runs.map((r) => r.name)).toEqual([...CHECK_NAMES]);
    for (const run of runs) {
      expect(run).toMatchObject({ conclusion: "failure" });
      expect(run.output.title).toBe("Refused: this repository already has 2 experiments (experiments.max)");
      expect(run.output.summary).toContain("- `experiment/a`\n- `experiment/b`");
      expect(run.output.summary).toContain("git push origin --delete");
    }
  });
});
