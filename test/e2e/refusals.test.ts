import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { CycleResult } from "../../src/cycle/index.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { allChecks, checkTable, summaryOf, violationsOn } from "./support/checks.js";
import * as F from "./support/feature.js";
import { AGENTS, LEAD, OUTSIDER, OUTSIDER_PUSHER, Scenario, type Checkpoint } from "./support/scenario.js";

/**
 * The refusal catalogue: every shortcut an agent (or a person) might take, each driven through the
 * app like the real thing, each ending with the right check failing (or never passing), the track
 * not advanced, and a message that says what happened and what to do. The scenarios fork from
 * shared starting points (the design gate, the first RED, the first GREEN, the second RED) so the
 * real cycles that get there run once.
 */

const s = new Scenario({ config: { approvers: { users: [LEAD, AGENTS.architect.login, OUTSIDER] } } });
s.world.permissions.set(OUTSIDER, "read");
const at: Record<"designGate" | "red" | "green" | "greenVerify" | "secondRed", Checkpoint> = {} as never;
let redResult: CycleResult;
let designCommits: string[] = [];

beforeAll(async () => {
  await s.createBranch();
  await s.openPull();
  designCommits = [
    await s.step("product-owner", { ".consort/spec.json": F.STORIES }),
    await s.step("spec-author", { ".consort/spec.json": F.SPEC }),
    await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE }),
    await s.step("dba", { ".consort/db-design.json": F.DB_DESIGN }),
  ];
  expect(s.snapshot().stage).toBe("design-gate");
  at.designGate = s.checkpoint();
  await s.review(LEAD, "APPROVED");
  await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });
  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("red");
  at.red = s.checkpoint();
  await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
  redResult = await s.runDispatchedCycle();
  expect(redResult.verdict, redResult.reasons.join("\n")).toBe("verified");
  expect(s.snapshot().stage).toBe("green");
  at.green = s.checkpoint();
  await s.step("driver", F.GREEN_T1);
  expect(s.snapshot().stage).toBe("green-verify");
  at.greenVerify = s.checkpoint();
  const green = await s.runDispatchedCycle();
  expect(green.verdict, green.reasons.join("\n")).toBe("verified");
  await s.step("navigator", { ".consort/reviews/T1.json": F.REVIEW_T1 });
  expect(s.snapshot().stage).toBe("red");
  at.secondRed = s.checkpoint();
}, 900_000);

afterAll(async () => {
  await s.dispose();
});

/** What must not move when a step is refused: the stage, the accepted head, the gates, the frozen files. */
function standing(snapshot: TrackSnapshot) {
  const { stage, context } = snapshot;
  return {
    stage,
    head: context.head,
    gates: Object.fromEntries(
      Object.entries(context.gates).map(([name, gate]) => [
        name,
        { status: gate.status, approvedHash: gate.approvedHash },
      ]),
    ),
    frozen: Object.fromEntries(Object.entries(context.frozenTests).map(([id, f]) => [id, f.hash])),
    pendingDispatch: context.pendingDispatch?.dispatchId ?? null,
  };
}

function comment(): string {
  return s.world
    .appComments(s.pull!.number)
    .map((c) => c.body)
    .join("\n");
}

/**
 * The refusal the comment shows for a push: each reason on its own line, then what to do (go back
 * to the last accepted commit and push the step again).
 */
function refusal(pushed: string, outcome: string, reasons: string[], head: string): string {
  return [
    `**Push to ${pushed.slice(0, 7)} rejected** (${outcome}):`,
    ...reasons.map((r) => `- ${r}`),
    "",
    `To continue, reset the branch to ${head.slice(0, 7)} (git push --force-with-lease origin ${head}:${s.branch}) and push the step again.`,
  ].join("\n");
}

/** Each reason as classification writes it: after the short sha of the commit it is about. */
const about = (sha: string, reasons: string[]) => reasons.map((r) => `${sha.slice(0, 7)}: ${r}`);

/** A refused push: the track stands, the discipline check on the pushed commit fails with exactly these reasons, and the comment gives them with how to go on. */
async function expectPushRefused(before: TrackSnapshot, pushed: string, reasons: string[]): Promise<void> {
  expect(standing(s.snapshot())).toEqual(standing(before));
  const discipline = s.world.check(pushed, "consort/discipline");
  expect([discipline.conclusion, discipline.output.title]).toEqual([
    "failure",
    `Commit ${pushed.slice(0, 7)} refused: reset the branch to ${before.context.head.slice(0, 7)}`,
  ]);
  expect(violationsOn(discipline)).toEqual(about(pushed, reasons));
  expect(comment()).toContain(
    refusal(pushed, `the track stays at ${before.stage}`, about(pushed, reasons), before.context.head),
  );
  expect(s.world.mock.violations).toEqual([]);
}

/** What a step at `stage` may not touch, as the refusal says it. */
const notYours = (path: string, role: string, stage: string, allowed: string) =>
  `path ${path} is not ${role}'s to change at ${stage} (allowed now: ${allowed})`;
const AT_RED = "test/**; never: .consort/**";
const AT_GREEN = "src/**, package.json, migrations/**; never: test/**, .consort/**";
const PROTECTED =
  "workflows, .github/consort.yml and CODEOWNERS never change on a track (change them on the default branch)";
const CHANGED_LINE = (line: number, text: string) =>
  `${F.INDEX_TEST_FILE}: frozen line ${line} (\`${text}...\`) was changed or removed; a RED step may only add lines to a frozen test file`;
const T1_TEST_LINE = 'test("listing a location is served by an index on stock_r';

describe("refused pushes on the track", () => {
  test("GREEN before RED: the driver's code while the navigator's failing test is due", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("driver", F.GREEN_T1);
    await expectPushRefused(before, sha, [
      "not this role's turn: the track is at red, which is the Navigator's (navigator); the commit claims driver",
      notYours(`migrations/${F.MIGRATION_ID}.down.sql`, "driver", "red", AT_RED),
      notYours(`migrations/${F.MIGRATION_ID}.up.sql`, "driver", "red", AT_RED),
    ]);
    expect(s.world.dispatches).toHaveLength(at.red.world.dispatches.length);
  });

  test("code committed as navigator", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1,
      "src/routes/index.ts": F.GREEN_T2["src/routes/index.ts"]!,
    });
    await expectPushRefused(before, sha, [notYours("src/routes/index.ts", "navigator", "red", AT_RED)]);
  });

  test("a commit with no role", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 }, { trailer: false });
    await expectPushRefused(before, sha, [
      "no Consort-Role trailer: end the commit message with a blank line and `Consort-Role: <role>` (one of product-owner, spec-author, architect, dba, test-strategist, ux-designer, navigator, driver)",
    ]);
  });

  test("a workflow file changed on the track", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const workflow = s.repo.fileAt("main", ".github/workflows/consort-cycle.yml")!.toString("utf8");
    const sha = await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1,
      ".github/workflows/consort-cycle.yml": `${workflow}\n# skip the tests\n`,
    });
    await expectPushRefused(before, sha, [`touches protected path .github/workflows/consort-cycle.yml: ${PROTECTED}`]);
  });

  test("consort.yml changed on the track", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const config = s.repo.fileAt("main", ".github/consort.yml")!.toString("utf8");
    const sha = await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1,
      ".github/consort.yml": `${config}repairBound: 10\n`,
    });
    await expectPushRefused(before, sha, [`touches protected path .github/consort.yml: ${PROTECTED}`]);
  });

  test("a design artifact changed after its gate withdraws the design gate", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("architect", {
      ".consort/architecture.json": F.ARCHITECTURE.replace("Migration 0002 adds", "Maybe add"),
    });
    const after = s.snapshot();
    // The track goes back to wait for the design gate, which must be approved again.
    expect(after.stage).toBe("design-gate");
    expect(after.context.head).toBe(before.context.head);
    expect(after.context.gates.design.status).toBe("withdrawn");
    // ... and what was built on it goes with it: the test list and the build evidence.
    expect(checkTable(s.world, sha)).toEqual({
      "consort/design": "failure",
      "consort/test-list": "failure",
      "consort/build": "failure",
      "consort/deploy": "missing",
      "consort/promote": "missing",
      "consort/discipline": "failure",
      "consort/schema": "success",
    });
    const reasons = about(sha, [
      "not this role's turn: the track is at red, which is the Navigator's (navigator); the commit claims architect",
      "touches frozen file .consort/architecture.json, approved at the design gate: reset the branch, or ask a person to renegotiate",
    ]);
    expect(violationsOn(s.world.check(sha, "consort/discipline"))).toEqual(reasons);
    const design = s.world.check(sha, "consort/design");
    expect(design.output.title).toBe("Approval withdrawn");
    expect(summaryOf(design)).toContain(`### Design gate\n\na frozen file changed in ${sha.slice(0, 7)}\n\n`);
    expect(comment()).toContain(
      refusal(sha, "the design gate is withdrawn and must be approved again", reasons, before.context.head),
    );
  });

  test("a test committed as driver", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    const sha = await s.step("driver", {
      ...F.GREEN_T1,
      "test/extra.test.ts": 'import { test } from "vitest";\ntest("extra", () => {});\n',
    });
    await expectPushRefused(before, sha, [notYours("test/extra.test.ts", "driver", "green", AT_GREEN)]);
  });

  test("a frozen test edited", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    const sha = await s.step("driver", {
      ...F.GREEN_T1,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace("toHaveLength(1)", "toHaveLength(0)"),
    });
    await expectPushRefused(before, sha, [
      `${F.INDEX_TEST_FILE}: a frozen test file changed; outside a RED step it must stay exactly as verified (restore it)`,
    ]);
  });

  test("a frozen test deleted", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    const sha = await s.step("driver", { ...F.GREEN_T1, [F.INDEX_TEST_FILE]: null });
    await expectPushRefused(before, sha, [
      `${F.INDEX_TEST_FILE}: a frozen test file was deleted; restore it (a verified RED test may never be removed)`,
    ]);
  });

  test("an earlier test's lines changed in a later RED step", async () => {
    s.restore(at.secondRed);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.TEST_FILE]: F.RED_T2,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace("toHaveLength(1)", "toBeDefined()"),
    });
    await expectPushRefused(before, sha, [
      CHANGED_LINE(11, "expect(rows.map((r) => r.indexdef).filter((d) => /\\(locat"),
    ]);
  });

  test(".skip added to a frozen test", async () => {
    s.restore(at.secondRed);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.TEST_FILE]: F.RED_T2,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace('\ntest("', '\ntest.skip("'),
    });
    await expectPushRefused(before, sha, [
      CHANGED_LINE(9, T1_TEST_LINE),
      `${F.INDEX_TEST_FILE}: line 9 adds the skip/focus marker \`.skip\`; a frozen or new test may not be skipped or focused`,
    ]);
  });

  test(".only added to a frozen test", async () => {
    s.restore(at.secondRed);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.TEST_FILE]: F.RED_T2,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace('\ntest("', '\ntest.only("'),
    });
    await expectPushRefused(before, sha, [
      CHANGED_LINE(9, T1_TEST_LINE),
      `${F.INDEX_TEST_FILE}: line 9 adds the skip/focus marker \`.only\`; a frozen or new test may not be skipped or focused`,
    ]);
  });
});

describe("a RED that needs a module nobody declared", () => {
  const LEGAL_PATH =
    "declare it in .consort/architecture.json modules (architect, before the design gate; a name the test imports goes in the module's exports), or test through an existing seam";
  const undeclared = `'../${F.UNDECLARED_MODULE}' cannot be loaded and the approved architecture declares no new module there: ${LEGAL_PATH}`;

  /** A refused RED: the track is back at red for another try, and the checks say why. */
  async function expectRedRefused(result: CycleResult, ...reasons: string[]) {
    expect(result.verdict).toBe("refused");
    for (const reason of reasons) expect(result.reasons.join("\n")).toContain(reason);
    expect(s.snapshot().stage).toBe("red");
    expect(checkTable(s.world, s.head())).toEqual({
      ...allChecks("in_progress"),
      "consort/discipline": "success",
      "consort/schema": "success",
      "consort/design": "success",
      "consort/test-list": "success",
      "consort/build": "failure",
      "consort/deploy": "missing",
      "consort/promote": "missing",
    });
    expect(summaryOf(s.world.check(s.head(), "consort/build"))).toContain(LEGAL_PATH);
    expect(s.world.mock.violations).toEqual([]);
  }

  test("a static import of an undeclared module is refused, naming the legal path", async () => {
    s.restore(at.secondRed);
    await s.step("navigator", {
      [F.TEST_FILE]: `import { exportStock } from "../${F.UNDECLARED_MODULE}";\n${F.RED_T2}\nvoid exportStock;\n`,
    });
    expect(s.snapshot().stage).toBe("red-verify");
    const result = await s.runDispatchedCycle();
    await expectRedRefused(result, `a test file failed to load: ${F.TEST_FILE}: Cannot find module`, undeclared);
  });

  test("`.resolves` over an undeclared module is refused: the missing module is not an assertion failure", async () => {
    s.restore(at.secondRed);
    await s.step("navigator", {
      [F.TEST_FILE]: [
        'import { expect, test } from "vitest";',
        "",
        `test("${F.T2_TITLE}", async () => {`,
        `  await expect(import("../${F.UNDECLARED_MODULE}").then((m) => m.exportStock("A1"))).resolves.toEqual([]);`,
        "});",
        "",
      ].join("\n"),
    });
    const result = await s.runDispatchedCycle();
    expect(result.tests.find((t) => t.id === "T2")).toMatchObject({
      outcome: "failed-error",
      type: "a missing module or export inside an assertion",
    });
    await expectRedRefused(result, "not by an assertion", LEGAL_PATH);
  });
});

describe("a commit bigger than the push payload lists", () => {
  test("3000 listed files do not hide a change to a frozen design file: the commit is read from git and refused", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    // GitHub lists 3000 paths of a commit, added ones first: the driver's code and filler fill them.
    const filler = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`src/fill/f${String(i).padStart(4, "0")}.ts`, `export {};\n`]),
    );
    const sha = await s.step("driver", {
      ...F.GREEN_T1,
      ...filler,
      ".consort/spec.json": F.SPEC.replace("location", "place"),
    });

    const after = s.snapshot();
    expect([after.stage, after.context.head, after.context.gates.design.status]).toEqual([
      "design-gate",
      before.context.head,
      "withdrawn",
    ]);
    expect(violationsOn(s.world.check(sha, "consort/discipline"))).toEqual(
      about(sha, [
        "changes 3000 files or more, more than GitHub lists, so Consort cannot verify it: split it into smaller commits",
        "touches frozen file .consort/spec.json, approved at the design gate: reset the branch, or ask a person to renegotiate",
      ]),
    );
    expect(s.world.dispatches).toHaveLength(at.green.world.dispatches.length);
    expect(s.world.mock.violations).toEqual([]);
  }, 120_000);
});

describe("the default branch merged into a track", () => {
  test("a track migration that shares its version with one main gained meanwhile is named in consort/schema", async () => {
    s.restore(at.greenVerify);
    const lead = { name: LEAD, email: `${LEAD}@users.noreply.github.com`, login: LEAD };
    s.repo.commitOn("main", lead, "Stock batches land\n", {
      "migrations/0002_stock_batches.up.sql": "create table stock_batches (id int primary key);\n",
      "migrations/0002_stock_batches.down.sql": "drop table stock_batches;\n",
    });
    const merge = await s.updateBranch();

    expect([s.snapshot().stage, s.snapshot().context.head]).toEqual(["green-verify", merge]);
    const schema = s.world.check(merge, "consort/schema");
    expect(schema.conclusion).toBe("failure");
    expect(summaryOf(schema)).toContain(
      `- migrations/${F.MIGRATION_ID} has version 0002, as migrations/0002_stock_batches from main does: renumber the track's migration after 0002`,
    );
    expect(s.world.check(merge, "consort/discipline").conclusion).toBe("success");
    expect(s.world.mock.violations).toEqual([]);
  });

  test("a track migration that would now run before one main's database already ran is named in consort/schema", async () => {
    s.restore(at.greenVerify);
    const lead = { name: LEAD, email: `${LEAD}@users.noreply.github.com`, login: LEAD };
    s.repo.commitOn("main", lead, "Stock batches land\n", {
      "migrations/0003_stock_batches.up.sql": "create table stock_batches (id int primary key);\n",
      "migrations/0003_stock_batches.down.sql": "drop table stock_batches;\n",
    });
    const merge = await s.updateBranch();

    const schema = s.world.check(merge, "consort/schema");
    expect(schema.conclusion).toBe("failure");
    expect(summaryOf(schema)).toContain(
      `- migrations/${F.MIGRATION_ID} would run before migrations/0003_stock_batches, which main gained meanwhile and its database has already run: renumber it after 0003`,
    );
  });
});

describe("approvals that do not count", () => {
  /**
   * The design gate stays pending: its check is in progress on the head, waiting for an approval
   * (never success), and the comment says why the review did not count.
   */
  function expectNotApproved(before: TrackSnapshot, reviewer: string, why: string): void {
    expect(standing(s.snapshot())).toEqual(standing(before));
    expect(s.snapshot().context.gates.design.status).toBe("pending");
    expect(checkTable(s.world, s.head())["consort/design"]).toBe("in_progress");
    expect(comment()).toContain(`> @${reviewer}'s approval does not count for the design gate: ${why}\n`);
    // The gate's check says so too, under its approvals: a reviewer may look only there.
    expect(summaryOf(s.world.check(s.head(), "consort/design"))).toContain(
      `### Approvals\n\n_No approvals yet._\n\n> @${reviewer}'s approval does not count for the design gate: ${why}`,
    );
    expect(s.world.mock.violations).toEqual([]);
  }

  test("an approval by an author of the approved commits", async () => {
    s.restore(at.designGate);
    const before = s.snapshot();
    await s.review(AGENTS.architect.login, "APPROVED");
    expectNotApproved(
      before,
      AGENTS.architect.login,
      `${AGENTS.architect.login} authored ${designCommits[2]!.slice(0, 7)}; committed ${designCommits[2]!.slice(0, 7)}; authored or pushed steps Consort recorded for the design gate under approval and cannot approve their own work`,
    );
  });

  test("an approval by a user without write access", async () => {
    s.restore(at.designGate);
    const before = s.snapshot();
    await s.review(OUTSIDER, "APPROVED");
    expectNotApproved(before, OUTSIDER, `${OUTSIDER} has read permission; approvals need write, maintain or admin`);
  });

  test("an approval on an older commit", async () => {
    s.restore(at.designGate);
    const before = s.snapshot();
    // The architect's commit came before the DBA's: the design files there are not the pending ones.
    await s.review(LEAD, "APPROVED", designCommits[2]);
    expectNotApproved(
      before,
      LEAD,
      `the frozen manifest hash at ${designCommits[2]!.slice(0, 7)} is unknown, so the review cannot be tied to the pending files`,
    );
  });

  test("an approval dismissed withdraws the gate", async () => {
    s.restore(at.designGate);
    const reviewId = await s.review(LEAD, "APPROVED");
    expect(s.snapshot().context.gates.design.status).toBe("approved");
    expect(s.world.check(s.head(), "consort/design").conclusion).toBe("success");
    await s.dismissReview(reviewId);
    const after = s.snapshot();
    expect(after.context.gates.design.status).toBe("withdrawn");
    const design = s.world.check(s.head(), "consort/design");
    expect([design.conclusion, design.output.title]).toEqual(["failure", "Approval withdrawn"]);
    expect(summaryOf(design)).toContain(`### Design gate\n\n${LEAD}'s review ${reviewId} was dismissed\n\n`);
    expect(comment()).toContain(
      `> **The design gate is withdrawn**: ${LEAD}'s review ${reviewId} was dismissed. It needs approving again.`,
    );
  });
});

describe("cycle results that are not trusted", () => {
  test("a cycle result from a run the app did not dispatch is ignored", async () => {
    s.restore(at.greenVerify);
    const before = s.snapshot();
    const forged = {
      ...redResult,
      step: "green",
      commit: s.head(),
      request: { ...redResult.request, step: "green", commit: s.head() },
      verdict: "verified",
      reasons: [],
    };
    const run = s.world.addRun(
      {
        id: 4242,
        path: ".github/workflows/consort-cycle.yml",
        event: "workflow_dispatch",
        head_branch: "main",
        head_sha: s.repo.branchHead("main")!,
        actor: LEAD,
      },
      { "cycle-result.json": forged },
    );
    await s.deliverRun(run);
    expect(standing(s.snapshot())).toEqual(standing(before));
    // The build still waits for the cycle it dispatched: in progress, so nothing passes.
    expect(checkTable(s.world, s.head())["consort/build"]).toBe("in_progress");
    expect(s.logs).toContain(
      "ignored workflow run: run 4242 of .github/workflows/consort-cycle.yml was not dispatched by Consort for any open track (its run-name names no dispatch id)",
    );
  });

  test("a cycle result for another commit is ignored", async () => {
    s.restore(at.greenVerify);
    const before = s.snapshot();
    const dispatch = s.pendingRuns().find((d) => d.workflow === "consort-cycle.yml")!;
    const other = before.context.frozenTests.T1!.commit;
    const wrong = { ...redResult, step: "green", commit: other, verdict: "verified", reasons: [] };
    await s.reportRun(dispatch.runId, { "cycle-result.json": wrong });
    expect(standing(s.snapshot())).toEqual(standing(before));
    // The build still waits for the cycle it dispatched: in progress, so nothing passes.
    expect(checkTable(s.world, s.head())["consort/build"]).toBe("in_progress");
    expect(s.logs).toContain(
      `ignored workflow run: run ${dispatch.runId} reports on commit ${other.slice(0, 12)}, but Consort asked it to test ${before.context.head.slice(0, 12)}`,
    );
  });

  test("a cycle that never reports fails the build check with a re-run button, and the track stands", async () => {
    s.restore(at.greenVerify);
    const before = s.snapshot();
    const { dispatchedAt, dispatchId } = before.context.cycles.find(
      (c) => c.dispatchId === before.context.pendingDispatch!.dispatchId,
    )!;
    s.now = new Date(s.now.getTime() + (s.config.cycle.timeoutMinutes + 1) * 60_000);
    // Any later event for the track notices the overdue run (here a comment-only review).
    await s.review(OUTSIDER, "COMMENTED");
    const overdue = `The cycle ${dispatchId}, dispatched at ${dispatchedAt}, has not reported a result within ${s.config.cycle.timeoutMinutes} minutes (cycle.timeoutMinutes in .github/consort.yml). Its result will not be waited for: press "Re-run cycle" to dispatch it again.`;

    // Nothing moved but the wait: the run is given up, its GREEN is neither valid nor invalid.
    expect(standing(s.snapshot())).toEqual({ ...standing(before), pendingDispatch: null });
    expect(s.snapshot().context.cycles.at(-1)).toMatchObject({
      runId: 0,
      outcome: "error",
      reasons: [overdue],
    });
    expect(checkTable(s.world, s.head())).toEqual({
      "consort/design": "success",
      "consort/test-list": "success",
      "consort/build": "failure",
      "consort/deploy": "missing",
      "consort/promote": "missing",
      "consort/discipline": "success",
      "consort/schema": "success",
    });
    const build = s.world.check(s.head(), "consort/build");
    expect(build.output.title).toBe("T1 (1 of 4): green-verify");
    expect(summaryOf(build)).toContain(`### Build\n\n${overdue}\n\n`);
    expect(build.actions).toEqual([
      { label: "Re-run cycle", description: "Dispatch the last cycle again", identifier: "rerun-cycle" },
    ]);
  });
});

describe("deliveries", () => {
  test("the same webhook delivered twice is applied once", async () => {
    s.restore(at.red);
    const before = s.head();
    s.commit("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    const delivery = await s.push(before);
    const stateAfterFirst = s.world.stateHead();
    const dispatches = s.world.dispatches.length;
    await s.push(before, { deliveryId: delivery });
    expect(s.world.stateHead()).toBe(stateAfterFirst);
    expect(s.world.dispatches).toHaveLength(dispatches);
    expect(s.snapshot().stage).toBe("red-verify");
  });

  test("two webhooks for one track at once: both are decided on the latest state, nothing is lost", async () => {
    s.restore(at.red);
    const before = s.head();
    s.commit("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    const stateBefore = s.world.stateHead()!;
    // The same push arrives twice under different delivery ids, at the same moment.
    await Promise.all([s.push(before), s.push(before)]);
    expect(s.snapshot().stage).toBe("red-verify");
    expect(s.world.dispatches.length - at.red.world.dispatches.length).toBe(1);
    // One write, a fast-forward: the second delivery, decided on the state the first wrote, changed nothing.
    const history = s.repo.git("rev-list", s.world.stateHead()!, `^${stateBefore}`).split("\n").filter(Boolean);
    expect(history).toHaveLength(1);
    expect(s.state().cycles.filter((c) => c.requestSha256 !== undefined)).toHaveLength(s.state().cycles.length);
  });

  test("the state file edited by someone else: every check fails, nothing advances", async () => {
    s.restore(at.red);
    const path = `tracks/${s.trackId}.json`;
    const text = s.world.stateFileText(s.trackId)!;
    const edited = text.replace(/"stage": ?"red"/, '"stage": "deploy-gate"');
    expect(edited).not.toBe(text);
    s.repo.commitOn("consort/state", OUTSIDER_PUSHER, "skip ahead", { [path]: edited });
    const tampered = s.world.stateHead();
    const sha = await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    expect(s.world.stateHead()).toBe(tampered);
    expect(s.world.dispatches).toHaveLength(at.red.world.dispatches.length);
    expect(checkTable(s.world, sha)).toEqual(allChecks("failure"));
    for (const check of s.world.checksOn(sha).values()) {
      expect(check.output.title, check.name).toBe("State file is tampered");
      expect(summaryOf(check), check.name).toContain(
        `**What failed**\n\n- commit ${tampered!.slice(0, 7)} on consort/state was not written by this app (authored by ${OUTSIDER}, not signed by GitHub (unsigned); the app's own are authored by consort[bot] and signed by GitHub): someone pushed to consort/state past its ruleset\n- signature does not match the content (edited outside the app, or sealed with another key)\n\n`,
      );
      expect(check.actions, check.name).toEqual([
        { label: "Re-seal state", description: "Admins: restore the last sealed state", identifier: "reseal" },
      ]);
    }
  });
});
