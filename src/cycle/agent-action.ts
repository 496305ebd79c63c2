import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { formatZodError } from "../contracts/zod-error.js";
import { appendJobSummary, getInput, readActionConfig, reportFailure, requireInput, setOutput } from "./action-io.js";
import { AGENT_RESULT_FILE, AgentRequest } from "../contracts/agent-turn.js";
import { runAgentTurn } from "./agent-turn.js";

/**
 * The action's `agent` step (actions/consort): inputs `request` (the AgentRequest JSON), `working-directory` (the track's
 * checkout), `config`, `roles-dir` (default: the roles/ folder shipped with the actions) and
 * `result-dir` (where agent-turn-result.json goes; the workflow uploads it as consort-agent-result).
 * Output `committed` is "true" only when a commit was made (the workflow then pushes it).
 */
export async function runAgentAction(env: NodeJS.ProcessEnv = process.env, defaultRolesDir?: string): Promise<number> {
  const workspace = env.GITHUB_WORKSPACE ?? process.cwd();
  const cwd = resolve(workspace, getInput("working-directory", env) || ".");
  try {
    let data: unknown;
    try {
      data = JSON.parse(requireInput("request", env));
    } catch (error) {
      throw new Error(`the action input \`request\` is not valid JSON: ${(error as Error).message}`);
    }
    const parsed = AgentRequest.safeParse(data);
    if (!parsed.success)
      throw new Error(formatZodError(parsed.error, "the action input `request` is not a valid agent request"));
    const { config } = readActionConfig(cwd, env);
    const rolesDir = resolve(workspace, getInput("roles-dir", env) || defaultRolesDir || "roles");
    const result = await runAgentTurn(parsed.data, { config, cwd, rolesDir });
    const outDir = resolve(workspace, getInput("result-dir", env) || join(env.RUNNER_TEMP ?? cwd, "consort-agent"));
    await mkdir(outDir, { recursive: true });
    await writeFile(join(outDir, AGENT_RESULT_FILE), `${JSON.stringify(result, null, 2)}\n`);
    await setOutput("committed", result.verdict === "committed" ? "true" : "false", env);
    if (result.commit) await setOutput("commit", result.commit, env);
    await appendJobSummary(
      `## ${result.verdict === "committed" ? "✅" : "❌"} ${parsed.data.role}: ${result.verdict}\n\n` +
        (result.files.length ? `Files: ${result.files.map((f) => `\`${f}\``).join(", ")}\n\n` : "") +
        result.reasons.map((r) => `- ${r}`).join("\n") +
        "\n",
      env,
    );
    for (const reason of result.reasons) reportFailure(reason);
    return result.verdict === "committed" ? 0 : 1;
  } catch (error) {
    reportFailure(`the agent turn could not run: ${(error as Error).message}`);
    await setOutput("committed", "false", env);
    return 1;
  }
}
