import { CHECK_NAMES, type CheckName } from "../../../src/contracts/gates.js";
import { expect } from "vitest";
import type { CheckRun, GitHubWorld } from "./github-world.js";
import type { Scenario } from "./scenario.js";

/**
 * The seven Consort checks on a commit as branch protection sees them: each one's conclusion once
 * completed, else its status (`in_progress`), or `missing` when the app wrote none.
 */
export function checkTable(world: GitHubWorld, sha: string): Record<CheckName, string> {
  const runs = world.checksOn(sha);
  return Object.fromEntries(
    CHECK_NAMES.map((name) => {
      const run = runs.get(name);
      return [name, run ? (run.conclusion ?? run.status) : "missing"];
    }),
  ) as Record<CheckName, string>;
}

/** The check table where every one of the seven checks has the one conclusion (a refusal fails them all). */
export const allChecks = (conclusion: string): Record<CheckName, string> =>
  Object.fromEntries(CHECK_NAMES.map((name) => [name, conclusion])) as Record<CheckName, string>;

/** A check run's summary as a person reads it, without the hidden content marker the app appends. */
export function summaryOf(run: CheckRun): string {
  return (run.output.summary ?? "").replace(/\n\n<!-- consort:content [0-9a-f]{64} -->$/, "");
}

/** What the discipline check lists under "What happened", one entry per violation, as plain text. */
export function violationsOn(run: CheckRun): string[] {
  return summaryOf(run)
    .split("\n")
    .filter((line) => line.startsWith("| ["))
    .map((row) => {
      const cells = row.split(/(?<!\\)\|/);
      return cells[cells.length - 2]!.trim().replace(/\\\|/g, "|").replace(/&lt;/g, "<");
    });
}

/**
 * The seven checks on the head after a step: exactly `passing` pass, and every other check waits
 * (none fails): in progress where it says something (a gate waiting for approval, the build's test
 * in turn), not written where it only holds a place, and a missing required check blocks the merge
 * as an in-progress one would. Branch protection lets the PR merge only once all pass.
 */
export function expectPassing(s: Scenario, passing: readonly CheckName[]): void {
  const schema = s.world.checksOn(s.head()).get("consort/schema");
  expect(schema?.conclusion, schema?.output.summary ?? "").not.toBe("failure");
  expect(checkTable(s.world, s.head())).toEqual(
    Object.fromEntries(
      CHECK_NAMES.map((name) => [
        name,
        passing.includes(name) ? "success" : expect.stringMatching(/^(in_progress|missing)$/),
      ]),
    ),
  );
}

// What passes as the feature goes: no violation from the start, and no breaking schema change
// from the start where the app sees the branches the jobs migrate (else from the release on, when
// the release job's own diff arrives); then each gate once a person approved it and the build once
// every test is green and reviewed.
export function stages(schemaFromStart: boolean) {
  const CLEAN: CheckName[] = schemaFromStart ? ["consort/discipline", "consort/schema"] : ["consort/discipline"];
  const DESIGN_APPROVED: CheckName[] = [...CLEAN, "consort/design"];
  const LIST_APPROVED: CheckName[] = [...DESIGN_APPROVED, "consort/test-list"];
  const BUILT: CheckName[] = [...LIST_APPROVED, "consort/build"];
  const RELEASED: CheckName[] = [...new Set<CheckName>([...BUILT, "consort/schema"])];
  const DEPLOY_APPROVED: CheckName[] = [...RELEASED, "consort/deploy"];
  const EVERY_CHECK: CheckName[] = [...DEPLOY_APPROVED, "consort/promote"];
  return { CLEAN, DESIGN_APPROVED, LIST_APPROVED, BUILT, RELEASED, DEPLOY_APPROVED, EVERY_CHECK };
}
