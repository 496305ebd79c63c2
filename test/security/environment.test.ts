import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { runCycle } from "../../src/cycle/run.js";
import { runDeploy } from "../../src/deploy/deploy.js";
import { runPromote } from "../../src/deploy/promote.js";
import { DeployRequest, PromoteRequest } from "../../src/contracts/deploy.js";
import { postgresUrl } from "../helpers/postgres.js";
import { RED_T7, type Checkout, S1_TESTS, T7, exampleSuite, uniqueBranch } from "../cycle/stockflow.js";

/**
 * No step oracle and no secrets in the commands' environment. Real cycles on StockFlow, run with a
 * job environment like a hosted runner's: the provider's admin URL, a Databricks token, the
 * runtime token and the job's input all present. The commands see PATH, HOME, CI, the throwaway
 * branch's DATABASE_URL and what `commands.env` names; nothing else, and secrets are redacted.
 */

const suite = exampleSuite("env-attack");
/** The job's environment on a hosted runner, as the cycle step sees it. */
let job: Record<string, string | undefined>;

beforeAll(async () => {
  job = {
    ...process.env,
    CONSORT_TEST_PG_URL: postgresUrl(),
    DATABRICKS_TOKEN: "dapi0123456789abcdef-attack",
    ACTIONS_RUNTIME_TOKEN: "runtime-token-that-uploads-artifacts",
    INPUT_REQUEST: '{"step":"green"}',
    APP_MODE: "test",
  };
});

/** The suite's configuration with some of its commands replaced. */
const withCommands = (commands: Partial<ConsortConfig["commands"]>): ConsortConfig => ({
  ...suite.config,
  commands: { ...suite.config.commands, ...commands },
});

/** A RED cycle of T7 alone on checkout `c`, with `commands` replaced, in the job environment `env`. */
function redOfT7(c: Checkout, commands: Partial<ConsortConfig["commands"]>, env = job) {
  return runCycle(
    CycleRequest.parse({
      track: "env-attack",
      commit: c.commit,
      step: "red",
      database: { branch: suite.trackDb },
      tests: { inTurn: [T7], earlierGreen: [] },
    }),
    { provider: suite.provider, config: withCommands(commands), cwd: c.dir, env },
  );
}

async function frozenOf(c: Checkout, paths: string[]) {
  return Promise.all(
    paths.map(async (path) => {
      const text = await c.read(path);
      return { path, sha256: hashFrozenText(text), commit: c.commit };
    }),
  );
}

describe("the commands' environment", { timeout: 120_000 }, () => {
  test("a test that fails at RED and passes at GREEN by reading the step (no code written) is refused at GREEN", async () => {
    // The navigator's RED: T7 asserts it is running at GREEN, so it fails by an assertion at RED.
    const oracle = `import { expect, test } from "vitest";\ntest(${JSON.stringify(T7.title)}, () => {\n  expect(process.env.CONSORT_STEP).toBe("green");\n});\n`;
    const c = await suite.stage([
      ...RED_T7,
      {
        message: "RED T7 that reads the step",
        mutate: [(dir) => writeFile(join(dir, T7.file), oracle)],
      },
    ]);
    const result = await runCycle(
      CycleRequest.parse({
        track: "env-attack",
        commit: c.commit,
        step: "green",
        database: { branch: suite.trackDb },
        tests: { inTurn: [T7], earlierGreen: S1_TESTS },
        frozenTestFiles: await frozenOf(c, [...new Set([...S1_TESTS, T7].map((t) => t.file))]),
      }),
      { provider: suite.provider, config: suite.config, cwd: c.dir, env: job },
    );

    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual([
      `T7 "${T7.title}" (${T7.file}) (in turn) fails an assertion: expected undefined to be 'green' // Object.is equality`,
      `the test command exited 1; failing: "${T7.title}" (${T7.file})`,
    ]);
  });

  test("the migrate and test commands see no provider secret, runtime token, input or step: only PATH, HOME, CI, DATABASE_URL and commands.env", async () => {
    const c = await suite.stage(RED_T7);
    const probe =
      'echo "admin=${CONSORT_TEST_PG_URL:-unset} databricks=${DATABRICKS_TOKEN:-unset} runtime=${ACTIONS_RUNTIME_TOKEN:-unset} input=${INPUT_REQUEST:-unset} step=${CONSORT_STEP:-unset} track=${CONSORT_TRACK:-unset} mode=${APP_MODE:-unset} db=${DATABASE_URL:+set}"';
    const result = await redOfT7(c, { migrate: probe, test: probe, env: ["APP_MODE"] });

    const seen = "admin=unset databricks=unset runtime=unset input=unset step=unset track=unset mode=test db=set";
    expect(result.commands.migrate!.outputTail).toBe(seen);
    expect(result.commands.test!.outputTail).toBe(seen);
  });

  test("a provider secret's value is redacted from the output tail wherever it comes from (here a variable commands.env passes that holds the same token)", async () => {
    const c = await suite.stage(RED_T7);
    const result = await redOfT7(
      c,
      { migrate: 'echo "shared=$SHARED_TOKEN"; exit 1', env: ["SHARED_TOKEN"] },
      { ...job, SHARED_TOKEN: job.DATABRICKS_TOKEN },
    );

    expect(result.commands.migrate!.outputTail).toBe("shared=***");
  });
});

/** What a command prints of the names that would tell it where it runs. */
const ORACLE_PROBE = 'echo "track=${CONSORT_TRACK:-unset} commit=${CONSORT_COMMIT:-unset} step=${CONSORT_STEP:-unset}"';
const NO_ORACLE = "track=unset commit=unset step=unset";

describe("the release and promotion commands' environment", { timeout: 120_000 }, () => {
  test("the deploy and verify commands of a release see no track, commit or step name", async () => {
    const c = await suite.stage(RED_T7);
    const evidence = await runDeploy(
      DeployRequest.parse({
        track: "env-attack",
        commit: c.commit,
        database: { branch: suite.trackDb, parent: suite.trackDb },
      }),
      {
        provider: suite.provider,
        config: withCommands({ deploy: ORACLE_PROBE, verify: ORACLE_PROBE }),
        cwd: c.dir,
      },
    );

    expect(evidence.deploy!.outputTail).toBe(NO_ORACLE);
    expect(evidence.verify.record!.outputTail).toBe(NO_ORACLE);
  });

  test("a replayed release's migrate command sees no commit name where it migrates the track's branch", async () => {
    const done = await suite.stage([{ message: "F1 done" }]);
    const parent = uniqueBranch("env-replay");
    await suite.provider.createBranch(parent, { from: await suite.provider.rootBranch() });
    await suite.provider.createBranch(`${parent}-t`, { from: parent });
    // A migrate command that behaves only where it cannot tell which commit it migrates.
    const migrate = `test -z "$CONSORT_COMMIT" && ${suite.config.commands.migrate}`;
    const evidence = await runDeploy(
      DeployRequest.parse({
        track: "env-attack",
        commit: done.commit,
        database: { branch: `${parent}-t`, parent },
        testList: {
          path: ".consort/test-list.json",
          sha256: hashFrozenText(await done.read(".consort/test-list.json")),
          tests: ["T1-T8"],
        },
      }),
      {
        provider: suite.provider,
        config: withCommands({ migrate }),
        cwd: done.dir,
      },
    );

    expect(evidence.reasons).toEqual([]);
    expect(evidence).toMatchObject({ mode: "replay", verdict: "verified", schema: { computedOn: "shared" } });
  });

  test("the promotion's migrate command sees no track, commit or step name", async () => {
    const c = await suite.stage(RED_T7);
    const parent = uniqueBranch("env-parent");
    await suite.provider.createBranch(parent, { from: await suite.provider.rootBranch() });
    const result = await runPromote(
      PromoteRequest.parse({ track: "env-attack", commit: c.commit, database: { parent } }),
      {
        provider: suite.provider,
        config: withCommands({ migrate: ORACLE_PROBE }),
        cwd: c.dir,
      },
    );

    expect(result.reasons).toEqual([]);
    expect(result.migrate!.outputTail).toBe(NO_ORACLE);
  });
});
