import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * `npm run mutate` must not read a test file that fails to load as "no tests" (stryker-js#6150: every
 * mutant it covers would survive, or a mutant that breaks loading would). This runs vitest the way
 * Stryker's runner does, with the mutation config's reporters, on a file that loads and one that
 * throws on import, and reads the tests the way that runner reads them.
 */
const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const fixtures = "test/foundation/fixtures/mutate-guard";
const work = mkdtempSync(join(tmpdir(), "consort-mutate-guard-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Collected {
  file: string;
  name: string;
  state: string | undefined;
  error: string | undefined;
}

function collect(reporters: "mutation config" | "default only"): Collected[] {
  const config = join(work, `vitest.${reporters === "default only" ? "plain" : "mutate"}.config.ts`);
  const out = join(work, `${reporters === "default only" ? "plain" : "mutate"}.json`);
  writeFileSync(
    config,
    [
      `import project from ${JSON.stringify(join(root, "vitest.mutate.config.ts"))};`,
      `const test = { ...project.test, root: ${JSON.stringify(root)}, include: [${JSON.stringify(`${fixtures}/*.fixture.ts`)}], exclude: [] };`,
      reporters === "default only" ? `test.reporters = ["default"];` : "",
      `export default { ...project, test };`,
    ].join("\n"),
  );
  const run = spawnSync(process.execPath, [join(root, fixtures, "collect.mjs"), config, out], {
    cwd: root,
    env: { ...process.env, CI: "true" },
    encoding: "utf8",
    timeout: 120_000,
  });
  // vitest sets a failing exit code when the broken file fails: what matters is what it collected.
  if (!existsSync(out)) throw new Error(`collect.mjs wrote nothing (exit ${run.status}): ${run.stderr}`);
  return (JSON.parse(readFileSync(out, "utf8")) as Collected[]).sort((a, b) => a.file.localeCompare(b.file));
}

describe("the mutation run's load guard", () => {
  it("counts a test file that fails to load as one failed test carrying its load error", () => {
    expect(collect("mutation config")).toEqual([
      {
        file: `${fixtures}/broken.fixture.ts`,
        name: "the test file loads",
        state: "fail",
        error: expect.stringMatching(/JSON/),
      },
      { file: `${fixtures}/loads.fixture.ts`, name: "passes", state: "pass", error: undefined },
    ]);
  }, 120_000);

  it("is needed: without it the file that fails to load yields no test at all", () => {
    expect(collect("default only")).toEqual([
      { file: `${fixtures}/loads.fixture.ts`, name: "passes", state: "pass", error: undefined },
    ]);
  }, 120_000);
});
