import { describe, expect, test } from "vitest";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { runCycle } from "../../src/cycle/run.js";
import { RED_T7, replaceIn, S1_TESTS, T7, exampleSuite } from "../cycle/stockflow.js";

/**
 * Frozen means frozen at the commit, before and after. A real GREEN cycle on StockFlow where the
 * driver wrote no implementation, only a migrate script (src/db/migrate.ts is the driver's code at
 * GREEN) that rewrites the frozen T7 test into one that passes. The runner read its evidence before
 * the commands ran, so the weakened copy used to verify; now the cycle refuses and names the file.
 */

const suite = exampleSuite("frozen-attack");

/** What the migrate script writes over the frozen test: T7's title, asserting nothing. */
const WEAKENED = `import { test } from "vitest";\ntest(${JSON.stringify(T7.title)}, () => {});\n`;

describe("a command that rewrites a frozen test", { timeout: 120_000 }, () => {
  test("a GREEN whose migrate script rewrites the frozen T7 test (no implementation written) is refused, naming the file", async () => {
    const green = await suite.stage([
      ...RED_T7,
      {
        message: "GREEN T7: no implementation, a migrate script that weakens the test",
        mutate: [
          replaceIn(
            "src/db/migrate.ts",
            'import pg from "pg";',
            `import pg from "pg";\nimport { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(T7.file)}, ${JSON.stringify(WEAKENED)});`,
          ),
        ],
      },
    ]);
    const frozen = await Promise.all(
      [...new Set([...S1_TESTS, T7].map((t) => t.file))].map(async (path) => {
        const text = await green.read(path);
        return { path, sha256: hashFrozenText(text), commit: green.commit };
      }),
    );
    const result = await runCycle(
      CycleRequest.parse({
        track: "frozen-attack",
        commit: green.commit,
        step: "green",
        database: { branch: suite.trackDb },
        tests: { inTurn: [T7], earlierGreen: S1_TESTS },
        frozenTestFiles: frozen,
      }),
      { provider: suite.provider, config: suite.config, cwd: green.dir },
    );

    // The weakened copy ran and passed: only the check after the commands tells.
    expect(result.tests.find((t) => t.id === "T7")!.outcome).toBe("passed");
    expect(await green.read(T7.file)).toBe(WEAKENED);
    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual([
      `${T7.file} was changed while the commands ran (by the migrate or the test command): the tests did not run the file the commit holds, so the cycle refuses`,
    ]);
  });

  test("a frozen test changed in the checkout before the cycle starts (by an install script) is refused before any command runs", async () => {
    const red = await suite.stage(RED_T7);
    const frozen = await Promise.all(
      [...new Set(S1_TESTS.map((t) => t.file))].map(async (path) => {
        const text = await red.read(path);
        return { path, sha256: hashFrozenText(text), commit: red.commit };
      }),
    );
    await replaceIn(S1_TESTS[0]!.file, "expect(", "void (")(red.dir);
    const result = await runCycle(
      CycleRequest.parse({
        track: "frozen-attack",
        commit: red.commit,
        step: "red",
        database: { branch: suite.trackDb },
        tests: { inTurn: [T7], earlierGreen: S1_TESTS },
        frozenTestFiles: frozen,
      }),
      {
        provider: suite.provider,
        config: { ...suite.config, commands: { ...suite.config.commands, migrate: "touch migrate-ran" } },
        cwd: red.dir,
      },
    );

    expect(result.verdict).toBe("refused");
    expect(result.commands.migrate).toBeUndefined();
    expect(result.reasons).toEqual([
      `${S1_TESTS[0]!.file} in the checkout is not what the commit under test holds, before any command ran (an install script of the track's?): the tests would not run the commit's files, so the cycle refuses`,
    ]);
  });
});
