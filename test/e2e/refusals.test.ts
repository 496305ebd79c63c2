import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { CycleResult } from "../../src/cycle/index.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import * as F from "./support/feature.js";
import { AGENTS, LEAD, OUTSIDER, Scenario, type Checkpoint } from "./support/scenario.js";

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

/** A refused push: the discipline check on the pushed commit fails, the track stands, the comment says how to go on. */
async function expectPushRefused(before: TrackSnapshot, pushed: string, reason: RegExp): Promise<void> {
  expect(standing(s.snapshot())).toEqual(standing(before));
  const discipline = s.world.check(pushed, "consort/discipline");
  expect(discipline.conclusion).toBe("failure");
  expect(
    `${discipline.output.title}\n${discipline.output.summary}\n${discipline.output.text ?? ""}\n${comment()}`,
  ).toMatch(reason);
  // What to do: go back to the last accepted commit and push the step again.
  expect(comment()).toContain(`reset the branch to ${before.context.head.slice(0, 7)}`);
  expect(s.world.mock.violations).toEqual([]);
}

describe("refused pushes on the track", () => {
  test("GREEN before RED: the driver's code while the navigator's failing test is due", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("driver", F.GREEN_T1);
    await expectPushRefused(before, sha, /navigator/);
    expect(s.world.dispatches).toHaveLength(at.red.world.dispatches.length);
  });

  test("code committed as navigator", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1,
      "src/routes/index.ts": F.GREEN_T2["src/routes/index.ts"]!,
    });
    await expectPushRefused(before, sha, /src\/routes\/index\.ts/);
  });

  test("a commit with no role", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const sha = await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 }, { trailer: false });
    await expectPushRefused(before, sha, /Consort-Role/);
  });

  test("a workflow file changed on the track", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const workflow = s.repo.fileAt("main", ".github/workflows/consort-cycle.yml")!.toString("utf8");
    const sha = await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1,
      ".github/workflows/consort-cycle.yml": `${workflow}\n# skip the tests\n`,
    });
    await expectPushRefused(before, sha, /\.github\/workflows\/consort-cycle\.yml/);
  });

  test("consort.yml changed on the track", async () => {
    s.restore(at.red);
    const before = s.snapshot();
    const config = s.repo.fileAt("main", ".github/consort.yml")!.toString("utf8");
    const sha = await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1,
      ".github/consort.yml": `${config}repairBound: 10\n`,
    });
    await expectPushRefused(before, sha, /\.github\/consort\.yml/);
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
    expect(s.world.check(sha, "consort/discipline").conclusion).toBe("failure");
    expect(s.world.check(sha, "consort/design").conclusion).not.toBe("success");
    expect(comment()).toMatch(/architecture\.json/);
    expect(comment()).toContain(`reset the branch to ${before.context.head.slice(0, 7)}`);
  });

  test("a test committed as driver", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    const sha = await s.step("driver", {
      ...F.GREEN_T1,
      "test/extra.test.ts": 'import { test } from "vitest";\ntest("extra", () => {});\n',
    });
    await expectPushRefused(before, sha, /test\/extra\.test\.ts/);
  });

  test("a frozen test edited", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    const sha = await s.step("driver", {
      ...F.GREEN_T1,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace("toHaveLength(1)", "toHaveLength(0)"),
    });
    await expectPushRefused(before, sha, /frozen/i);
  });

  test("a frozen test deleted", async () => {
    s.restore(at.green);
    const before = s.snapshot();
    const sha = await s.step("driver", { ...F.GREEN_T1, [F.INDEX_TEST_FILE]: null });
    await expectPushRefused(before, sha, /frozen/i);
  });

  test("an earlier test's lines changed in a later RED step", async () => {
    s.restore(at.secondRed);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.TEST_FILE]: F.RED_T2,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace("toHaveLength(1)", "toBeDefined()"),
    });
    await expectPushRefused(before, sha, /frozen/i);
  });

  test(".skip added to a frozen test", async () => {
    s.restore(at.secondRed);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.TEST_FILE]: F.RED_T2,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace('\ntest("', '\ntest.skip("'),
    });
    await expectPushRefused(before, sha, /frozen/i);
  });

  test(".only added to a frozen test", async () => {
    s.restore(at.secondRed);
    const before = s.snapshot();
    const sha = await s.step("navigator", {
      [F.TEST_FILE]: F.RED_T2,
      [F.INDEX_TEST_FILE]: F.RED_T1.replace('\ntest("', '\ntest.only("'),
    });
    await expectPushRefused(before, sha, /frozen/i);
  });
});

describe("approvals that do not count", () => {
  /** The design gate stays pending: its check never passes, and the comment says why the review did not count. */
  function expectNotApproved(before: TrackSnapshot, why: RegExp): void {
    expect(standing(s.snapshot())).toEqual(standing(before));
    expect(s.snapshot().context.gates.design.status).toBe("pending");
    expect(s.world.check(s.head(), "consort/design").conclusion).not.toBe("success");
    expect(comment()).toMatch(why);
    expect(s.world.mock.violations).toEqual([]);
  }

  test("an approval by an author of the approved commits", async () => {
    s.restore(at.designGate);
    const before = s.snapshot();
    await s.review(AGENTS.architect.login, "APPROVED");
    expectNotApproved(before, new RegExp(`${AGENTS.architect.login}.*(authored|author)`));
  });

  test("an approval by a user without write access", async () => {
    s.restore(at.designGate);
    const before = s.snapshot();
    await s.review(OUTSIDER, "APPROVED");
    expectNotApproved(before, new RegExp(`${OUTSIDER}.*(write|permission)`));
  });

  test("an approval on an older commit", async () => {
    s.restore(at.designGate);
    const before = s.snapshot();
    await s.review(LEAD, "APPROVED", designCommits[2]);
    expectNotApproved(before, /(manifest|hash|older|commit)/i);
  });

  test("an approval dismissed withdraws the gate", async () => {
    s.restore(at.designGate);
    const reviewId = await s.review(LEAD, "APPROVED");
    expect(s.snapshot().context.gates.design.status).toBe("approved");
    expect(s.world.check(s.head(), "consort/design").conclusion).toBe("success");
    await s.dismissReview(reviewId);
    const after = s.snapshot();
    expect(after.context.gates.design.status).toBe("withdrawn");
    expect(s.world.check(s.head(), "consort/design").conclusion).not.toBe("success");
    expect(comment()).toMatch(/dismissed/);
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
      },
      { "cycle-result.json": forged },
    );
    await s.deliverRun(run);
    expect(standing(s.snapshot())).toEqual(standing(before));
    expect(s.world.check(s.head(), "consort/build").conclusion).not.toBe("success");
    expect(s.logs.join("\n")).toMatch(/run 4242 .*not dispatched by Consort/);
  });

  test("a cycle result for another commit is ignored", async () => {
    s.restore(at.greenVerify);
    const before = s.snapshot();
    const dispatch = s.pendingRuns().find((d) => d.workflow === "consort-cycle.yml")!;
    const other = before.context.frozenTests.T1!.commit;
    const wrong = { ...redResult, step: "green", commit: other, verdict: "verified", reasons: [] };
    await s.reportRun(dispatch.runId, { "cycle-result.json": wrong });
    expect(standing(s.snapshot())).toEqual(standing(before));
    expect(s.world.check(s.head(), "consort/build").conclusion).not.toBe("success");
    expect(s.logs.join("\n")).toMatch(new RegExp(`reports on commit ${other.slice(0, 12)}`));
  });

  test("a cycle that never reports fails the build check with a re-run button", async () => {
    s.restore(at.greenVerify);
    s.now = new Date(s.now.getTime() + (s.config.cycle.timeoutMinutes + 1) * 60_000);
    // Any later event for the track notices the overdue run (here a comment-only review).
    await s.review(OUTSIDER, "COMMENTED");
    const build = s.world.check(s.head(), "consort/build");
    expect(build.conclusion).toBe("failure");
    expect(`${build.output.summary}\n${build.output.text ?? ""}`).toMatch(
      /has not reported a result within \d+ minutes/,
    );
    expect(build.actions.map((a) => a.label)).toContainEqual(expect.stringMatching(/re-?run/i));
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
    // Each write was a fast-forward of the one before: no update was lost or forced.
    const history = s.repo.git("rev-list", s.world.stateHead()!, `^${stateBefore}`).split("\n").filter(Boolean);
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(s.state().cycles.filter((c) => c.runId !== null)).toHaveLength(s.state().cycles.length);
  });

  test("the state file edited by someone else: every check fails, nothing advances", async () => {
    s.restore(at.red);
    const path = `tracks/${s.trackId}.json`;
    const text = s.world.stateFileText(s.trackId)!;
    const edited = text.replace(/"stage": ?"red"/, '"stage": "deploy-gate"');
    expect(edited).not.toBe(text);
    s.repo.commitOn(
      "consort/state",
      { name: "Someone", email: `${OUTSIDER}@users.noreply.github.com`, login: OUTSIDER },
      "skip ahead",
      { [path]: edited },
    );
    const tampered = s.world.stateHead();
    const sha = await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    expect(s.world.stateHead()).toBe(tampered);
    expect(s.world.dispatches).toHaveLength(at.red.world.dispatches.length);
    const checks = s.world.checksOn(sha);
    for (const name of [
      "consort/design",
      "consort/test-list",
      "consort/build",
      "consort/deploy",
      "consort/promote",
      "consort/discipline",
    ]) {
      expect(checks.get(name)?.conclusion, name).toBe("failure");
    }
    const discipline = checks.get("consort/discipline")!;
    expect(`${discipline.output.summary}\n${discipline.output.text ?? ""}`).toMatch(/signature|tamper/i);
    expect(discipline.actions.map((a) => a.identifier).join(" ")).toMatch(/seal/);
  });
});
