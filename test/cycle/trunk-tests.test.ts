import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { runCycle } from "../../src/cycle/run.js";
import { git, type Checkout, type Mutation, exampleSuite } from "./stockflow.js";

/**
 * A REFACTOR on a repository whose default branch already has its own tests (real cycles on the
 * StockFlow example): the trunk's test files are the baseline, which must pass but is not the
 * track's to change. Only what the track did to the tests since its merge base with the trunk counts.
 */

const suite = exampleSuite("refactor-trunk");

const appendTo =
  (path: string, text: string): Mutation =>
  (dir) =>
    appendFile(join(dir, path), text);

/** main holds the finished example with all its tests; the track branches off it and commits `track` on top. */
async function trackOffTrunk(track: Mutation[]): Promise<Checkout> {
  const c = await suite.stage([
    { message: "main: StockFlow with its tests" },
    { message: "refactor on the track", mutate: track },
  ]);
  await git(c.dir, "branch", "main", "HEAD~1");
  return c;
}

const refactor = (c: Checkout, base?: { branch?: string; commit?: string }) =>
  CycleRequest.parse({
    track: "refactor-trunk",
    step: "refactor",
    commit: c.commit,
    tests: {},
    database: { branch: suite.trackDb },
    ...(base ? { base } : {}),
  });

const CODE_ONLY = appendTo("src/app.ts", "\n// The handler reads better as one expression.\n");

describe.concurrent("REFACTOR on a trunk that has its own test files", { timeout: 120_000 }, () => {
  test("a refactor that changes only code is verified: the trunk's untouched tests pass and are not the track's changes", async () => {
    const c = await trackOffTrunk([CODE_ONLY]);
    const result = await runCycle(refactor(c, { branch: "main" }), {
      provider: suite.provider,
      config: suite.config,
      cwd: c.dir,
    });
    expect(result.reasons).toEqual([]);
    expect(result.verdict).toBe("verified");
    expect(result.report?.passed).toBeGreaterThan(0);
  });

  test("a refactor that edits a trunk test file is refused: it changed a test it does not own", async () => {
    const c = await trackOffTrunk([CODE_ONLY, appendTo("test/file-stock.test.ts", "\n// tidied by the track\n")]);
    const result = await runCycle(refactor(c, { commit: await git(c.dir, "rev-parse", "main") }), {
      provider: suite.provider,
      config: suite.config,
      cwd: c.dir,
    });
    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual([
      expect.stringMatching(
        /^test\/file-stock\.test\.ts: a test file that no verified RED froze \(the trunk's, or one the track never froze\) changed since the merge base [0-9a-f]{12}/,
      ),
    ]);
  });

  test("a request without a base compares with the checkout's default branch", async () => {
    const c = await trackOffTrunk([
      CODE_ONLY,
      appendTo("test/extra.test.ts", "import { test } from 'vitest';\ntest('extra', () => {});\n"),
    ]);
    const result = await runCycle(refactor(c), { provider: suite.provider, config: suite.config, cwd: c.dir });
    expect(result.reasons).toEqual([
      expect.stringContaining(
        "test/extra.test.ts: a test file that no verified RED froze was added since the merge base",
      ),
    ]);
    expect(result.reasons[0]).toContain("with main");
  });

  test("a base that is not in the checkout fails closed with the reason and the fix", async () => {
    const c = await trackOffTrunk([CODE_ONLY]);
    const result = await runCycle(refactor(c, { branch: "trunk-not-fetched" }), {
      provider: suite.provider,
      config: suite.config,
      cwd: c.dir,
    });
    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual([expect.stringContaining("the branch trunk-not-fetched, is not in the checkout")]);
    expect(result.reasons[0]).toContain("fetch-depth: 0");
  });
});
