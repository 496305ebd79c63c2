import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { OUTSIDE_A_JOB } from "../../src/cycle/confine.js";
import { belowFloor } from "../../src/contracts/mutation.js";
import { changedLines, measureMutation, mutateRanges } from "../../src/deploy/mutation.js";
import { OUR_TOOLS, priceConfig, priceProject, type PriceProject } from "./mutation-fixture.js";

/** Real StrykerJS runs (vitest runner) on a two-file project: the track added `discounted`. */

const made: PriceProject[] = [];
const state = await mkdtemp(join(tmpdir(), "consort-mutation-state-"));
afterAll(async () => {
  await Promise.all(made.map((p) => p.remove()));
  await rm(state, { recursive: true, force: true });
});

const git = promisify(execFile);
const env = { CONSORT_MUTATION_TOOLS: OUR_TOOLS, CONSORT_MUTATION_STATE: state };

describe("the mutation score of the track's tests over its changed lines", { timeout: 240_000 }, () => {
  test("only the lines the track added are mutated: the discount, not the total the merge base had", async () => {
    const project = await priceProject("strong");
    made.push(project);
    const changed = await changedLines(project.dir, project.base, priceConfig());
    expect([...changed.keys()]).toEqual(["src/price.js"]);
    expect(mutateRanges(changed)).toEqual(["src/price.js:6-10"]);
  });

  test("a track that changed only Python code is shown as not measured, with the reason: no Python tool runs here", async () => {
    const project = await priceProject("strong");
    made.push(project);
    const run = (...args: string[]) => git("git", args, { cwd: project.dir });
    await writeFile(join(project.dir, "src/price.py"), "def total(items):\n    return sum(i * 2 for i in items)\n");
    await run("add", "src/price.py");
    await run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "python");
    const head = (await run("rev-parse", "HEAD")).stdout.trim();
    const report = await measureMutation(
      { track: "python", base: project.head, databaseUrl: "postgres://localhost/none" },
      { config: priceConfig(), cwd: project.dir, confinement: OUTSIDE_A_JOB, env },
    );
    expect(head).not.toBe(project.head);
    expect(report).toMatchObject({ outcome: "not-measured", tool: "cosmic-ray", runner: "pytest", score: null });
    expect(report.reason).toMatch(/src\/price\.py\) were not measured: .*cosmic-ray.* is not installed/);
  });

  test("tests that pin the discount down kill its mutants; tests that only check it answers leave survivors named by file:line", async () => {
    const strong = await priceProject("strong");
    const weak = await priceProject("weak");
    made.push(strong, weak);
    const target = (p: PriceProject, track: string) => ({
      track,
      base: p.base,
      databaseUrl: "postgres://localhost/none",
    });
    const deps = (p: PriceProject) => ({ config: priceConfig(), cwd: p.dir, confinement: OUTSIDE_A_JOB, env });

    const good = await measureMutation(target(strong, "strong"), deps(strong));
    expect(good).toMatchObject({ outcome: "measured", tool: "stryker", runner: "vitest", base: strong.base });
    expect(good.counts.killed).toBeGreaterThan(0);
    expect(good.counts.survived + good.counts.notCovered).toBe(0);
    expect(good.score).toBe(100);

    const poor = await measureMutation(target(weak, "weak"), deps(weak));
    expect(poor.outcome).toBe("measured");
    expect(poor.score).toBeLessThan(50);
    expect(poor.counts.survived).toBeGreaterThan(0);
    // The total's mutants (line 3) are the merge base's: none is counted.
    expect(poor.survivors.every((s) => s.file === "src/price.js" && s.line >= 6 && s.line <= 10)).toBe(true);
    expect(poor.survivors).toContainEqual(
      expect.objectContaining({
        file: "src/price.js",
        line: 8,
        status: "survived",
        diff: "percent > 80 → percent >= 80",
      }),
    );
    expect(poor.survivors.length + poor.moreSurvivors).toBe(poor.counts.survived + poor.counts.notCovered);

    // With a floor: the weak tests fail it, naming the survivors and the fix.
    const floored = { ...poor, floor: 60 };
    expect(belowFloor(floored, 60)).toMatch(
      /below the floor 60% .*src\/price\.js:8 \(percent > 80 → percent >= 80\).*test-list renegotiation/,
    );
    expect(belowFloor(good, 60)).toBeUndefined();

    // A re-run of the same commit reuses every result from the track's incremental file.
    const again = await measureMutation(target(weak, "weak"), deps(weak));
    expect(again.reused).toBe(
      again.counts.killed + again.counts.survived + again.counts.notCovered + again.counts.timedOut,
    );
    expect(again.score).toBe(poor.score);
  });
});
