import { basename } from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { simpleGit } from "simple-git";
import { TestId } from "../contracts/ids.js";
import { buildLocalRequest, REHEARSAL_LIMITS } from "../cycle/local-request.js";
import { CycleRequest } from "../contracts/cycle-request.js";
import { effectiveFrozenTests, frozenTextOf, greenTests } from "../orchestrator/context.js";
import { nextAction } from "../orchestrator/index.js";
import type { ToolContext } from "./context.js";
import { loadTrack, type LoadedTrack } from "./track-tools.js";
import {
  CYCLE_RESULT_FILE,
  CYCLE_SUMMARY_FILE,
  CycleTestOutcome,
  CycleVerdict,
  StepTimings,
} from "../contracts/cycle-result.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { CycleInputError, TestCycleStep } from "../contracts/cycle-request.js";
import { runCycle } from "../cycle/run.js";
import { defineTool, ToolError } from "./registry.js";

/**
 * `run_cycle`: the same RED/GREEN/REFACTOR cycle the app dispatches to Actions, run here on the
 * checkout against a throwaway branch of the configured database, so an agent sees the verdict
 * before it pushes. It proves nothing to the app: the app trusts only the cycles it dispatched.
 */

const RunCycleInput = z
  .object({
    step: TestCycleStep.describe(
      "red: the tests in turn must fail by an assertion, or only because a declared module is not written yet; green: they (and every earlier test) must pass; refactor: everything passes and no test file changed.",
    ),
    tests: z
      .array(TestId)
      .min(1)
      .max(50)
      .optional()
      .describe(
        'Test ids in turn, e.g. ["T7"]. Default: the tests in turn on the track (next_action). Without track state, required for red and green.',
      ),
    earlierGreen: z
      .array(TestId)
      .max(500)
      .optional()
      .describe(
        "Test ids that must still pass. Default: the track's verified tests; without track state, every test listed before the first one in turn.",
      ),
    frozenAt: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "A git ref whose test files count as frozen (later steps may only add to them at red, must leave them identical otherwise). Default: the files the track froze at its verified REDs.",
      ),
    designApprovedAt: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "red: the commit the design gate approved; a module .consort/architecture.json declares that is absent there is one the track creates, and a RED may fail only because it is not written yet. Default: the track's design-gate approval, else the merge base with the default branch.",
      ),
    databaseBranch: z
      .string()
      .trim()
      .min(1)
      .max(63)
      .optional()
      .describe(
        "The database branch to fork the throwaway branch from. Default: the branch paired with the checkout's git branch (made from the root when it does not exist yet).",
      ),
  })
  .strict();

/** What a cycle itself leaves in a checkout (the JUnit report, a result written there): never a change to commit. */
export function cycleOutputMatcher(config: Pick<ConsortConfig, "junit">): (path: string) => boolean {
  const ours = picomatch([config.junit, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE], { dot: true });
  return (path) => ours(path) || ours(basename(path));
}

const CommandSummary = z.object({
  command: z.string(),
  exitCode: z.number().int().nullable(),
  outputTail: z.string().describe("The last lines of its output, with database credentials removed."),
});

export const RunCycleOutput = z.object({
  verdict: CycleVerdict.describe(
    "verified: the step did what it claims; refused: it did not, or the cycle could not tell.",
  ),
  step: TestCycleStep,
  commit: z.string().describe("The commit checked out when the cycle ran."),
  reasons: z.array(z.string()).describe("For a refusal: what is wrong and what to do, one line each."),
  warnings: z.array(z.string()),
  tests: z.array(CycleTestOutcome).describe("Each test in turn and each earlier test, with how it ended."),
  database: z.object({
    provider: z.string(),
    trackBranch: z.string(),
    cycleBranch: z.string().nullable(),
    dropped: z.boolean(),
  }),
  timingsMs: StepTimings,
  migrate: CommandSummary.optional(),
  test: CommandSummary.optional(),
  plan: z.object({
    from: z
      .enum(["arguments", "track-state"])
      .describe("Where the tests in turn, earlier tests and frozen files came from."),
    trackId: z.string().nullable(),
    testsInTurn: z.array(z.string()),
    earlierGreen: z.array(z.string()),
    frozenTestFiles: z.array(z.string()),
  }),
  uncommittedChanges: z
    .array(z.string())
    .describe(
      "Paths changed but not committed: the cycle tested them, the app will not see them until they are pushed.",
    ),
  note: z.string(),
});

export const runCycleTool = defineTool({
  name: "run_cycle",
  title: "Run a local cycle",
  description:
    "Run a RED, GREEN or REFACTOR cycle on this checkout, exactly as the app's cycle job does: fork a throwaway branch of the configured database, run the migrate command, run the test command with a JUnit report, decide the verdict, drop the branch. " +
    "RED is verified only if every test in turn fails by an assertion, or only because a module .consort/architecture.json declares for the track (or a name in its exports) is not written yet, while earlier tests pass; any other import or type error, wrapped in an assertion or not, is refused. GREEN only if all of them pass and no frozen test file changed. " +
    "It does not apply the app's role and path rules to the commit (explain_rejection does). " +
    "Use it before pushing to see the verdict. It does not advance the track: only the cycle the app dispatches after a push counts. Takes a while (it runs the test suite).",
  input: RunCycleInput,
  output: RunCycleOutput,
  readOnly: false,
  idempotent: true,
  readsCheckout: true,
  async run(input, context) {
    const config = await context.config();
    const track = await trackFor(context, input.tests !== undefined);
    const action = track ? nextAction(track.snapshot, track.config) : null;
    const tests = input.tests ?? action?.testsInTurn.map((test) => test.id) ?? [];
    if (input.step !== "refactor" && tests.length === 0) {
      throw new ToolError(
        track
          ? `The track is at ${track.snapshot.stage}: no tests are in turn, so a ${input.step} cycle has nothing to prove.`
          : `A ${input.step} cycle needs the test ids in turn.`,
        track
          ? "Pass the test ids explicitly, or call next_action to see what the track expects."
          : "Pass tests (ids from .consort/test-list.json), or start the server with track state so they come from next_action.",
        "INVALID_CYCLE",
      );
    }
    const earlier =
      input.earlierGreen ??
      (track
        ? greenTests(track.snapshot.context)
            .map((test) => test.id)
            .filter((id) => !tests.includes(id))
        : undefined);
    // The commit the app's request would name: the design gate's approval on the track.
    const design = track?.snapshot.context.gates.design;
    const designApprovedAt =
      input.designApprovedAt ?? design?.approvals.findLast((a) => a.manifestHash === design.approvedHash)?.commit;
    let request: CycleRequest;
    try {
      request = await buildLocalRequest({
        cwd: context.repoPath,
        step: input.step,
        tests,
        ...(earlier ? { earlier } : {}),
        ...(input.frozenAt ? { frozenAt: input.frozenAt } : {}),
        ...(input.databaseBranch ? { dbBranch: input.databaseBranch } : {}),
        ...(designApprovedAt ? { designApprovedAt } : {}),
      });
      if (track && !input.frozenAt) {
        const frozen = Object.entries(effectiveFrozenTests(track.snapshot.context)).map(([path, entry]) => ({
          path,
          sha256: entry.hash,
          text: frozenTextOf(track.snapshot.context, entry),
        }));
        request = CycleRequest.parse({ ...request, frozenTestFiles: frozen });
      }
    } catch (error) {
      if (error instanceof CycleInputError)
        throw new ToolError(
          error.message,
          "Fix the arguments (test ids come from .consort/test-list.json) and call run_cycle again.",
          "INVALID_CYCLE",
        );
      throw error;
    }
    const provider = await context.provider();
    // One cycle at a time per checkout: two would share the working tree and its JUnit report.
    const { result, uncommittedChanges } = await context.exclusive(async () => {
      const ours = cycleOutputMatcher(config);
      const uncommittedChanges = (await simpleGit(context.repoPath).status()).files
        .map((file) => file.path)
        .filter((path) => !ours(path));
      const result = await runCycle(request, {
        provider,
        config,
        cwd: context.repoPath,
        rebuildMissingTrack: true,
        onProgress: context.onProgress,
      });
      return { result, uncommittedChanges };
    });
    const summary = (record: { command: string; exitCode: number | null; outputTail: string } | undefined) =>
      record ? { command: record.command, exitCode: record.exitCode, outputTail: record.outputTail } : undefined;
    return {
      verdict: result.verdict,
      step: input.step,
      commit: result.commit,
      reasons: result.reasons,
      warnings: result.warnings,
      tests: result.tests,
      database: result.database,
      timingsMs: result.timingsMs,
      ...(result.commands.migrate ? { migrate: summary(result.commands.migrate) } : {}),
      ...(result.commands.test ? { test: summary(result.commands.test) } : {}),
      plan: {
        from: track ? ("track-state" as const) : ("arguments" as const),
        trackId: track?.loaded.trackId ?? null,
        testsInTurn: request.tests.inTurn.map((test) => test.id),
        earlierGreen: request.tests.earlierGreen.map((test) => test.id),
        frozenTestFiles: request.frozenTestFiles.map((file) => file.path),
      },
      uncommittedChanges,
      note: `A local cycle shows what the app's cycle would decide; the track advances only on the cycle the app dispatches after you push. ${REHEARSAL_LIMITS}`,
    };
  },
});

/**
 * The track's state, when the server has a source for it. With explicit tests, a track that has
 * no state yet is fine (the cycle runs on the arguments alone); a tampered or unreadable state
 * never is.
 */
async function trackFor(context: ToolContext, testsGiven: boolean): Promise<LoadedTrack | null> {
  if (context.state.kind === "none") return null;
  try {
    return await loadTrack(context, undefined);
  } catch (error) {
    if (testsGiven && error instanceof ToolError && error.code === "NO_STATE") return null;
    throw error;
  }
}
