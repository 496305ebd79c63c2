import { describe, expect, test } from "vitest";
import { MutationReport, SURVIVORS_SHOWN, belowFloor, notMeasured } from "../../src/contracts/mutation.js";
import { mutationMarkdown } from "../../src/deploy/mutation-summary.js";

/** What the approver reads in consort/deploy and the release's summary. */

const survivor = (line: number) => ({
  file: "src/price.js",
  line,
  status: "survived" as const,
  mutator: "EqualityOperator",
  diff: "percent > 80 → percent >= 80",
});

const weak = MutationReport.parse({
  outcome: "measured",
  tool: "stryker",
  runner: "vitest",
  base: "35400a423de86f90c4bfa5380c1f2b472d6f7a20",
  score: 12.5,
  counts: { killed: 2, survived: 14, timedOut: 0, notCovered: 0, errors: 0 },
  survivors: Array.from({ length: SURVIVORS_SHOWN }, (_, i) => survivor(8 + i)),
  moreSurvivors: 4,
  floor: 60,
  durationMs: 20_000,
});

describe("the mutation score as the approver reads it", () => {
  test("gives the score and floor, the counts, each shown survivor as file:line with its diff, and counts the rest", () => {
    const text = mutationMarkdown(weak).join("\n");
    expect(text).toContain("#### Mutation score: 12.5% (floor 60%)");
    expect(text).toContain(
      "since `35400a423de8` (StrykerJS, vitest runner): 2 killed, 14 survived, 0 timed out, 0 not covered.",
    );
    expect(text).toContain("- `src/price.js:8` `percent > 80 → percent >= 80`");
    expect(text).toContain("- and 4 more surviving mutants");
  });

  test("a diff holding backticks stays one code span", () => {
    const text = mutationMarkdown({ ...weak, survivors: [{ ...survivor(3), diff: "`a` → ``" }], moreSurvivors: 0 });
    expect(text.join("\n")).toContain("``` `a` → `` ```");
  });

  test("a partial run says so, and never meets a floor even with a high score", () => {
    const partial = {
      ...weak,
      outcome: "partial" as const,
      score: 95,
      reason: "the measurement stopped at its budget",
    };
    expect(mutationMarkdown(partial)[0]).toBe("#### Mutation score: 95%, partial (floor 60%)");
    expect(belowFloor(partial, 60)).toMatch(/could not be measured in full \(the measurement stopped at its budget\)/);
  });

  test("without a floor nothing fails; not measured says why", () => {
    expect(belowFloor(weak, undefined)).toBeUndefined();
    const none = notMeasured("no Python mutation tool is installed");
    expect(mutationMarkdown(none)).toEqual([
      "#### Mutation score: not measured",
      "",
      "> no Python mutation tool is installed",
      "",
    ]);
    expect(belowFloor(none, 50)).toMatch(/could not be measured in full/);
  });
});
