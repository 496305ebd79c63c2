import { CHECK_ACTIONS, type CheckView, type TrackReport } from "../../src/report/index.js";

/**
 * A realistic track mid-build: acme/shop's `feature/orders` track, design and test list approved,
 * T1 green, T2 red verified and waiting for its GREEN, a schema diff from the substrate.
 */
export const HEAD = "c0ffee0000000000000000000000000000000001";
export const DESIGN_HASH = "5d1e6a7c".padEnd(64, "0");
const TESTLIST_HASH = "7e57115e".padEnd(64, "1");
const run = (id: number) => `https://github.com/acme/shop/actions/runs/${id}`;

/** A check as src/gates/checks.ts would have decided it. */
export const check = (status: CheckView["status"], title: string, ...details: string[]): CheckView => ({
  status,
  title,
  details,
  actions: [],
});

export function midBuildReport(): TrackReport {
  return {
    repository: "acme/shop",
    trackId: "feature-orders-1a2b3c4d",
    branch: "feature/orders",
    headSha: HEAD,
    lane: {
      done: [
        { id: "stories", label: "Stories" },
        { id: "spec", label: "Spec" },
        { id: "architecture", label: "Architecture" },
        { id: "db-design", label: "DB design" },
        { id: "design-gate", label: "Design gate" },
        { id: "test-list", label: "Test list" },
        { id: "test-list-gate", label: "Test-list gate" },
        { id: "T1", label: "T1" },
      ],
      now: { id: "T2:green", label: "T2 green", detail: "driver makes T2 pass" },
      next: [
        { id: "T2:review", label: "T2 review" },
        { id: "deploying", label: "Deploy preview" },
        { id: "deploy-gate", label: "Deploy gate" },
        { id: "promote-gate", label: "Promote gate" },
      ],
    },
    nextAction: {
      role: "driver",
      summary: "Make T2 pass: change only app code and migrations.",
      details: ["Commit with the trailer `Consort-Role: driver`", "T2 lives in test/orders.test.ts"],
    },
    tests: [
      {
        id: "T1",
        title: "placing an order reserves stock",
        file: "test/orders.test.ts",
        acceptanceCriterion: "S1-AC1",
        status: "reviewed",
        red: {
          verdict: "valid",
          commit: "1".repeat(40),
          runUrl: run(901),
          summary: "fails by assertion: expected 1 reservation, got 0",
        },
        green: { verdict: "valid", commit: "2".repeat(40), runUrl: run(902), summary: "T1 passes" },
      },
      {
        id: "T2",
        title: "an order over stock is refused | with 409",
        file: "test/orders.test.ts",
        acceptanceCriterion: "S1-AC2",
        status: "red",
        red: { verdict: "valid", commit: "3".repeat(40), runUrl: run(903), summary: "fails by assertion" },
        green: { verdict: "pending", commit: HEAD, runUrl: run(904) },
      },
      {
        id: "T3",
        title: "cancelling releases stock",
        file: "test/cancel.test.ts",
        acceptanceCriterion: "S2-AC1",
        status: "pending",
      },
    ],
    frozen: [
      {
        gate: "design",
        manifestHash: DESIGN_HASH,
        commit: "a".repeat(40),
        files: [
          { path: ".consort/spec.json", hash: "1".repeat(64) },
          { path: ".consort/architecture.json", hash: "2".repeat(64) },
          { path: ".consort/db-design.json", hash: "3".repeat(64) },
        ],
      },
      {
        gate: "test-list",
        manifestHash: TESTLIST_HASH,
        commit: "b".repeat(40),
        files: [{ path: ".consort/test-list.json", hash: "4".repeat(64) }],
      },
    ],
    approvals: [
      {
        gate: "design",
        approver: "lee",
        at: "2026-11-30T05:20:00Z",
        commit: "a".repeat(40),
        manifestHash: DESIGN_HASH,
        reviewUrl: "https://github.com/acme/shop/pull/7#pullrequestreview-11",
      },
      {
        gate: "test-list",
        approver: "kim",
        at: "2026-11-30T05:40:00Z",
        commit: "b".repeat(40),
        manifestHash: TESTLIST_HASH,
      },
    ],
    checks: {
      "consort/design": check("success", "Approved by @lee at 5d1e6a7", "Approved at the current frozen hash."),
      "consort/test-list": check("success", "Approved by @kim at 7e57115", "Approved at the current frozen hash."),
      "consort/build": check("pending", "T2 (2 of 3): green", "T2 GREEN is being verified in run 904."),
      "consort/deploy": check("pending", "Not reached yet", "The track has not reached the deploy gate yet."),
      "consort/promote": check("pending", "Not reached yet", "The track has not reached the promote gate yet."),
      "consort/discipline": check("success", "Every commit was the step in turn, by its role, on its own paths"),
    },
    discipline: { violations: [] },
    schema: {
      state: "ready",
      diffMarkdown:
        "| Table | Change |\n| --- | --- |\n| `orders` | added column `reserved_qty integer not null default 0` |",
      breaking: [],
    },
    notes: ["The database was rebuilt from the seed on a hosted runner: weaker evidence than a persistent branch."],
  };
}

/** A track at its deploy gate, as different from mid-build as the renderer can be given. */
export function releaseReport(): TrackReport {
  return {
    repository: "acme/shop",
    trackId: "feature-orders-1a2b3c4d",
    branch: "feature/orders",
    headSha: HEAD,
    serverUrl: "https://ghe.example",
    lane: { done: [{ id: "stories", label: "Stories" }], now: { id: "deploy-gate", label: "Deploy gate" }, next: [] },
    nextAction: { role: "person", summary: "Approve the deploy gate." },
    tests: [
      {
        id: "T1",
        title: "reserves stock",
        file: "test/orders.test.ts",
        status: "green",
        green: { verdict: "invalid", commit: "5".repeat(40) },
        red: { verdict: "error", commit: "6".repeat(40), summary: "runner crashed" },
      },
    ],
    frozen: [],
    approvals: [],
    checks: {
      "consort/design": check("failure", "Approval is for other files", "Approve again.", "At the current commit."),
      "consort/test-list": check("pending", "Waiting for approval"),
      "consort/build": {
        ...check("failure", "B".repeat(300), "Blocked."),
        actions: [CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate, CHECK_ACTIONS.reseal, CHECK_ACTIONS.rerunCycle],
      },
      "consort/deploy": check("pending", "Waiting for approval", "Approve the release."),
      "consort/promote": check("success", "Promoted"),
      "consort/discipline": check("failure", "Commit c0ffee0 refused", "The state cannot be read.", "Try again."),
    },
    discipline: { violations: [] },
    schema: { state: "failed", reason: "The substrate could not compare the schemas." },
    deploy: {
      summary: "Release verified",
      previewUrl: "https://preview.example/orders",
      databaseBranch: "br-orders",
      runUrl: "https://ghe.example/acme/shop/actions/runs/950",
      checks: [
        { name: "smoke | home", ok: true },
        { name: "migrations", ok: false, detail: "replay failed" },
      ],
      notes: ["Ran unconfined.", "On a hosted runner."],
    },
    refusedApprovals: { design: ["@ann is not an approver.", "@bob approved another commit."] },
    sources: "Database facts from the persistent branch.",
  };
}
