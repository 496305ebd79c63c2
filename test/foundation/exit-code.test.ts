import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The suite must be able to fail: a failed test makes the runner exit non-zero. This runs the
 * project's own vitest config (its global setup starts the embedded Postgres, whose old exit hook
 * once turned every failed run into exit code 0) on a fixture that fails, and on one that passes.
 */
const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const work = mkdtempSync(join(tmpdir(), "consort-exit-code-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runFixture(outcome: "pass" | "fail") {
  const config = join(work, `vitest.${outcome}.config.ts`);
  const report = join(work, `${outcome}.json`);
  writeFileSync(
    config,
    [
      `import project from ${JSON.stringify(join(root, "vitest.config.ts"))};`,
      `export default { ...project, test: { ...project.test, include: ["test/foundation/fixtures/exit-code/outcome.fixture.ts"], exclude: [] } };`,
    ].join("\n"),
  );
  const run = spawnSync(
    process.execPath,
    [
      join(root, "node_modules/vitest/vitest.mjs"),
      "run",
      "--root",
      root,
      "--config",
      config,
      "--reporter=json",
      `--outputFile=${report}`,
    ],
    {
      cwd: root,
      env: { ...process.env, CONSORT_FIXTURE_OUTCOME: outcome, CI: "true" },
      encoding: "utf8",
      timeout: 120_000,
    },
  );
  const summary = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number };
  return { status: run.status, summary };
}

describe("the test runner's exit code", () => {
  it("is non-zero when a test fails, with the embedded Postgres started", () => {
    const { status, summary } = runFixture("fail");
    expect(summary).toMatchObject({ numFailedTests: 1, numPassedTests: 0 });
    expect(status).toBe(1);
  }, 120_000);

  it("is zero when every test passes, so the failing case is not a broken setup", () => {
    const { status, summary } = runFixture("pass");
    expect(summary).toMatchObject({ numFailedTests: 0, numPassedTests: 1 });
    expect(status).toBe(0);
  }, 120_000);
});
