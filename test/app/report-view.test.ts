import { describe, expect, it } from "vitest";
import { trackReport } from "../../src/app/report-view.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { checkStates } from "../../src/gates/checks.js";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { CHECK_ACTIONS } from "../../src/report/index.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";

/** The report of a StockFlow track, as the check runs and the sticky comment show it. */

const config = ConsortConfig.parse({});
const report = (snapshot: TrackSnapshot, pullNumber?: number) =>
  trackReport({
    repository: "acme/shop",
    snapshot,
    headSha: snapshot.context.head,
    config,
    ...(pullNumber === undefined ? {} : { pullNumber }),
  });

describe("the report of a track", () => {
  it("shows each check as the gate model decides it", () => {
    for (const stage of ["design-gate", "green", "blocked", "deploy-gate", "abandoned"] as const) {
      const snapshot = reach(stage).snapshot;
      const shown = Object.entries(report(snapshot).checks).map(([name, { actions: _, ...check }]) => ({
        name,
        ...check,
      }));
      expect(shown).toEqual(checkStates(snapshot));
    }
  });

  it("maps approvals with review links and frozen manifests with sorted files", () => {
    const sim = reach("red");
    const { design, "test-list": testList } = sim.context.gates;
    const shown = report(sim.snapshot, 7);
    const linked = (gate: "design" | "test-list", a: (typeof design.approvals)[number]) => ({
      gate,
      approver: "lead-human",
      at: a.at,
      commit: a.commit,
      manifestHash: a.manifestHash,
      reviewUrl: `https://github.com/acme/shop/pull/7#pullrequestreview-${a.reviewId}`,
    });
    expect(shown.approvals).toEqual([
      linked("design", design.approvals[0]!),
      linked("test-list", testList.approvals[0]!),
    ]);
    expect(shown.frozen).toEqual([
      {
        gate: "design",
        manifestHash: design.approvedHash,
        commit: design.approvals[0]!.commit,
        files: [ARTIFACT_PATHS.architecture, ARTIFACT_PATHS.dbDesign, ARTIFACT_PATHS.spec].map((path) => ({
          path,
          hash: design.files[path],
        })),
      },
      {
        gate: "test-list",
        manifestHash: testList.approvedHash,
        commit: testList.approvals[0]!.commit,
        files: [{ path: ARTIFACT_PATHS.testList, hash: testList.files[ARTIFACT_PATHS.testList] }],
      },
    ]);
    expect(report(sim.snapshot).approvals[0]).not.toHaveProperty("reviewUrl");
  });

  it("a blocked build fails and offers the re-run and renegotiate buttons", () => {
    const shown = report(reach("blocked").snapshot).checks["consort/build"];
    expect(shown.status).toBe("failure");
    expect(shown.actions).toEqual([CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate]);
  });

  it("a preview that did not verify offers the re-run and renegotiate buttons on consort/deploy, none on the build", () => {
    const sim = reach("deploying");
    sim.expectAccepted(sim.report("invalid", ["GET /health: 502"]));
    const { checks } = report(sim.snapshot);
    expect(checks["consort/deploy"].actions).toEqual([CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate]);
    expect(checks["consort/build"].actions).toEqual([]);
  });

  it("a failed GREEN offers a re-run once nothing is in flight, and no button while a cycle runs", () => {
    const sim = reach("green-verify");
    expect(report(sim.snapshot).checks["consort/build"]).toMatchObject({ status: "pending", actions: [] });
    sim.expectAccepted(sim.report("error", ["the run left no result"]));
    expect(report(sim.snapshot).checks["consort/build"]).toMatchObject({
      status: "failure",
      details: ["the run left no result"],
      actions: [CHECK_ACTIONS.rerunCycle],
    });
  });

  it("a refused commit is listed on consort/discipline with each reason", () => {
    const sim = reach("red");
    sim.push({ role: null, files: { "test/stock.test.ts": "x" } });
    const refused = sim.context.rejectedHead!;
    expect(report(sim.snapshot).discipline.violations).toEqual(
      refused.reasons.map((message) => ({ commit: refused.sha, rule: "commit refused", message })),
    );
  });
});
