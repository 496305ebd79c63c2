import { z } from "zod";
import { answering, CommitSha, CycleRequest, CycleStep } from "./cycle-request.js";

/**
 * `cycle-result.json`, uploaded in the artifact `consort-cycle-result` (docs/ARCHITECTURE.md, Cycles). The app reads
 * it only from a run it dispatched; this schema is what it trusts the shape of.
 */

export const CYCLE_RESULT_FILE = "cycle-result.json";
export const CYCLE_SUMMARY_FILE = "cycle-summary.md";

/** A duration in milliseconds, as every timing the cycle records is. */
const Milliseconds = z.number().nonnegative();
/** How many tests: the report's counts, and the release cycle's that deploy evidence carries. */
export const TestCount = z.number().int().nonnegative();

/**
 * How one test ended in this run; `missing` = absent from the report (never ran, or did not load);
 * `behaviour-missing` = a RED test that failed only because a module the approved architecture
 * declares for the track (or a name it declares) is not written yet.
 */
const TEST_OUTCOMES = [
  "passed",
  "failed-assertion",
  "behaviour-missing",
  "failed-error",
  "skipped",
  "missing",
] as const;
export const TestOutcome = z.enum(TEST_OUTCOMES);
export type TestOutcome = z.infer<typeof TestOutcome>;

export const CycleTestOutcome = z
  .object({
    id: z.string(),
    file: z.string(),
    title: z.string(),
    /** turn: the tests this step is about; earlier: verified green in earlier cycles. */
    role: z.enum(["turn", "earlier"]),
    outcome: TestOutcome,
    /** What the runner said (first lines of a failure message). */
    message: z.string().optional(),
    type: z.string().optional(),
    durationMs: Milliseconds.optional(),
    /** The runner setting that likely hid or changed what the report says, and how to change it. */
    hint: z.string().optional(),
  })
  .strict();
export type CycleTestOutcome = z.infer<typeof CycleTestOutcome>;

export const StepTimings = z
  .object({
    fork: Milliseconds,
    migrate: Milliseconds,
    tests: Milliseconds,
    verdict: Milliseconds,
    /** Deleting the throwaway branch; it starts when the tests end, so it overlaps `verdict`. */
    drop: Milliseconds,
    /** Confinement's own cost: making the job's throwaway user and its copy of the checkout, ending its processes and deleting it. */
    confine: Milliseconds.optional(),
    total: Milliseconds,
  })
  .strict();
export type StepTimings = z.infer<typeof StepTimings>;

export const CommandRecord = z
  .object({
    command: z.string(),
    exitCode: z.number().int().nullable(),
    /** Set when the command was killed (timeout) rather than exiting. */
    signal: z.string().optional(),
    durationMs: Milliseconds,
    /** The last lines of stdout+stderr, with the database URL and its password removed. */
    outputTail: z.string(),
  })
  .strict();
export type CommandRecord = z.infer<typeof CommandRecord>;

/**
 * How the repository's commands ran: as a separate unprivileged OS user (confined), or, where that
 * was impossible, as the job's own user, with the reason (weaker evidence, said so plainly).
 */
export const ConfinementRecord = z.discriminatedUnion("confined", [
  z.object({ confined: z.literal(true), user: z.string(), uid: z.number().int() }).strict(),
  z.object({ confined: z.literal(false), reason: z.string() }).strict(),
]);
export type ConfinementRecord = z.infer<typeof ConfinementRecord>;

export const CycleVerdict = z.enum(["verified", "refused"]);
export type CycleVerdict = z.infer<typeof CycleVerdict>;

export const CycleResult = z
  .object({
    ...answering(CycleRequest),
    step: CycleStep,
    /** The commit actually checked out and tested. */
    commit: CommitSha,
    database: z
      .object({
        provider: z.string(),
        trackBranch: z.string(),
        /** The throwaway branch the cycle ran on; deleted at the end (`dropped`). */
        cycleBranch: z.string().nullable(),
        dropped: z.boolean(),
      })
      .strict(),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
    timingsMs: StepTimings,
    /** Absent in results of actions older than confinement: the app reads that as unconfined. */
    confinement: ConfinementRecord.optional(),
    commands: z
      .object({
        install: CommandRecord.optional(),
        migrate: CommandRecord.optional(),
        test: CommandRecord.optional(),
      })
      .strict(),
    report: z
      .object({
        path: z.string(),
        flavour: z.string().optional(),
        /** Counts over every test case in the report, listed or not. */
        total: TestCount,
        passed: TestCount,
        failed: TestCount,
        skipped: TestCount,
        loadErrors: z.array(z.string()),
      })
      .strict()
      .optional(),
    tests: z.array(CycleTestOutcome),
    /** verified: the step did what it claims; refused: it did not, or the cycle could not tell (fail closed). */
    verdict: CycleVerdict,
    /** Why, one line each; for a refusal, what is wrong and what to do. */
    reasons: z.array(z.string()),
    /** Things worth knowing that do not change the verdict (e.g. the throwaway branch could not be deleted). */
    warnings: z.array(z.string()),
  })
  .strict();
export type CycleResult = z.infer<typeof CycleResult>;

/** Exit code of `consort cycle`: 0 verified, 1 refused (2 is a usage error before anything ran). */
export const exitCodeFor = (verdict: CycleVerdict): number => (verdict === "verified" ? 0 : 1);
