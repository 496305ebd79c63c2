import { mkdir, writeFile } from "node:fs/promises";
import type { ZodError } from "zod";
import { join, resolve } from "node:path";
import { formatZodError } from "../contracts/zod-error.js";
import {
  appendJobSummary,
  getInput,
  readActionConfig,
  reportFailure,
  requireInput,
  setOutput,
} from "../cycle/action-io.js";
import { withInstallCommand } from "../cycle/commands.js";
import { confinedUserOf, prepareConfinement, runnerFoldersOf } from "../cycle/confine.js";
import { confinementLine } from "../cycle/summary.js";
import type { JobDeps } from "../cycle/run.js";
import { openJobProvider } from "../substrate/index.js";
import { runDeploy } from "./deploy.js";
import { mutationMarkdown } from "./mutation-summary.js";
import { runPromote } from "./promote.js";
import {
  DEPLOY_EVIDENCE_FILE,
  DeployRequest,
  PROMOTE_RESULT_FILE,
  PromoteRequest,
  type DeployEvidence,
  type PromoteResult,
} from "../contracts/deploy.js";

/** The action's `deploy` and `promote` steps: the same inputs as its `cycle` step, a different job. */

function parseRequest<T>(
  schema: { safeParse(data: unknown): { success: true; data: T } | { success: false; error: ZodError } },
  text: string,
): T {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`the action input \`request\` is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new Error(formatZodError(parsed.error, "the action input `request` is not a valid request"));
  return parsed.data;
}

function renderDeploy(evidence: DeployEvidence): string {
  const lines = [
    `## ${evidence.verdict === "verified" ? "✅ Release verified" : "❌ Release refused"} (${evidence.mode})`,
    "",
    `Commit \`${evidence.commit.slice(0, 12)}\` on database branch \`${evidence.database.branch}\` (parent \`${evidence.database.parent}\`).`,
    `Migrations: ${evidence.migrationsApplied.length ? evidence.migrationsApplied.map((m) => `\`${m}\``).join(", ") : "none"}.`,
    `Verify: ${evidence.verify.outcome}${evidence.previewUrl ? `; preview ${evidence.previewUrl}` : ""}.`,
    "",
    confinementLine(evidence.confinement),
    "",
    ...(evidence.mutation ? [...mutationMarkdown(evidence.mutation), ""] : []),
    ...evidence.reasons.map((r) => `- ${r}`),
  ];
  return `${lines.join("\n")}\n`;
}

function renderPromote(result: PromoteResult): string {
  const title =
    result.verdict !== "promoted" ? "❌ Promotion failed" : result.database.migrated ? "✅ Promoted" : "✅ Merged";
  const lines = [
    `## ${title}: ${result.database.parent}`,
    "",
    result.database.migrated
      ? `Commit \`${result.commit.slice(0, 12)}\`; snapshot \`${result.database.snapshot ?? "none"}\` ${result.database.snapshotKept ? "kept" : "deleted"}.`
      : `Commit \`${result.commit.slice(0, 12)}\`; no database was migrated.`,
    "",
    // Said whenever the repository's migrate command ran: unconfined is weaker evidence.
    ...(result.migrate ? [confinementLine(result.confinement), ""] : []),
    ...[...result.reasons, ...result.notes].map((r) => `- ${r}`),
  ];
  return `${lines.join("\n")}\n`;
}

type RequestSchema<T> = Parameters<typeof parseRequest<T>>[0];

/**
 * One release job: parse the `request` input, run the step against the configured database, leave
 * its record in the result folder and the job summary, and exit 0 only when it reached `passed`.
 */
async function releaseJob<R, T extends { verdict: string; reasons: string[] }>(
  env: NodeJS.ProcessEnv,
  job: {
    request: RequestSchema<R>;
    run: (request: R, deps: JobDeps) => Promise<T>;
    file: string;
    render: (result: T) => string;
    passed: T["verdict"];
    outputs?: (result: T) => Promise<void>;
  },
): Promise<number> {
  const workspace = env.GITHUB_WORKSPACE ?? process.cwd();
  const cwd = resolve(workspace, getInput("working-directory", env) || ".");
  const outDir = resolve(workspace, getInput("result-dir", env) || join(env.RUNNER_TEMP ?? cwd, "consort-result"));
  try {
    await mkdir(outDir, { recursive: true });
    const request = parseRequest(job.request, requireInput("request", env));
    const config = withInstallCommand(readActionConfig(cwd, env).config, cwd);
    const onProgress = (message: string) => console.log(message);
    const provider = await openJobProvider(config, { env, onProgress });
    try {
      const confinement = await prepareConfinement(confinedUserOf(env), runnerFoldersOf(env));
      const result = await job.run(request, { provider, config, cwd, onProgress, confinement });
      await writeFile(join(outDir, job.file), `${JSON.stringify(result, null, 2)}\n`);
      await appendJobSummary(job.render(result), env);
      await setOutput("verdict", result.verdict, env);
      await job.outputs?.(result);
      for (const reason of result.reasons) reportFailure(reason);
      return result.verdict === job.passed ? 0 : 1;
    } finally {
      await provider.close();
    }
  } catch (error) {
    reportFailure((error as Error).message);
    return 1;
  }
}

export function runDeployAction(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return releaseJob(env, {
    request: DeployRequest,
    run: runDeploy,
    file: DEPLOY_EVIDENCE_FILE,
    render: renderDeploy,
    passed: "verified",
    outputs: async (evidence) => {
      if (evidence.previewUrl) await setOutput("preview-url", evidence.previewUrl, env);
    },
  });
}

export function runPromoteAction(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return releaseJob(env, {
    request: PromoteRequest,
    run: runPromote,
    file: PROMOTE_RESULT_FILE,
    render: renderPromote,
    passed: "promoted",
  });
}
