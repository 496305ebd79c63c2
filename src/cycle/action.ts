import { join, resolve } from "node:path";
import { openJobProvider } from "../substrate/index.js";
import { placementOf } from "../contracts/placement.js";
import { appendJobSummary, getInput, readActionConfig, reportFailure, requireInput, setOutput } from "./action-io.js";
import { withInstallCommand } from "./commands.js";
import { confinedUserOf, prepareConfinement, runnerFoldersOf } from "./confine.js";
import { parseCycleRequest } from "../contracts/cycle-request.js";
import { CYCLE_RESULT_FILE, exitCodeFor } from "../contracts/cycle-result.js";
import { runCycle } from "./run.js";
import { renderCycleSummary } from "./summary.js";

/**
 * The action's `cycle` step (actions/consort): the job the app dispatches. Inputs: `request` (the JSON), `working-directory`
 * (the checkout of the commit), `config` (the default branch's consort.yml), `result-dir`.
 * The workflow uploads `result-dir` as the artifact `consort-cycle-result`. Returns the exit code.
 */
export async function runCycleAction(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const workspace = env.GITHUB_WORKSPACE ?? process.cwd();
  const cwd = resolve(workspace, getInput("working-directory", env) || ".");
  const outDir = resolve(workspace, getInput("result-dir", env) || join(env.RUNNER_TEMP ?? cwd, "consort-cycle"));
  try {
    const request = parseCycleRequest(requireInput("request", env), "the action input `request`");
    const config = withInstallCommand(readActionConfig(cwd, env).config, cwd);
    // A throwaway OS user for the repository's commands (root or passwordless sudo), else said so; the runner's folders hidden from them.
    const confinement = await prepareConfinement(confinedUserOf(env), runnerFoldersOf(env));
    const provider = await openJobProvider(config, { env, onProgress: (m) => console.log(m) });
    try {
      const result = await runCycle(request, {
        provider,
        config,
        cwd,
        outDir,
        onProgress: (m) => console.log(m),
        // The commands see only the allow-listed part of the job's environment.
        env,
        // Jobs apart from the app's branches (local on a hosted runner) rebuild the track's database, and say so.
        rebuildMissingTrack: !placementOf(config).shared,
        confinement,
      });
      await appendJobSummary(renderCycleSummary(result), env);
      await setOutput("verdict", result.verdict, env);
      await setOutput("result-path", join(outDir, CYCLE_RESULT_FILE), env);
      for (const reason of result.reasons) reportFailure(reason);
      return exitCodeFor(result.verdict);
    } finally {
      await provider.close();
    }
  } catch (error) {
    // Nothing to upload would look like a job that died: the app fails the check on a missing result.
    reportFailure(`the cycle could not run: ${(error as Error).message}`);
    await setOutput("verdict", "refused", env);
    return 1;
  }
}
