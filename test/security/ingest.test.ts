import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { requestDigest } from "../../src/github/dispatch.js";
import type { CycleResult } from "../../src/cycle/index.js";
import * as F from "../e2e/support/feature.js";
import { LEAD, Scenario, type Checkpoint } from "../e2e/support/scenario.js";
import { violationsOn } from "../e2e/support/checks.js";
import { zipBomb } from "./support/zip-bomb.js";

/**
 * The app trusts only what a run could not forge. Each attack is a real RED cycle (run by the
 * cycle runner on the embedded Postgres) or a real artifact, delivered through the real
 * `workflow_run.completed` webhook to the app on the GitHub double; each ends with the build check
 * failing with the exact reason and a Re-run button, and the track still waiting at red-verify.
 */

const s = new Scenario();
let redVerify: Checkpoint;
let red: Checkpoint;

beforeAll(async () => {
  await s.openTrack();
  await s.step("spec-author", { ".consort/spec.json": F.SPEC });
  await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
  await s.step("dba", { ".consort/db-design.json": F.DB_DESIGN });
  await s.review(LEAD, "APPROVED");
  await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });
  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("red");
  red = s.checkpoint();
  await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
  expect(s.snapshot().stage).toBe("red-verify");
  redVerify = s.checkpoint();
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

function cycleRun() {
  const dispatch = s.pendingRuns().find((d) => d.workflow === "consort-cycle.yml");
  if (!dispatch) throw new Error("no cycle was dispatched");
  return dispatch;
}

/** The build check on the track's head: failed, with the reason and the Re-run button. */
function expectBuildFailedWith(reason: string): void {
  expect(s.snapshot().stage).toBe("red-verify");
  expect(s.state().cycles.at(-1)!.verdict).toBe("error");
  const build = s.world.check(s.head(), "consort/build");
  expect(build.conclusion).toBe("failure");
  expect(build.output.summary).toContain(reason);
  expect(build.actions.map((a) => a.identifier)).toEqual(["rerun-cycle"]);
  expect(s.world.mock.violations).toEqual([]);
}

/** How far the process's peak resident memory rose (a high-water mark: a collection cannot hide a spike). */
async function peakGrowthMiB(ingest: () => Promise<unknown>): Promise<number> {
  const before = process.resourceUsage().maxRSS;
  await ingest();
  const grown = (process.resourceUsage().maxRSS - before) / 1024;
  console.log(`peak memory grew by ${grown.toFixed(1)} MiB while the app ingested the bomb`);
  return grown;
}

describe("a result counts only from the run that succeeded", () => {
  test("a RED that really failed to fail, whose result file was rewritten to 'verified', is refused: its run concluded failure", async () => {
    s.restore(red);
    // The navigator's "failing test" fails by a TypeError: the real cycle refuses it and the
    // action exits 1, so GitHub concludes the run "failure".
    await s.step("navigator", {
      [F.INDEX_TEST_FILE]: F.RED_T1.replace(
        "const { rows } =",
        "(undefined as never as { x: () => void }).x();\n  const { rows } =",
      ),
    });
    const runId = cycleRun().runId;
    const real = await s.runDispatchedCycle({
      // What a leftover process of the test command does to the result folder.
      tamper: (result) => ({ ...result, verdict: "verified", reasons: ["T1 fails by an assertion"] }),
    });
    expect(real.verdict).toBe("refused");
    expectBuildFailedWith(
      `run ${runId} concluded "failure", yet its result says it passed: only a run that succeeded can verify (https://github.com/${s.world.fullName}/actions/runs/${runId})`,
    );
  });

  test("a verified result from a run that failed (the commands uploaded the artifact first, so the job's own upload failed) is refused", async () => {
    s.restore(redVerify);
    const { runId } = cycleRun();
    const real = await s.runDispatchedCycle({ conclusion: "failure" });
    expect(real.verdict).toBe("verified");
    expectBuildFailedWith(
      `run ${runId} concluded "failure", yet its result says it passed: only a run that succeeded can verify (https://github.com/${s.world.fullName}/actions/runs/${runId})`,
    );
  });
});

describe("a result must answer the very request dispatched as its run", () => {
  test("a verified result naming another dispatch (an earlier run's, replayed) is refused", async () => {
    s.restore(redVerify);
    const { runId } = cycleRun();
    const dispatchId = s.snapshot().context.pendingDispatch!.dispatchId;
    await s.runDispatchedCycle({
      tamper: (result): CycleResult => ({ ...result, request: { ...result.request, dispatchId: "older-dispatch" } }),
    });
    expectBuildFailedWith(
      `run ${runId}'s result answers dispatch older-dispatch, but Consort dispatched ${dispatchId} as that run`,
    );
  });

  test("a verified result for an altered request (the throwaway branch's time to live cut) is refused", async () => {
    s.restore(redVerify);
    const { runId, request } = cycleRun();
    let altered: CycleResult["request"] | undefined;
    await s.runDispatchedCycle({
      tamper: (result): CycleResult => {
        altered = { ...result.request, ttlSeconds: 60 };
        return { ...result, request: altered };
      },
    });
    const dispatched = s.state().cycles.at(-1)!.requestSha256!;
    // What the app recorded is the hash of the input GitHub received.
    expect(dispatched).toBe(requestDigest(request));
    expectBuildFailedWith(
      `run ${runId}'s result answers another request than the one Consort dispatched (sha256 ${requestDigest(altered).slice(0, 12)}, dispatched ${dispatched.slice(0, 12)})`,
    );
  });
});

describe("the artifact is read within bounds", () => {
  test("a zip bomb (292 KiB unpacking to 288 MiB, its headers lying about the size) is refused at 1 MiB, without taking the memory", async () => {
    s.restore(redVerify);
    const { runId } = cycleRun();
    const bomb = zipBomb({ name: "cycle-result.json", mebibytes: 288, declaredSize: 900 });
    expect(bomb.length).toBeLessThan(300 * 1024);
    expect(await peakGrowthMiB(() => s.reportRun(runId, bomb))).toBeLessThan(64);
    expectBuildFailedWith(
      `run ${runId}'s "consort-cycle-result" artifact is not a readable result: cycle-result.json unpacks to more than the 1048576 bytes a result file may have`,
    );
  });

  test("a zip whose headers admit it unpacks to 288 MiB is refused before inflating anything", async () => {
    s.restore(redVerify);
    const { runId } = cycleRun();
    const bomb = zipBomb({ name: "cycle-result.json", mebibytes: 288 });
    expect(await peakGrowthMiB(() => s.reportRun(runId, bomb))).toBeLessThan(64);
    expectBuildFailedWith(
      `run ${runId}'s "consort-cycle-result" artifact is not a readable result: cycle-result.json unpacks to 301989888 bytes, more than the 1048576 a result file may have`,
    );
  });
});

describe("an expired artifact is an artifact error, not a lost delivery", () => {
  test("the artifact expired between the listing and the download (GitHub answers 410): the build check fails with a Re-run button", async () => {
    s.restore(redVerify);
    const { runId } = cycleRun();
    s.world.failNext("GET", /^\/actions\/artifacts\/\d+\/zip$/, [
      410,
      { message: "Artifact has expired", documentation_url: "https://docs.github.com/rest" },
    ]);
    await s.runDispatchedCycle();
    expectBuildFailedWith(`run ${runId}'s "consort-cycle-result" artifact has expired (GitHub answered 410 Gone)`);
  });
});

/** The app's sticky report on the track's pull request. */
const report = () =>
  s.world
    .appComments(s.pull!.number)
    .map((c) => c.body)
    .join("\n");

describe("an unconfined run is weaker evidence, and the track's report says so", () => {
  test("a verified RED whose commands ran as the job's own user counts, marked in the report as unconfined", async () => {
    s.restore(redVerify);
    const real = await s.runDispatchedCycle();
    expect(real.confinement).toMatchObject({ confined: false });
    expect(s.snapshot().stage).toBe("green");
    // The build check waits (unwritten) until every test is green; the PR's report shows the evidence.
    expect(report()).toContain("verified (⚠️ ran unconfined: weaker evidence)");
  });

  test("a verified RED whose commands ran confined carries no such mark", async () => {
    s.restore(redVerify);
    await s.runDispatchedCycle({
      tamper: (result): CycleResult => ({
        ...result,
        confinement: { confined: true, user: "consort-untrusted", uid: 998 },
      }),
    });
    expect(s.snapshot().stage).toBe("green");
    expect(report()).toContain("✅ valid on");
    expect(report()).not.toContain("ran unconfined");
  });
});

describe("production code that carries test code is refused at GREEN", () => {
  test("a driver's GREEN whose service imports vitest (to mock what the test checks) is refused by the discipline check, naming the file", async () => {
    s.restore(redVerify);
    await s.runDispatchedCycle();
    expect(s.snapshot().stage).toBe("green");
    const sha = await s.step("driver", {
      ...F.GREEN_T1,
      "src/services/stock.ts":
        'import { vi } from "vitest";\nexport const stockAtLocation = vi.fn(async () => [{ sku: "A-1" }]);\n',
    });
    expect(s.snapshot().stage).toBe("green");
    expect(violationsOn(s.world.check(sha, "consort/discipline"))).toEqual([
      `${sha.slice(0, 7)}: src/services/stock.ts imports the test framework "vitest" into production code: code under paths.code must not reach into the test run (it could make a test pass from inside); keep test helpers under paths.tests`,
    ]);
  });
});
