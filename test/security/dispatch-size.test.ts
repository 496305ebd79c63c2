import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dispatchWorkflow, requestDigest } from "../../src/github/dispatch.js";
import { TestList } from "../../src/contracts/test-list.js";
import { DatabaseConfig } from "../../src/config/consort-config.js";
import { readCheckoutConfig } from "../../src/config/load.js";
import { runCycleAction } from "../../src/cycle/action.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { CYCLE_RESULT_FILE, CycleResult } from "../../src/contracts/cycle-result.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { createProvider } from "../../src/substrate/index.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { workflowRequestOf, type WorkflowRequest } from "../../src/engine/requests.js";
import type { Effect } from "../../src/orchestrator/types.js";
import {
  EXAMPLE,
  RED_T7,
  checkout,
  ownNodeModules,
  replaceIn,
  uniqueBranch,
  type Checkout,
} from "../cycle/stockflow.js";
import { GitHubMock } from "../helpers/github.js";
import { postgresUrl } from "../helpers/postgres.js";
import { runnerEnv } from "../cycle/runner-env.js";
import { LONG_TRACK_TESTS_PER_UNIT, TrackSim } from "../orchestrator/helpers/track.js";

/**
 * A long-lived track stays dispatchable: the cycle, release and promotion requests name tests by
 * id in the approved test list (runs such as `T1-T499`) and frozen files by hash and commit, never
 * a title or a text. GitHub refuses `workflow_dispatch` inputs over 65,535 characters; a track that
 * passed that could no longer be tested, released or re-run.
 */

interface Measured {
  red: WorkflowRequest;
  green: WorkflowRequest;
  release: WorkflowRequest;
  promote: WorkflowRequest;
  /** The hash the test-list gate approved the list at. */
  listSha256: string | undefined;
}

/** The request an effect of the sim's last transition dispatches. */
function dispatched(sim: TrackSim, type: Effect["type"]): WorkflowRequest {
  const effect = sim.last.effects.find((e) => e.type === type);
  if (!effect) throw new Error(`no ${type} effect at ${sim.stage}`);
  const request = workflowRequestOf(effect, sim.context.branch, sim.snapshot);
  if (!request) throw new Error(`the ${type} effect dispatches nothing`);
  return request;
}

/**
 * Drive a track of `n` tests through every unit, keeping the requests of its last unit, its
 * release and its promotion. One unit per criterion keeps 500 tests to 50 units of the pure core.
 */
function throughTrack(n: number): Measured {
  const sim = TrackSim.longTrack(n);
  for (let i = 1; i < n / LONG_TRACK_TESTS_PER_UNIT; i++) sim.throughUnit();
  const unit = sim.context.units[sim.context.unitIndex]!;
  sim.expectAccepted(sim.pushCommits(sim.redCommit("{}")));
  const red = dispatched(sim, "dispatchCycle");
  sim.expectAccepted(sim.report("valid"));
  sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "export const done = 1;\n" } }));
  const green = dispatched(sim, "dispatchCycle");
  sim.expectAccepted(sim.report("valid"));
  sim.expectAccepted(
    sim.push({
      role: "navigator",
      files: { [`.consort/reviews/${unit.id}.json`]: JSON.stringify({ unit: unit.id, verdict: "accept", notes: [] }) },
    }),
  );
  expect(sim.stage).toBe("deploying");
  const release = dispatched(sim, "dispatchCycle");
  sim.expectAccepted(sim.report("valid"));
  sim.expectAccepted(sim.approve("deploy"));
  sim.expectAccepted(sim.approve("promote"));
  sim.expectAccepted(sim.send({ type: "merged", at: "2026-12-01T12:00:00.000Z", commit: sim.context.head }));
  const promote = dispatched(sim, "promoteDatabase");
  return { red, green, release, promote, listSha256: sim.context.gates["test-list"].files[".consort/test-list.json"] };
}

/** What GitHub counts: the inputs object as JSON, the request being one string input. */
const inputSize = (request: WorkflowRequest) => JSON.stringify({ request: JSON.stringify(request.request) }).length;

let long: Measured;
let short: Measured;
beforeAll(() => {
  long = throughTrack(500);
  short = throughTrack(100);
}, 120_000);

describe("a 500-test track is still dispatchable", () => {
  let github: GitHubMock;
  const octokit = new Octokit({ auth: "ghs_test", log: { debug() {}, info() {}, warn() {}, error() {} } });
  beforeEach(() => {
    github = new GitHubMock();
  });
  afterEach(() => github.dispose());

  it("its RED, GREEN, release and promotion requests each fit in 8 KiB, and GitHub accepts each dispatch", async () => {
    const requests = [long.red, long.green, long.release, long.promote];
    for (const request of requests) expect(inputSize(request)).toBeLessThan(8 * 1024);
    for (const { workflow, request } of requests) {
      const file = { cycle: "consort-cycle.yml", deploy: "consort-deploy.yml", promote: "consort-promote.yml" }[
        workflow
      ];
      github.on("POST", `/repos/acme/stockflow/actions/workflows/${file}/dispatches`, [204]);
      await dispatchWorkflow({
        octokit,
        owner: "acme",
        repo: "stockflow",
        defaultBranch: "main",
        workflow,
        request,
        now: new Date("2026-12-01T12:00:00Z"),
      });
    }
    github.verify();
    expect(github.requests.map((r) => r.path)).toEqual([
      "/repos/acme/stockflow/actions/workflows/consort-cycle.yml/dispatches",
      "/repos/acme/stockflow/actions/workflows/consort-cycle.yml/dispatches",
      "/repos/acme/stockflow/actions/workflows/consort-deploy.yml/dispatches",
      "/repos/acme/stockflow/actions/workflows/consort-promote.yml/dispatches",
    ]);
  });

  it("names the tests by id in the approved list, with no title: the last unit T491-T500 in turn, T1-T490 green", () => {
    expect(long.listSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(long.red.request).toMatchObject({
      step: "red",
      tests: { inTurn: [], earlierGreen: [] },
      testList: {
        path: ".consort/test-list.json",
        sha256: long.listSha256,
        inTurn: ["T491-T500"],
        earlierGreen: ["T1-T490"],
      },
    });
    expect(long.green.request).toMatchObject({
      step: "green",
      testList: { inTurn: ["T491-T500"], earlierGreen: ["T1-T490"] },
    });
    expect(long.release.request).toMatchObject({ testList: { path: ".consort/test-list.json", tests: ["T1-T500"] } });
    for (const { request } of [long.red, long.green, long.release, long.promote])
      expect(JSON.stringify(request)).not.toContain("a location keeps its count");
  });

  it("does not grow with the number of tests: 500 tests take the characters 100 tests take, but for longer numbers", () => {
    for (const step of ["red", "green", "release", "promote"] as const) {
      const growth = inputSize(long[step]) - inputSize(short[step]);
      // "T491-T500" for "T91-T100", "T1-T490" for "T1-T90", a dispatch id's sequence a digit longer.
      expect(growth, step).toBeGreaterThanOrEqual(0);
      expect(growth, step).toBeLessThanOrEqual(8);
    }
  });
});

/**
 * The job takes the tests from the list the request names, as git holds it at the commit: a real
 * cycle on StockFlow through the action's entry point, as the Actions runner drives it.
 */
describe("the cycle job judges the tests the list names", { timeout: 120_000 }, () => {
  const TRACK_DB = uniqueBranch("listed");
  /** As root here (a hosted runner's job gets there through sudo), the action runs the commands as this user. */
  const CONFINED_USER = `consort-l-${randomBytes(3).toString("hex")}`;
  const root = `listed_root_${randomBytes(4).toString("hex")}`;
  const database = { provider: "postgres", postgres: { urlEnv: "CONSORT_TEST_PG_URL", rootDatabase: root } };
  let provider: BranchProvider;
  let work: string;
  const checkouts: Checkout[] = [];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "consort-listed-"));
    provider = await createProvider(DatabaseConfig.parse(database), { env: { CONSORT_TEST_PG_URL: postgresUrl() } });
    await provider.createBranch(TRACK_DB, { from: await provider.rootBranch() });
  });
  afterAll(async () => {
    await Promise.all(checkouts.map((c) => c.remove()));
    await provider?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** A checkout with a node_modules of its own: as root here, the action confines the commands. */
  async function stage(commits: Parameters<typeof checkout>[0]): Promise<Checkout> {
    const c = await checkout(commits);
    checkouts.push(c);
    await ownNodeModules(c);
    return c;
  }

  /** The request the app sends for T7's RED: T7 in turn, T1-T6 green, S1's files frozen, no title. */
  async function redOfT7(c: Checkout, listSha256?: string) {
    const frozen = ["test/file-stock.test.ts", "test/stock-records-constraints.test.ts", "test/layering.test.ts"];
    return CycleRequest.parse({
      dispatchId: "listed#7",
      track: "f1-record-stock",
      step: "red",
      commit: c.commit,
      testList: {
        path: ".consort/test-list.json",
        sha256: listSha256 ?? hashFrozenText(await c.read(".consort/test-list.json")),
        inTurn: ["T7"],
        earlierGreen: ["T1-T6"],
      },
      frozenTestFiles: await Promise.all(
        frozen.map(async (path) => ({ path, sha256: hashFrozenText(await c.read(path)), commit: c.commit })),
      ),
      database: { branch: TRACK_DB },
    });
  }

  /** The cycle step as the runner drives it: INPUT_* variables, the default branch's config, a result folder. */
  async function runAction(name: string, c: Checkout, request: CycleRequest) {
    const { config } = readCheckoutConfig(c.dir);
    const env = await runnerEnv(work, name, {
      request,
      cwd: c.dir,
      config: { ...config, database },
      confinedUser: CONFINED_USER,
    });
    const code = await runCycleAction(env);
    const result = CycleResult.parse(JSON.parse(await readFile(join(work, name, CYCLE_RESULT_FILE), "utf8")));
    return { code, result };
  }

  it("a RED named by id (T7, T1-T6 green) is judged on the list's titles and files, and answers the request it was sent", async () => {
    const c = await stage(RED_T7);
    const request = await redOfT7(c);
    const { code, result } = await runAction("red", c, request);

    expect(result.reasons).toEqual([]);
    expect(result.verdict).toBe("verified");
    expect(code).toBe(0);
    expect(result.confinement).toEqual({
      confined: true,
      user: expect.stringMatching(new RegExp(`^${CONFINED_USER}-`)),
      uid: expect.any(Number),
    });
    const list = TestList.parse(JSON.parse(await c.read(".consort/test-list.json")));
    const title = (id: string) => list.tests.find((t) => t.id === id)!.title;
    expect(result.tests.map((t) => [t.id, t.role, t.title, t.outcome])).toEqual([
      ["T7", "turn", title("T7"), "failed-assertion"],
      ...["T1", "T2", "T3", "T4", "T5", "T6"].map((id) => [id, "earlier", title(id), "passed"]),
    ]);
    // The result echoes the request as dispatched: the app's hash of it is what binds the two.
    expect(requestDigest(result.request)).toBe(requestDigest(request));
  });

  it("a test list at the commit that does not hash to the approved one is refused before anything runs, saying so", async () => {
    const c = await stage([
      ...RED_T7,
      {
        message: "the driver renames T7 in the list to match a test that passes",
        mutate: [replaceIn(".consort/test-list.json", "stock by location lists each sku", "stock by location loads")],
      },
    ]);
    const approved = hashFrozenText(await readFile(join(EXAMPLE, ".consort/test-list.json"), "utf8"));
    const atCommit = hashFrozenText(await c.read(".consort/test-list.json"));
    const { code, result } = await runAction("tampered", c, await redOfT7(c, approved));

    expect(result.verdict).toBe("refused");
    expect(code).toBe(1);
    expect(result.reasons).toEqual([
      `the test list .consort/test-list.json at ${c.commit.slice(0, 12)} hashes to ${atCommit.slice(0, 12)}, not to the ${approved.slice(0, 12)} the test-list gate approved: the cycle refuses to take tests from a list nobody approved (restore the approved list, or have the test-list gate approve this one)`,
    ]);
    expect(result.commands).toEqual({});
    expect(result.database.cycleBranch).toBeNull();
  });

  it("an id the list does not hold is refused, naming it", async () => {
    const c = await stage(RED_T7);
    const request = await redOfT7(c);
    const { result } = await runAction(
      "unknown-id",
      c,
      CycleRequest.parse({ ...request, testList: { ...request.testList, inTurn: ["T9"] } }),
    );

    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual([
      `the request names T9, but the test list .consort/test-list.json at ${c.commit.slice(0, 12)} has only T1-T8: the cycle refuses`,
    ]);
    expect(result.commands).toEqual({});
  });
});
