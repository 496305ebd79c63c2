import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { runCycle } from "../../src/cycle/run.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { RED_T7, checkout, exampleConfig, uniqueBranch, type Checkout } from "./stockflow.js";

const TRACK_DB = uniqueBranch("edges-track");

/**
 * The ways a cycle must fail closed without ever running the real suite: a report left behind by
 * an earlier run, a test command that writes none, a failed migration, the wrong commit. The
 * commands are real shell commands; the database branches are real.
 */

let base: ConsortConfig;
let provider: BranchProvider;
let red: Checkout;
const T7 = {
  id: "T7",
  file: "test/stock-by-location.test.ts",
  title: "stock by location lists each sku at the location with its quantity",
};

beforeAll(async () => {
  ({ config: base, provider } = await exampleConfig());
  await provider.createBranch(TRACK_DB, { from: await provider.rootBranch() });
  red = await checkout(RED_T7);
});
afterAll(async () => {
  await red?.remove();
  await provider?.close();
});

const withCommands = (commands: Partial<ConsortConfig["commands"]>): ConsortConfig => ({
  ...base,
  commands: { ...base.commands, ...commands },
});
const redRequest = (commit = red.commit) =>
  CycleRequest.parse({ track: "edges", step: "red", commit, tests: { inTurn: [T7] }, database: { branch: TRACK_DB } });

describe.concurrent("a cycle that cannot decide refuses, and still drops its branch", { timeout: 60_000 }, () => {
  test("a JUnit report older than the test run is rejected", async () => {
    // The test command leaves a report whose time is before the run: an earlier run's leftovers.
    const config = withCommands({
      migrate: "true",
      test: "printf '<testsuites/>' > stale.xml && touch -d '2020-01-01' stale.xml",
    });
    const result = await runCycle(redRequest(), { provider, config: { ...config, junit: "stale.xml" }, cwd: red.dir });
    expect(result.verdict).toBe("refused");
    expect(result.reasons.join("\n")).toContain("older than this test run");
    expect(result.database.dropped).toBe(true);
  });

  test("an old report in the checkout is deleted first, so a test command that writes none is refused", async () => {
    await writeFile(
      join(red.dir, "leftover.xml"),
      "<testsuites><testsuite name='x'><testcase classname='test/stock-by-location.test.ts' name='x'/></testsuite></testsuites>",
    );
    const config = { ...withCommands({ migrate: "true", test: "true" }), junit: "leftover.xml" };
    const result = await runCycle(redRequest(), { provider, config, cwd: red.dir });
    expect(result.verdict).toBe("refused");
    expect(result.reasons.join("\n")).toContain("wrote no JUnit report at leftover.xml");
  });

  test("a failed migration refuses the cycle and the tests never run", async () => {
    const config = withCommands({ migrate: "echo 'relation already exists' >&2; exit 3", test: "touch ran-tests" });
    const result = await runCycle(redRequest(), { provider, config, cwd: red.dir });
    expect(result.verdict).toBe("refused");
    expect(result.commands.migrate).toMatchObject({
      exitCode: 3,
      outputTail: expect.stringContaining("relation already exists"),
    });
    expect(result.commands.test).toBeUndefined();
    expect(result.reasons[0]).toContain("exited 3");
  });

  test("a checkout at another commit than the request's is refused before any branch is made", async () => {
    const result = await runCycle(redRequest("0".repeat(40)), { provider, config: base, cwd: red.dir });
    expect(result.verdict).toBe("refused");
    expect(result.reasons.join("\n")).toContain("but the request asks to test 000000000000");
    expect(result.database.cycleBranch).toBeNull();
  });

  test("the database URL and its password never appear in the kept command output", async () => {
    const config = withCommands({ migrate: 'echo "connecting to $DATABASE_URL"; exit 1' });
    const result = await runCycle(redRequest(), { provider, config, cwd: red.dir });
    const url = await provider.connectionUrl(await provider.rootBranch());
    const password = new URL(url).password;
    expect(result.commands.migrate!.outputTail).toContain("connecting to ***");
    expect(result.commands.migrate!.outputTail).not.toContain(password);
    expect(JSON.stringify(result)).not.toContain(url);
  });
});
