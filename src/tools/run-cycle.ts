import { z } from "zod";
import { simpleGit } from "simple-git";
import { TestId } from "../artifacts/ids.js";
import { buildLocalRequest } from "../cycle/local-request.js";
import { CycleTestOutcome, StepTimings } from "../cycle/result.js";
import { CycleInputError } from "../cycle/request.js";
import { runCycle } from "../cycle/run.js";
import { defineTool, ToolError } from "./registry.js";

/**
 * `run_cycle`: the same RED/GREEN/REFACTOR cycle the app dispatches to Actions, run here on the
 * checkout against a throwaway branch of the configured database, so an agent sees the verdict
 * before it pushes. It proves nothing to the app: the app trusts only the cycles it dispatched.
 */

export const RunCycleInput = z
  .object({
    step: z.enum(["red", "green", "refactor"]).describe("red: the tests in turn must fail by an assertion; green: they (and every earlier test) must pass; refactor: everything passes and no test file changed."),
    tests: z.array(TestId).min(1).max(50).optional().describe("Test ids in turn, e.g. [\"T7\"]. Required for red and green; refactor defaults to none (only the earlier tests)."),
    earlierGreen: z.array(TestId).max(500).optional().describe("Test ids that must still pass. Default: every test listed before the first one in turn."),
    frozenAt: z.string().trim().min(1).max(200).optional().describe("A git ref (e.g. the commit of the last verified RED) whose test files count as frozen: later steps may only add to them (red) or must leave them identical."),
    databaseBranch: z.string().trim().min(1).max(63).optional().describe("The database branch to fork the throwaway branch from. Default: the branch paired with the checkout's git branch (made from the root when it does not exist yet)."),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.step !== "refactor" && !input.tests) ctx.addIssue({ code: "custom", path: ["tests"], message: `a ${input.step} cycle needs the test ids in turn (next_action lists them)` });
  });

const CommandSummary = z.object({
  command: z.string(),
  exitCode: z.number().int().nullable(),
  outputTail: z.string().describe("The last lines of its output, with database credentials removed."),
});

export const RunCycleOutput = z.object({
  verdict: z.enum(["verified", "refused"]).describe("verified: the step did what it claims; refused: it did not, or the cycle could not tell."),
  step: z.enum(["red", "green", "refactor"]),
  commit: z.string().describe("The commit checked out when the cycle ran."),
  reasons: z.array(z.string()).describe("For a refusal: what is wrong and what to do, one line each."),
  warnings: z.array(z.string()),
  tests: z.array(CycleTestOutcome).describe("Each test in turn and each earlier test, with how it ended."),
  database: z.object({ provider: z.string(), trackBranch: z.string(), cycleBranch: z.string().nullable(), dropped: z.boolean() }),
  timingsMs: StepTimings,
  migrate: CommandSummary.optional(),
  test: CommandSummary.optional(),
  uncommittedChanges: z.array(z.string()).describe("Paths changed but not committed: the cycle tested them, the app will not see them until they are pushed."),
  note: z.string(),
});

export const runCycleTool = defineTool({
  name: "run_cycle",
  title: "Run a local cycle",
  description:
    "Run a RED, GREEN or REFACTOR cycle on this checkout, exactly as the app's cycle job does: fork a throwaway branch of the configured database, run the migrate command, run the test command with a JUnit report, decide the verdict, drop the branch. " +
    "RED is verified only if every test in turn fails by an assertion (not an import or type error) while earlier tests pass; GREEN only if all of them pass and no frozen test file changed. " +
    "Use it before pushing to see the verdict. It does not advance the track: only the cycle the app dispatches after a push counts. Takes a while (it runs the test suite).",
  input: RunCycleInput,
  output: RunCycleOutput,
  readOnly: false,
  idempotent: true,
  async run(input, context) {
    await context.assertCheckout();
    const config = await context.config();
    let request;
    try {
      request = await buildLocalRequest({
        cwd: context.repoPath,
        step: input.step,
        tests: input.tests ?? [],
        ...(input.earlierGreen ? { earlier: input.earlierGreen } : {}),
        ...(input.frozenAt ? { frozenAt: input.frozenAt } : {}),
        ...(input.databaseBranch ? { dbBranch: input.databaseBranch } : {}),
      });
    } catch (error) {
      if (error instanceof CycleInputError) throw new ToolError(error.message, "Fix the arguments (test ids come from .consort/test-list.json) and call run_cycle again.", "INVALID_CYCLE");
      throw error;
    }
    const uncommittedChanges = (await simpleGit(context.repoPath).status()).files.map((file) => file.path);
    const provider = await context.provider();
    // One cycle at a time per checkout: two would share the working tree and its JUnit report.
    const result = await context.exclusive(() =>
      runCycle(request, { provider, config, cwd: context.repoPath, rebuildMissingTrack: true, onProgress: context.onProgress }),
    );
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
      uncommittedChanges,
      note: "A local cycle shows what the app's cycle would decide; the track advances only on the cycle the app dispatches after you push.",
    };
  },
});
