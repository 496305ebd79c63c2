import { afterAll, beforeAll, describe, expect, test } from "vitest";
import * as F from "../e2e/support/feature.js";
import { LEAD, OUTSIDER, Scenario } from "../e2e/support/scenario.js";

/**
 * Anyone with write access can run the cycle workflow by hand and give the run a run-name that
 * carries a dispatch id in flight. Such a run must not answer the dispatch: the app recognises it
 * (not started by the app's bot, not the default branch's workflow file) before it reads its
 * artifact, names it on the track's build check, and still ingests the run it dispatched. The
 * attack goes through the real `workflow_run.completed` webhook to the app on the GitHub double.
 */

const s = new Scenario();
const IMPOSTOR_RUN = 777_001;

beforeAll(async () => {
  await s.openTrack();
  await s.step("spec-author", { ".consort/spec.json": F.SPEC });
  await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
  await s.step("dba", { ".consort/db-design.json": F.DB_DESIGN });
  await s.review(LEAD, "APPROVED");
  await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });
  await s.review(LEAD, "APPROVED");
  await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
  expect(s.snapshot().stage).toBe("red-verify");
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

describe("a run that borrows a dispatch id in flight", () => {
  test("a run someone started by hand, finishing first, does not take the slot: the build check names it and the dispatched run is still ingested", async () => {
    const dispatchId = s.snapshot().context.pendingDispatch!.dispatchId;
    const real = s.pendingRuns().find((d) => d.workflow === "consort-cycle.yml")!;
    // What the impostor's run uploads does not matter: the app must not even read it.
    const impostor = s.world.addRun(
      {
        id: IMPOSTOR_RUN,
        path: ".github/workflows/consort-cycle.yml",
        event: "workflow_dispatch",
        head_branch: "main",
        head_sha: s.repo.branchHead("main")!,
        display_title: `consort cycle ${dispatchId}`,
        actor: OUTSIDER,
      },
      { "cycle-result.json": { verdict: "refused", reasons: ["T1 fails with a TypeError"] } },
    );

    await s.deliverRun(impostor);

    expect(s.snapshot().stage).toBe("red-verify");
    expect(s.snapshot().context.pendingDispatch?.dispatchId).toBe(dispatchId);
    expect(s.state().cycles.at(-1)).toMatchObject({ dispatchId, runId: null });
    expect(s.world.mock.requests.filter((r) => r.path.includes(`/actions/runs/${IMPOSTOR_RUN}`))).toEqual([]);
    const build = s.world.check(s.head(), "consort/build");
    expect(build.status).toBe("in_progress");
    expect(build.output.summary).toContain(
      `Ignored run ${IMPOSTOR_RUN} (https://github.com/${s.world.fullName}/actions/runs/${IMPOSTOR_RUN}): run ${IMPOSTOR_RUN} was started by ${OUTSIDER}, not by Consort (${s.world.appLogin}): its run-name borrows dispatch ${dispatchId}, so it is ignored. Consort still waits for the run it dispatched as ${dispatchId}.`,
    );

    await s.runDispatchedCycle();

    expect(s.snapshot().stage).toBe("green");
    expect(s.state().cycles.find((c) => c.dispatchId === dispatchId)).toMatchObject({
      runId: real.runId,
      verdict: "valid",
    });
    expect(s.world.mock.violations).toEqual([]);
  });
});
