import { describe, expect, it } from "vitest";
import { trackReport } from "../../src/app/report-view.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { checkStates } from "../../src/gates/checks.js";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { CHECK_ACTIONS } from "../../src/report/index.js";
import { describeLane, nextAction } from "../../src/orchestrator/index.js";
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

/** What a person reads around the checks, word for word, at each point of a track. */
describe("what the report shows around the checks", () => {
  const T1 = {
    id: "T1",
    title: "filing stock > persists one row with sku, location, quantity and code",
    file: "test/stock.test.ts",
    acceptanceCriterion: "S1-AC1",
  };
  const T2 = {
    id: "T2",
    title: "filing stock > reads a filed record back exactly as filed",
    file: "test/stock.test.ts",
    acceptanceCriterion: "S1-AC2",
  };

  it("at the test-list gate: the lane as described, what to approve at which manifest, and the list waiting", () => {
    const sim = reach("test-list-gate");
    const shown = report(sim.snapshot);
    const lane = describeLane(sim.snapshot);
    expect(shown.lane).toEqual({
      done: lane.done.map((label, i) => ({ id: `done-${i}`, label })),
      now: { id: "now-0", label: lane.now },
      next: lane.next.map((label, i) => ({ id: `next-${i}`, label })),
    });
    expect(lane.done.length).toBeGreaterThan(1);
    expect(lane.next.length).toBeGreaterThan(1);
    const action = nextAction(sim.snapshot, config);
    expect(shown.nextAction).toEqual({
      role: "person",
      summary: action.task,
      details: [
        `Approve the test-list gate with a review on a commit at manifest \`${sim.context.gates["test-list"].pendingHash!.slice(0, 12)}\``,
        ...action.checks.map((check) => `Checked: ${check}`),
      ],
    });
    expect(action.checks.length).toBeGreaterThan(0);
    expect(shown.tests).toEqual([
      { ...T1, status: "pending" },
      { ...T2, status: "pending" },
    ]);
    expect(shown.schema).toEqual({
      state: "pending",
      reason: "The schema diff of `feature-f1-stock` against `main` has not been computed for this commit yet.",
    });
    expect(shown).not.toHaveProperty("notes");
    expect(shown).not.toHaveProperty("deploy");
    expect(shown.discipline).toEqual({ violations: [] });
  });

  it("at GREEN: the driver's trailer, paths and test in turn, and T1's verified RED", () => {
    const sim = reach("green");
    const shown = report(sim.snapshot);
    expect(shown.nextAction!.role).toBe("driver");
    expect(shown.nextAction!.details!.slice(0, 3)).toEqual([
      "Commit trailer: `Consort-Role: driver`",
      "May touch: `src/**`, `lib/**`, `app/**`, `package.json`, `package-lock.json`, `migrations/**`, `db/migrations/**`",
      "Tests in turn: T1 “filing stock > persists one row with sku, location, quantity and code”",
    ]);
    expect(shown.tests).toEqual([
      {
        ...T1,
        status: "red",
        red: {
          verdict: "valid",
          commit: sim.context.head,
          at: "2026-11-30T09:10:00.000Z",
          summary: "red valid",
        },
      },
      { ...T2, status: "pending" },
    ]);
  });

  it("a test goes pending → red → green → reviewed, and the one a blocked RED stands on shows blocked", () => {
    const review = report(reach("review").snapshot).tests;
    expect(review.map((t) => [t.id, t.status])).toEqual([
      ["T1", "green"],
      ["T2", "pending"],
    ]);
    expect(review[0]!.green).toMatchObject({ verdict: "valid", summary: "green valid" });

    const next = reach("red");
    next.throughUnit();
    expect(report(next.snapshot).tests.map((t) => [t.id, t.status])).toEqual([
      ["T1", "reviewed"],
      ["T2", "pending"],
    ]);

    const blocked = reach("red-verify");
    blocked.expectAccepted(blocked.report("invalid", ["T1 passed before any code"]));
    blocked.expectAccepted(
      blocked.push({
        role: "navigator",
        files: { "test/stock.test.ts": `${blocked.context.testFiles["test/stock.test.ts"] ?? ""}// again\n` },
      }),
    );
    blocked.expectAccepted(blocked.report("invalid", ["T1 passed before any code"]));
    expect(blocked.stage).toBe("blocked");
    expect(report(blocked.snapshot).tests.map((t) => [t.id, t.status])).toEqual([
      ["T1", "blocked"],
      ["T2", "pending"],
    ]);
  });

  it("evidence links its run, and says so when the cycle ran unconfined", () => {
    const evidenceFor = (evidence: { summary?: string; runUrl?: string; confined?: boolean }) => {
      const sim = reach("red-verify");
      const pending = sim.context.pendingDispatch!;
      sim.expectAccepted(
        sim.send({
          type: "cycle.reported",
          at: "2026-11-30T10:00:00.000Z",
          dispatchId: pending.dispatchId,
          runId: 77,
          step: "red",
          commit: pending.commit,
          outcome: "valid",
          reasons: [],
          evidence: { summary: "2 failed as expected", ...evidence },
        }),
      );
      return report(sim.snapshot).tests[0]!.red;
    };
    const runUrl = "https://github.com/acme/shop/actions/runs/77";
    expect(evidenceFor({ runUrl, confined: false })).toEqual({
      verdict: "valid",
      commit: expect.any(String),
      at: "2026-11-30T10:00:00.000Z",
      runUrl,
      summary: "2 failed as expected (⚠️ ran unconfined: weaker evidence)",
    });
    expect(evidenceFor({ confined: true })).toEqual({
      verdict: "valid",
      commit: expect.any(String),
      at: "2026-11-30T10:00:00.000Z",
      summary: "2 failed as expected",
    });
    expect(evidenceFor({})!.summary).toBe("2 failed as expected");
  });

  it("a finished or abandoned track names no next action and offers no button", () => {
    const shown = report(reach("abandoned").snapshot);
    expect(shown).not.toHaveProperty("nextAction");
    expect(Object.values(shown.checks).every((c) => c.status === "failure")).toBe(true);
    expect(Object.values(shown.checks).map((c) => c.actions)).toEqual(Object.values(shown.checks).map(() => []));
  });

  it("a release that could not decide offers a re-run on consort/deploy once nothing is in flight", () => {
    const sim = reach("deploying");
    sim.expectAccepted(sim.report("error", ["the run left no result"]));
    expect(sim.stage).toBe("deploying");
    const { checks } = report(sim.snapshot);
    expect(checks["consort/deploy"]).toMatchObject({ status: "failure", actions: [CHECK_ACTIONS.rerunCycle] });
    expect(checks["consort/build"].actions).toEqual([]);
    // Another failing check at the same time (a refused commit) offers no re-run of the release.
    sim.push({ role: null, files: { "test/stock.test.ts": "x" } });
    const after = report(sim.snapshot).checks;
    expect(after["consort/discipline"]).toMatchObject({ status: "failure", actions: [] });
    expect(after["consort/deploy"].actions).toEqual([CHECK_ACTIONS.rerunCycle]);
  });

  it("at the promote gate: the deploy evidence, and the deploy gate's frozen evidence beside the files", () => {
    const sim = reach("promote-gate");
    const shown = report(sim.snapshot);
    expect(shown.deploy).toEqual(sim.context.deployEvidence!.evidence);
    const deploy = sim.context.gates.deploy;
    expect(shown.frozen.map((f) => f.gate)).toEqual(["design", "test-list", "deploy"]);
    expect(shown.frozen[2]).toEqual({
      gate: "deploy",
      manifestHash: deploy.approvedHash,
      commit: deploy.approvals[0]!.commit,
      files: Object.entries(deploy.files).map(([path, hash]) => ({ path, hash })),
    });
  });

  it("a withdrawn gate shows no frozen files, though it keeps the hash it was approved at", () => {
    const sim = reach("green");
    sim.push({ role: "driver", files: { [ARTIFACT_PATHS.spec]: "{}" } });
    expect(sim.context.gates.design).toMatchObject({ status: "withdrawn", approvedHash: expect.any(String) });
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
    expect(report(sim.snapshot).frozen).toEqual([]);
  });

  it("a schema diff and notes given are shown as given; no notes, no notes section", () => {
    const snapshot = reach("green").snapshot;
    const schema = { state: "ready" as const, diffMarkdown: "No schema change." };
    const withNotes = trackReport({
      repository: "acme/shop",
      snapshot,
      headSha: "f".repeat(40),
      config,
      schema,
      notes: ["rebuilt"],
    });
    expect(withNotes.schema).toEqual(schema);
    expect(withNotes.notes).toEqual(["rebuilt"]);
    expect(withNotes.headSha).toBe("f".repeat(40));
    expect(
      trackReport({ repository: "acme/shop", snapshot, headSha: "f".repeat(40), config, notes: [] }),
    ).not.toHaveProperty("notes");
  });
});
