import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { CycleRequest, type CycleRequestInput } from "../../src/contracts/cycle-request.js";
import { CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE, CycleResult } from "../../src/contracts/cycle-result.js";
import { runCycle, type CycleDeps } from "../../src/cycle/run.js";
import {
  GREEN_T7,
  IMPORT_ERROR_TEST,
  RED_T7,
  S1_TESTS,
  T7,
  copyInto,
  replaceIn,
  type Checkout,
  exampleSuite,
} from "./stockflow.js";

/**
 * Real cycles on the StockFlow example: real vitest runs against throwaway branches of a track's
 * database on the run's Postgres. Each scenario has its own checkout, so they run concurrently.
 */

const suite = exampleSuite("f1-record-stock");

/**
 * The frozen test files of the S1 tests, as the RED stage holds them: hashes, and the commit the
 * runner reads the frozen text from (the request never carries text).
 */
async function frozenS1(c: Checkout, extra: Array<{ path: string; text: string }> = []) {
  const paths = [...new Set(S1_TESTS.map((t) => t.file))];
  const files = await Promise.all(paths.map(async (path) => ({ path, text: await c.read(path) })));
  return [...files, ...extra].map(({ path, text }) => ({ path, sha256: hashFrozenText(text), commit: c.commit }));
}

/**
 * A `step` cycle of T7, every S1 test green before it, on checkout `c` against the track's database:
 * each scenario here differs only in its checkout and the frozen files it claims.
 */
function cycleOfT7(
  c: Checkout,
  step: "red" | "green",
  frozenTestFiles: CycleRequestInput["frozenTestFiles"],
  deps: Pick<CycleDeps, "outDir"> = {},
): Promise<CycleResult> {
  const request = CycleRequest.parse({
    track: "f1-record-stock",
    commit: c.commit,
    database: { branch: suite.trackDb },
    step,
    tests: { inTurn: [T7], earlierGreen: S1_TESTS },
    frozenTestFiles,
  });
  return runCycle(request, { provider: suite.provider, config: suite.config, cwd: c.dir, ...deps });
}

const reasonsOf = (r: CycleResult) => r.reasons.join("\n");

describe.concurrent("RED and GREEN on StockFlow's T7 (stock by location)", { timeout: 120_000 }, () => {
  test("a new test that fails by an assertion, with every earlier test green, is a verified RED", async () => {
    const red = await suite.stage(RED_T7);
    const out = join(red.dir, ".consort-out");
    const result = await cycleOfT7(red, "red", await frozenS1(red), { outDir: out });

    expect(reasonsOf(result)).toBe("");
    expect(result.verdict).toBe("verified");
    expect(result.tests.find((t) => t.id === "T7")).toMatchObject({
      outcome: "failed-assertion",
      message: expect.stringContaining("expected 404 to be 200"),
    });
    expect(result.tests.filter((t) => t.role === "earlier").map((t) => t.outcome)).toEqual(Array(6).fill("passed"));
    expect(result.database).toMatchObject({ trackBranch: suite.trackDb, dropped: true });
    expect(await suite.provider.getBranch(result.database.cycleBranch!)).toBeUndefined();
    expect(result.commit).toBe(red.commit);
    // What the app downloads parses with the same schema, and people get a summary.
    expect(CycleResult.parse(JSON.parse(await readFile(join(out, CYCLE_RESULT_FILE), "utf8")))).toEqual(result);
    expect(await readFile(join(out, CYCLE_SUMMARY_FILE), "utf8")).toContain("RED verified");
  });

  test("after the driver implements S2 the same test passes, its file unchanged: a verified GREEN", async () => {
    const green = await suite.stage(GREEN_T7);
    const redText = await green.read(T7.file);
    const result = await cycleOfT7(green, "green", await frozenS1(green, [{ path: T7.file, text: redText }]));

    expect(reasonsOf(result)).toBe("");
    expect(result.verdict).toBe("verified");
    expect(result.tests.map((t) => t.outcome)).toEqual(Array(7).fill("passed"));
    expect(result.timingsMs.tests).toBeGreaterThan(0);
  });

  test("a RED test that fails because its import does not exist is refused: it never reached an assertion", async () => {
    const red = await suite.stage([
      {
        message: "RED T7 calling a service that is not there",
        mutate: [...RED_T7[0]!.mutate, copyInto(IMPORT_ERROR_TEST, T7.file)],
      },
    ]);
    const result = await cycleOfT7(red, "red", await frozenS1(red));

    expect(result.verdict).toBe("refused");
    expect(result.tests.find((t) => t.id === "T7")!.outcome).toMatch(/^(failed-error|missing)$/);
    expect(reasonsOf(result)).toMatch(/location-stock/);
    expect(reasonsOf(result)).toMatch(/not by an assertion|failed to load|not in the test report/);
  });

  test("a RED whose test already passes is refused", async () => {
    const done = await suite.stage(GREEN_T7);
    const result = await cycleOfT7(done, "red", await frozenS1(done));

    expect(result.verdict).toBe("refused");
    expect(result.tests.find((t) => t.id === "T7")!.outcome).toBe("passed");
    expect(reasonsOf(result)).toContain("already passes");
  });

  test("a GREEN that weakened the frozen test is refused even though everything passes", async () => {
    const red = await suite.stage(RED_T7);
    const frozenT7 = await red.read(T7.file);
    const edited = await suite.stage([
      ...GREEN_T7,
      {
        message: "GREEN T7 (and a quieter test)",
        mutate: [
          replaceIn(T7.file, "expect(response.status).toBe(200);", "expect(response.status).toBeGreaterThan(0);"),
        ],
      },
    ]);
    const result = await cycleOfT7(edited, "green", await frozenS1(edited, [{ path: T7.file, text: frozenT7 }]));

    expect(result.tests.map((t) => t.outcome)).toEqual(Array(7).fill("passed"));
    expect(result.verdict).toBe("refused");
    expect(reasonsOf(result)).toContain(`${T7.file}: a frozen test file changed`);
  });

  test("a GREEN that breaks an earlier green test is refused, naming it", async () => {
    const broken = await suite.stage([
      ...GREEN_T7,
      {
        message: "GREEN T7, with an upsert that no longer updates",
        mutate: [
          replaceIn(
            "src/repositories/stock-records.ts",
            "DO UPDATE SET quantity = EXCLUDED.quantity, inventory_code = EXCLUDED.inventory_code, updated_at = now()",
            "DO NOTHING",
          ),
        ],
      },
    ]);
    const redText = await broken.read(T7.file);
    const result = await cycleOfT7(broken, "green", await frozenS1(broken, [{ path: T7.file, text: redText }]));

    expect(result.verdict).toBe("refused");
    expect(result.tests.find((t) => t.id === "T3")).toMatchObject({ role: "earlier", outcome: "failed-assertion" });
    expect(reasonsOf(result)).toMatch(
      /T3 "filing the same sku and location again updates the row in place".*verified green earlier/,
    );
  });
});
