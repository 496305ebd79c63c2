import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { ConsortConfig, type RoleName } from "../../src/config/consort-config.js";
import { nextAction, renderNextAction } from "../../src/orchestrator/index.js";
import type { NextAction, Stage, TrackContext, TrackSnapshot } from "../../src/orchestrator/types.js";
import { edited, stockflowText } from "./fixtures/stockflow.js";
import { reach } from "./helpers/reach.js";
import { TrackSim } from "./helpers/track.js";

/**
 * What src/orchestrator/next-action.ts tells an agent or a person to do next, and the lane it shows:
 * each stage's whole answer, exactly. A wrong word here misleads the agent that acts on it.
 */

const T1 = {
  id: "T1",
  ac: "S1-AC1",
  file: "test/stock.test.ts",
  title: "filing stock > persists one row with sku, location, quantity and code",
  kind: "behavior" as const,
};
const T2 = { ...T1, id: "T2", ac: "S1-AC2", title: "filing stock > reads a filed record back exactly as filed" };
const CODE_PATHS = [
  "src/**",
  "lib/**",
  "app/**",
  "package.json",
  "package-lock.json",
  "migrations/**",
  "db/migrations/**",
];
const TEST_PATHS = ["test/**", "tests/**", "**/*.test.*", "**/*.spec.*", "**/*_test.*", "**/test_*.py"];
const GATE_CHECKS = [
  "the review is APPROVED, by a configured approver with write access",
  "the reviewed commit's manifest equals the pending hash",
];
const DESIGN_AUTHORS = "po-bot[bot], spec-bot[bot], arch-bot[bot], dba-bot[bot]";
const ALL_AUTHORS = `${DESIGN_AUTHORS}, tests-bot[bot], nav-bot[bot], driver-bot[bot]`;

const next = (sim: TrackSim) => nextAction(sim.snapshot, sim.config);
/** The snapshot with its context changed by `change` (a state the public API reaches rarely, or never). */
const withContext = (snapshot: TrackSnapshot, change: Partial<TrackContext>): TrackSnapshot => ({
  ...snapshot,
  context: { ...snapshot.context, ...change },
});
/** What every answer at `sim` shares: the track, the stage, the head. */
const common = (sim: TrackSim) => ({ trackId: "acme/stockflow#12", stage: sim.stage, head: sim.context.head });

describe("nextAction at a design step", () => {
  const schema = (name: string) => `node_modules/consort-for-github/schemas/${name}.schema.json`;
  const steps: Array<[Stage, RoleName, string, string, string]> = [
    [
      "stories",
      "product-owner",
      ".consort/spec.json",
      "spec",
      "Write the feature as stories (as a / I want / so that) with acceptance criteria as given/when/then, ids S1, S1-AC1…, in .consort/spec.json.",
    ],
    [
      "spec",
      "spec-author",
      ".consort/spec.json",
      "spec",
      "Make .consort/spec.json precise (notes, edge cases) and add its non-functional requirements (nfrs; an empty list says none).",
    ],
    [
      "architecture",
      "architect",
      ".consort/architecture.json",
      "architecture",
      "Write .consort/architecture.json: layers and what each may import, modules (each with its path, and in exports the names tests will import from a module the track creates: a RED may import a declared module before anyone writes it, and no other), the persistence invariants the database must hold, and how each NFR is met.",
    ],
    [
      "db-design",
      "dba",
      ".consort/db-design.json",
      "db-design",
      "Write .consort/db-design.json: the tables, and a migration plan per story naming the invariants each migration realises.",
    ],
    [
      "ux",
      "ux-designer",
      ".consort/ux.json",
      "ux",
      "Write .consort/ux.json: a screen with its states (loading, empty, error, filled…) for every user-facing story.",
    ],
    [
      "test-list",
      "test-strategist",
      ".consort/test-list.json",
      "test-list",
      "Write .consort/test-list.json: the ordered tests T1…Tn, each with its AC, file, the exact title the runner reports, and kind; cover every AC and every persistence invariant, and add a fitness test for the layering.",
    ],
  ];

  it.each(steps)(
    "at %s tells the %s agent its task, its one file, its schema and what is checked",
    (stage, role, path, name, task) => {
      const sim = reach(stage);
      expect(sim.stage).toBe(stage);
      expect(next(sim)).toEqual({
        ...common(sim),
        actor: "agent",
        role,
        task,
        allowedPaths: [path],
        frozenPaths: [],
        unit: null,
        testsInTurn: [],
        checks: [
          `the file validates against ${schema(name)}`,
          "the cross-file rules of `consort validate` hold (ids, references, coverage)",
          "only the files above change; every commit carries the trailer",
        ],
        gate: null,
        trailer: `Consort-Role: ${role}`,
      } satisfies NextAction);
    },
  );

  it("asks the agent to fix what the last push left invalid first", () => {
    const sim = reach("architecture");
    sim.expectAccepted(sim.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: "{" } }));
    expect(sim.stage).toBe("architecture");
    const problems = sim.context.lastProblem;
    expect(problems.length).toBeGreaterThan(0);
    expect(next(sim).task).toBe(
      `Write .consort/architecture.json: layers and what each may import, modules (each with its path, and in exports the names tests will import from a module the track creates: a RED may import a declared module before anyone writes it, and no other), the persistence invariants the database must hold, and how each NFR is met. Fix first: ${problems.join("; ")}.`,
    );
  });
});

describe("nextAction at a gate", () => {
  it("asks a person to approve the design at its pending manifest, naming the authors who may not", () => {
    const sim = reach("design-gate");
    expect(next(sim)).toEqual({
      ...common(sim),
      actor: "person",
      role: null,
      task: "Review the spec, architecture, db design (and ux) in the PR, then approve with a PR review on the current commit. You must not have authored any of them.",
      allowedPaths: [],
      frozenPaths: [],
      unit: null,
      testsInTurn: [],
      checks: [...GATE_CHECKS, `the reviewer authored none of the commits under approval (${DESIGN_AUTHORS})`],
      gate: { name: "design", manifestHash: sim.context.gates.design.pendingHash! },
      trailer: null,
    } satisfies NextAction);
    expect(sim.context.gates.design.pendingHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    [
      "test-list-gate",
      "test-list",
      "Review the ordered test list in the PR, then approve with a PR review on the current commit. You must not have authored it.",
      "tests-bot[bot]",
    ],
    [
      "deploy-gate",
      "deploy",
      "Look at the verified preview deploy (evidence in consort/deploy), then approve the release with a PR review.",
      ALL_AUTHORS,
    ],
    [
      "promote-gate",
      "promote",
      "Approve migrating the parent's database to this commit with a PR review; then merge the pull request.",
      ALL_AUTHORS,
    ],
  ] as const)("at %s asks a person to approve the %s gate", (stage, gate, task, authors) => {
    const sim = reach(stage);
    const action = next(sim);
    expect(action).toMatchObject({ actor: "person", role: null, trailer: null, unit: null, testsInTurn: [] });
    expect(action.task).toBe(task);
    expect(action.gate).toEqual({ name: gate, manifestHash: sim.context.gates[gate].pendingHash });
    expect(action.checks).toEqual([
      ...GATE_CHECKS,
      `the reviewer authored none of the commits under approval (${authors})`,
    ]);
  });

  it("says a withdrawn gate was withdrawn and why, and first to reset a rejected commit", () => {
    const sim = reach("green");
    const head = sim.context.head;
    sim.push({ role: "driver", files: { [ARTIFACT_PATHS.spec]: "{}" } });
    expect(sim.stage).toBe("design-gate");
    const rejected = sim.context.rejectedHead!;
    const gateTask =
      "Review the spec, architecture, db design (and ux) in the PR, then approve with a PR review on the current commit. You must not have authored any of them.";
    const withdrawn = ` (It was withdrawn: a frozen file changed in ${rejected.sha.slice(0, 7)}.)`;
    expect(next(sim).task).toBe(
      `First reset the branch to ${head.slice(0, 7)} (git push --force-with-lease origin ${head}:feature/f1-stock): commit ${rejected.sha.slice(0, 7)} was rejected (${rejected.reasons.join("; ")}). Then: ${gateTask}${withdrawn}`,
    );
    expect(rejected.reasons).toEqual([
      `${rejected.sha.slice(0, 7)}: touches frozen file .consort/spec.json, approved at the design gate: reset the branch, or ask a person to renegotiate`,
    ]);
    sim.expectAccepted(sim.reset());
    expect(next(sim).task).toBe(`${gateTask}${withdrawn}`);
  });

  it("gives every reason a commit was rejected", () => {
    const sim = reach("green");
    const rejectedHead = {
      sha: "d".repeat(40),
      reasons: ["no Consort-Role trailer", "touches test/stock.test.ts"],
      at: "2026-11-30T12:00:00Z",
    };
    expect(nextAction(withContext(sim.snapshot, { rejectedHead }), sim.config).task).toBe(
      `First reset the branch to ${sim.context.head.slice(0, 7)} (git push --force-with-lease origin ${sim.context.head}:feature/f1-stock): commit ddddddd was rejected (no Consort-Role trailer; touches test/stock.test.ts). Then: Make T1 pass by changing application code and migrations only; never a test file.`,
    );
  });

  it("says when no author is recorded, and offers no manifest when none is pending", () => {
    const sim = reach("design-gate");
    const gates = sim.context.gates;
    const snapshot = withContext(sim.snapshot, {
      gates: { ...gates, design: { ...gates.design, authors: [], pendingHash: null } },
    });
    const action = nextAction(snapshot, sim.config);
    expect(action.checks[2]).toBe("the reviewer authored none of the commits under approval (none recorded)");
    expect(action.gate).toEqual({ name: "design", manifestHash: "" });
  });
});

describe("nextAction while a cycle runs", () => {
  it("says the orchestrator waits for the pending RED cycle on its commit, with the tests in turn", () => {
    const sim = reach("red-verify");
    const pending = sim.context.pendingDispatch!;
    expect(next(sim)).toEqual({
      ...common(sim),
      actor: "orchestrator",
      role: null,
      task: `Waiting for cycle acme/stockflow#12#1 (red) on ${pending.commit.slice(0, 7)}.`,
      allowedPaths: [],
      frozenPaths: [],
      unit: "T1",
      testsInTurn: [T1],
      checks: [],
      gate: null,
      trailer: null,
    } satisfies NextAction);
  });

  it("says a cycle that could not decide left nothing pending, with its report", () => {
    const sim = reach("red-verify");
    sim.expectAccepted(sim.report("error", ["the runner crashed", "no junit report"]));
    expect(sim.stage).toBe("red-verify");
    expect(sim.context.pendingDispatch).toBeNull();
    expect(next(sim).task).toBe(
      `Waiting for cycle (none: retry) (red-verify) on ${sim.context.head.slice(0, 7)}. Last report: the runner crashed; no junit report.`,
    );
  });

  it("names what the release and the promotion check", () => {
    const deploying = reach("deploying");
    expect(next(deploying)).toMatchObject({
      actor: "orchestrator",
      unit: null,
      testsInTurn: [],
      task: `Waiting for cycle acme/stockflow#12#7 (release) on ${deploying.context.head.slice(0, 7)}.`,
      checks: ["the preview deploys on the track's database branch and every verification passes"],
    });
    const promoting = reach("promoting");
    expect(next(promoting)).toMatchObject({
      actor: "orchestrator",
      task: `Waiting for cycle acme/stockflow#12#8 (promote) on ${promoting.context.head.slice(0, 7)}.`,
      checks: ["the parent's database branch migrates to the merged commit"],
    });
  });
});

describe("nextAction in the build lane", () => {
  const redChecks = [
    "every test in turn is present and fails by an assertion, or only because a declared module or export is not written yet",
    "every earlier test still passes",
    "frozen test files only grow: every frozen line stays, in order; no skip or focus markers",
    "only test files change",
  ];
  const greenChecks = (last: string) => [
    "migrations apply to a throwaway copy of the track's database",
    `every test up to and including ${last} passes`,
    "no frozen test file changed",
  ];

  it("asks the navigator for T1's failing test, by its exact title, in test files only", () => {
    const sim = reach("red");
    expect(next(sim)).toEqual({
      ...common(sim),
      actor: "agent",
      role: "navigator",
      task: 'Write the failing test T1 "filing stock > persists one row with sku, location, quantity and code" in test/stock.test.ts. Each must fail by an assertion, or only because a module .consort/architecture.json declares for this track (or a name in its exports) is not written yet, with exactly that title. Any other missing import, a TypeError or a crash proves nothing, inside expect(...).resolves or another wrapper too; a module the architecture does not declare: test through an existing seam. Change only test files.',
      allowedPaths: TEST_PATHS,
      frozenPaths: [],
      unit: "T1",
      testsInTurn: [T1],
      checks: redChecks,
      gate: null,
      trailer: "Consort-Role: navigator",
    } satisfies NextAction);
  });

  it("at T2's RED keeps T1's frozen file append-only, and lists only frozen files under the test globs", () => {
    const sim = reach("refactor-verify");
    sim.expectAccepted(sim.report("valid"));
    expect([sim.stage, sim.context.unitIndex]).toEqual(["red", 1]);
    expect(next(sim)).toMatchObject({
      unit: "T2",
      testsInTurn: [T2],
      task: 'Write the failing test T2 "filing stock > reads a filed record back exactly as filed" in test/stock.test.ts. Each must fail by an assertion, or only because a module .consort/architecture.json declares for this track (or a name in its exports) is not written yet, with exactly that title. Any other missing import, a TypeError or a crash proves nothing, inside expect(...).resolves or another wrapper too; a module the architecture does not declare: test through an existing seam. Change only test files.',
      frozenPaths: [{ path: "test/stock.test.ts", rule: "append-only" }],
    });
    // The same track once the configured test globs no longer cover the frozen file.
    const elsewhere = ConsortConfig.parse({ paths: { tests: ["spec/**"] } });
    expect(nextAction(sim.snapshot, elsewhere)).toMatchObject({ allowedPaths: ["spec/**"], frozenPaths: [] });
  });

  it("asks for every test of a unit of several, and repeats why the last RED was refused", () => {
    const sim = new TrackSim(ConsortConfig.parse({ granularity: "ac" }));
    sim.throughDesign(
      edited(stockflowText.testList, (j) => {
        j.tests = [j.tests[0], { ...j.tests[0], id: "T2", title: "filing stock > stores the code" }, j.tests[1]].map(
          (t: object, i: number) => ({ ...t, id: `T${i + 1}` }),
        );
      }),
    );
    const second = { ...T1, id: "T2", title: "filing stock > stores the code" };
    expect(next(sim)).toMatchObject({
      unit: "S1-AC1",
      testsInTurn: [T1, second],
      task: 'Write the failing tests T1 "filing stock > persists one row with sku, location, quantity and code" in test/stock.test.ts; T2 "filing stock > stores the code" in test/stock.test.ts. Each must fail by an assertion, or only because a module .consort/architecture.json declares for this track (or a name in its exports) is not written yet, with exactly that title. Any other missing import, a TypeError or a crash proves nothing, inside expect(...).resolves or another wrapper too; a module the architecture does not declare: test through an existing seam. Change only test files.',
    });
    sim.expectAccepted(sim.pushCommits(sim.redCommit()));
    sim.expectAccepted(sim.report("invalid", ["T2 passed already"]));
    expect(sim.stage).toBe("red");
    expect(next(sim).task).toMatch(/Change only test files\. Fix first: T2 passed already\.$/);
    sim.expectAccepted(sim.pushCommits(sim.redCommit()));
    sim.expectAccepted(sim.report("valid"));
    expect(sim.stage).toBe("green");
    expect(next(sim)).toMatchObject({
      task: "Make T1, T2 pass by changing application code and migrations only; never a test file.",
      checks: greenChecks("T2"),
    });
  });

  it("lists every frozen file in path order, helpers beside the tests", () => {
    const sim = reach("red");
    const title = JSON.stringify(T1.title);
    sim.expectAccepted(
      sim.push({
        role: "navigator",
        files: {
          "test/stock.test.ts": `it(${title}, () => expect(1).toBe(2));\n`,
          "test/helpers/db.ts": "export const db = 1;\n",
        },
      }),
    );
    sim.expectAccepted(sim.report("valid"));
    expect(sim.stage).toBe("green");
    // The RED froze the unit's own file first, the helper after it.
    expect(Object.values(sim.context.frozenTests).map((e) => e.file)).toEqual([
      "test/stock.test.ts",
      "test/helpers/db.ts",
    ]);
    const action = next(sim);
    expect(action.frozenPaths).toEqual([
      { path: "test/helpers/db.ts", rule: "unchanged" },
      { path: "test/stock.test.ts", rule: "unchanged" },
    ]);
    expect(renderNextAction(action).split("\n")).toContain(
      "frozen: test/helpers/db.ts (unchanged), test/stock.test.ts (unchanged)",
    );
  });

  it("answers a build stage whose list is used up (a hand-edited snapshot) with no unit, not a crash", () => {
    for (const stage of ["red", "green", "review", "refactor"] as const) {
      const sim = reach(stage);
      const action = nextAction(withContext(sim.snapshot, { units: [] }), sim.config);
      expect(action).toMatchObject({ stage, unit: null, testsInTurn: [] });
      if (stage === "red") expect(action.task).toMatch(/^Write the failing test \. Each must fail/);
      if (stage === "green") {
        expect(action.task).toBe("Make  pass by changing application code and migrations only; never a test file.");
        expect(action.checks[1]).toBe("every test up to and including the turn passes");
      }
      if (stage === "review")
        expect(action.task).toBe(
          'Review the GREEN of undefined: write .consort/reviews/T1.json with "verdict": "accept" or "refactor" and notes (required for refactor).',
        );
      if (stage === "refactor")
        expect(action.task).toBe(
          "Refactor as the review of undefined asks, keeping every test green; never change a test file.",
        );
    }
  });

  it("asks the driver to make T1 pass in code and migrations, T1's test file frozen", () => {
    const sim = reach("green");
    expect(next(sim)).toEqual({
      ...common(sim),
      actor: "agent",
      role: "driver",
      task: "Make T1 pass by changing application code and migrations only; never a test file.",
      allowedPaths: CODE_PATHS,
      frozenPaths: [{ path: "test/stock.test.ts", rule: "unchanged" }],
      unit: "T1",
      testsInTurn: [T1],
      checks: greenChecks("T1"),
      gate: null,
      trailer: "Consort-Role: driver",
    } satisfies NextAction);
  });

  it("counts the repair attempt against the bound and says what failed", () => {
    const sim = reach("repair");
    expect(next(sim)).toMatchObject({
      role: "driver",
      task: "Repair (attempt 2 of 2): the last GREEN failed. Make T1 pass by changing application code and migrations only; never a test file. Fix first: T1 failed: expected 1 rows, got 0.",
      frozenPaths: [{ path: "test/stock.test.ts", rule: "unchanged" }],
      checks: greenChecks("T1"),
    });
  });

  it("asks the navigator for the review file of the unit in turn, and nothing else", () => {
    const sim = reach("review");
    expect(next(sim)).toEqual({
      ...common(sim),
      actor: "agent",
      role: "navigator",
      task: 'Review the GREEN of T1: write .consort/reviews/T1.json with "verdict": "accept" or "refactor" and notes (required for refactor).',
      allowedPaths: [".consort/reviews/T1.json"],
      frozenPaths: [],
      unit: "T1",
      testsInTurn: [T1],
      checks: [
        "the file validates against node_modules/consort-for-github/schemas/review.schema.json and names the unit in turn",
        "only that file changes",
      ],
      gate: null,
      trailer: "Consort-Role: navigator",
    } satisfies NextAction);
  });

  it("hands the driver the review to refactor by, and says none when it is gone", () => {
    const sim = reach("refactor");
    const expected = {
      actor: "agent",
      role: "driver",
      frozenPaths: [{ path: "test/stock.test.ts", rule: "unchanged" }],
      checks: ["every test verified so far still passes", "no frozen test file changed"],
    };
    const task = "Refactor as the review of T1 asks, keeping every test green; never change a test file.";
    expect(next(sim)).toMatchObject({
      ...expected,
      task: `${task} Review: {"unit":"T1","verdict":"refactor","notes":["extract the SQL into src/db"]}`,
    });
    const padded = { ...sim.context.artifacts, ".consort/reviews/T1.json": '\n  {"verdict":"refactor"}\n' };
    expect(nextAction(withContext(sim.snapshot, { artifacts: padded }), sim.config).task).toBe(
      `${task} Review: {"verdict":"refactor"}`,
    );
    const { [".consort/reviews/T1.json"]: _, ...artifacts } = sim.context.artifacts;
    expect(nextAction(withContext(sim.snapshot, { artifacts }), sim.config)).toMatchObject({ ...expected, task });
  });

  it("asks a person to decide on a blocked track, and where a retry resumes", () => {
    const sim = reach("blocked");
    expect(next(sim)).toEqual({
      ...common(sim),
      actor: "person",
      role: null,
      task: "Blocked: T1 still fails. Decide: retry (another round at repair), renegotiate the test list, or abandon the track.",
      allowedPaths: [],
      frozenPaths: [],
      unit: null,
      testsInTurn: [],
      checks: [],
      gate: null,
      trailer: null,
    } satisfies NextAction);
    expect(nextAction(withContext(sim.snapshot, { blocked: null }), sim.config).task).toBe(
      "Blocked: verification failed. Decide: retry (another round at undefined), renegotiate the test list, or abandon the track.",
    );
  });
});

describe("nextAction after the gates", () => {
  it("asks a person to merge, saying whether the merge migrates a parent", () => {
    const sim = reach("merging");
    expect(next(sim)).toMatchObject({
      actor: "person",
      role: null,
      checks: [],
      gate: null,
      task: "Every gate is approved: merge the pull request. There is no persistent parent to migrate (the jobs run apart from the app's branches), so the merge is the promotion.",
    });
    const selfHosted = ConsortConfig.parse({ jobs: { runsOn: ["self-hosted"] } });
    expect(nextAction(sim.snapshot, selfHosted).task).toBe(
      "Every gate is approved: merge the pull request. Consort then migrates the parent's database branch.",
    );
  });

  it("says nobody acts on a track that is done or abandoned, and why it ended", () => {
    const done = reach("done");
    expect(next(done)).toEqual({
      ...common(done),
      actor: "nobody",
      role: null,
      task: "Done: merged and promoted.",
      allowedPaths: [],
      frozenPaths: [],
      unit: null,
      testsInTurn: [],
      checks: [],
      gate: null,
      trailer: null,
    } satisfies NextAction);
    const abandoned = reach("abandoned");
    expect(next(abandoned)).toMatchObject({ actor: "nobody", task: "Abandoned: feature dropped" });
    expect(nextAction(withContext(abandoned.snapshot, { ended: null }), abandoned.config).task).toBe("Abandoned: ");
  });
});

describe("renderNextAction", () => {
  it("shows a build step with its unit, role, tests, paths, frozen files, trailer and checks", () => {
    const sim = reach("green");
    expect(renderNextAction(next(sim))).toBe(
      [
        "track acme/stockflow#12 · green · T1",
        "next: agent (driver)",
        "",
        "Make T1 pass by changing application code and migrations only; never a test file.",
        "",
        "tests in turn:",
        "  T1 [behavior] test/stock.test.ts :: filing stock > persists one row with sku, location, quantity and code",
        "",
        `may change: ${CODE_PATHS.join(", ")}`,
        "frozen: test/stock.test.ts (unchanged)",
        "every commit ends with the trailer: Consort-Role: driver",
        "",
        "will be checked:",
        "  - migrations apply to a throwaway copy of the track's database",
        "  - every test up to and including T1 passes",
        "  - no frozen test file changed",
      ].join("\n"),
    );
  });

  it("shows a gate with the manifest to approve and no role", () => {
    const sim = reach("test-list-gate");
    expect(renderNextAction(next(sim))).toBe(
      [
        "track acme/stockflow#12 · test-list-gate",
        "next: person",
        "",
        "Review the ordered test list in the PR, then approve with a PR review on the current commit. You must not have authored it.",
        `approve manifest: ${sim.context.gates["test-list"].pendingHash}`,
        "",
        "will be checked:",
        ...[...GATE_CHECKS, "the reviewer authored none of the commits under approval (tests-bot[bot])"].map(
          (c) => `  - ${c}`,
        ),
      ].join("\n"),
    );
  });

  it("shows only the task when there is nothing else to say", () => {
    expect(renderNextAction(next(reach("done")))).toBe(
      ["track acme/stockflow#12 · done", "next: nobody", "", "Done: merged and promoted."].join("\n"),
    );
  });
});
