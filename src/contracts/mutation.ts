import { z } from "zod";
import { ConfinementRecord } from "./cycle-result.js";

/**
 * The mutation score of a track's tests over the lines the track changed, as the release job
 * measures it (src/deploy/mutation.ts) and the deploy gate shows it: how many mutants of those
 * lines the tests noticed, and where the ones they missed are.
 */

/** How many surviving mutants the evidence lists by name; the rest are counted. */
export const SURVIVORS_SHOWN = 10;

const Count = z.number().int().nonnegative();

const MutationTool = z.enum(["stryker", "cosmic-ray"]);

/** A mutant the tests did not notice: it survived them, or no test ran its line. */
export const SurvivingMutant = z
  .object({
    file: z.string().min(1),
    line: z.number().int().positive(),
    status: z.enum(["survived", "not-covered"]),
    mutator: z.string().max(100),
    /** One line: the original code → the mutated code, both cut to a screen's width. */
    diff: z.string().max(300),
  })
  .strict();
export type SurvivingMutant = z.infer<typeof SurvivingMutant>;

export const MutationCounts = z
  .object({
    killed: Count,
    survived: Count,
    timedOut: Count,
    notCovered: Count,
    /** Mutants that did not compile or broke the runner: no verdict on the tests. */
    errors: Count,
  })
  .strict();
export type MutationCounts = z.infer<typeof MutationCounts>;

export const MutationReport = z
  .object({
    /**
     * measured: every mutant of the changed lines had a verdict; partial: the run stopped (its time
     * budget, or an error) with some measured; not-measured: nothing was, and `reason` says why.
     */
    outcome: z.enum(["measured", "partial", "not-measured"]),
    reason: z.string().optional(),
    tool: MutationTool.optional(),
    /** The test runner the tool drove: vitest, jest, mocha, or the test command (`command`). */
    runner: z.string().optional(),
    /** The commit the changed lines were taken against (the track's merge base). */
    base: z.string().optional(),
    /** Percent of the mutants with a verdict that the tests detected (killed or timed out), or null with none. */
    score: z.number().min(0).max(100).nullable(),
    counts: MutationCounts,
    /** Survived first, then not covered; lines with most survivors first. */
    survivors: z.array(SurvivingMutant).max(SURVIVORS_SHOWN),
    /** Surviving mutants beyond the ones listed. */
    moreSurvivors: Count,
    /** How many results the tool reused from the track's incremental file instead of re-running. */
    reused: Count.default(0),
    /** The floor of `gates.deploy.mutation.minScore`, when one is set. */
    floor: z.number().min(0).max(100).optional(),
    durationMs: z.number().nonnegative(),
    /** How the mutants' test runs ran: as the job's throwaway user, or unconfined and why. */
    confinement: ConfinementRecord.optional(),
  })
  .strict();
export type MutationReport = z.infer<typeof MutationReport>;

/** Nothing was measured, and why. */
export function notMeasured(reason: string, extra: Partial<MutationReport> = {}): MutationReport {
  return {
    outcome: "not-measured",
    reason,
    score: null,
    counts: { killed: 0, survived: 0, timedOut: 0, notCovered: 0, errors: 0 },
    survivors: [],
    moreSurvivors: 0,
    reused: 0,
    durationMs: 0,
    ...extra,
  };
}

/**
 * Why the deploy gate cannot pass this report under `floor`, or undefined when it can: below the
 * floor, or not measured in full (a partial run never passes a floor).
 */
export function belowFloor(report: MutationReport, floor: number | undefined): string | undefined {
  if (floor === undefined) return undefined;
  const fix =
    "add tests that kill them through a test-list renegotiation (the “Renegotiate tests” button on consort/deploy reopens the test list), then release again";
  if (report.outcome !== "measured")
    return `the mutation score could not be measured in full (${report.reason ?? report.outcome}), so it cannot meet the floor ${floor}% (gates.deploy.mutation.minScore in .github/consort.yml)`;
  if (report.score === null || report.score >= floor) return undefined;
  const named = report.survivors.map((s) => `${s.file}:${s.line} (${s.diff})`);
  const more = report.moreSurvivors > 0 ? ` and ${report.moreSurvivors} more` : "";
  return `the mutation score ${report.score}% is below the floor ${floor}% (gates.deploy.mutation.minScore in .github/consort.yml): the tests miss ${named.join("; ")}${more}; ${fix}`;
}
