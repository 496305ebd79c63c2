import type { Command } from "commander";
import { ProbotOctokit } from "probot";
import { reconcileRepository, type RepositoryReconciliation } from "../app/reconcile.js";
import type { GitHub, Log } from "../app/github.js";
import type { AppServices } from "../app/services.js";
import { EnvSchema, privateKeyOf } from "../config/env.js";
import { appLoginOnce } from "../github/app-login.js";
import { GitHubSetupError, resolveRepository } from "../github/env-client.js";
import { createProvider } from "../substrate/create-provider.js";
import { CliError, printResult, progress } from "./output.js";

/**
 * `consort reconcile`: the repair for lost webhooks (GitHub does not redeliver them by itself).
 * It runs AS THE APP (only the app that created a check run can update it, and only the app may
 * write consort/state), re-derives every open track from GitHub and repairs state and checks.
 * Safe to run on a schedule: a second run with nothing new changes nothing.
 */
interface Options {
  repo?: string;
  json?: boolean;
  quiet?: boolean;
}

export function registerReconcileCommands(program: Command): void {
  program
    .command("reconcile")
    .description(
      "Re-derive every open track of a repository from GitHub (commits, runs, reviews, timeouts) and repair its state and checks, idempotently",
    )
    .option("--repo <owner/name>", "the repository (default: GITHUB_REPOSITORY, else the origin remote)")
    .option("--json", "print the result as JSON")
    .option("--quiet", "no progress on stderr")
    .addHelpText(
      "after",
      "\nRuns as the GitHub App: needs APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH) and CONSORT_STATE_KEY, as the app has them.\nExit code 1 when any track could not be reconciled (tampered state, a lost race, an error).",
    )
    .action(async (options: Options) => {
      const say = progress(options);
      const { owner, repo } = repository(options.repo);
      const { octokit, services } = await appClient(owner, repo);
      const log = stderrLog(options.quiet ? () => {} : say);
      say(`reconciling ${owner}/${repo}`);
      const result = await reconcileRepository({ octokit, owner, repo, services, log, onProgress: say });
      printResult(options, result, () => render(result));
      if (result.tracks.some((t) => t.outcome === "failed" || t.outcome === "tampered" || t.outcome === "conflict"))
        process.exitCode = 1;
    });
}

function repository(flag: string | undefined) {
  try {
    return resolveRepository(flag);
  } catch (error) {
    if (error instanceof GitHubSetupError) throw new CliError(error.message, error.hint);
    throw new CliError((error as Error).message, "pass --repo owner/name");
  }
}

async function appClient(owner: string, repo: string): Promise<{ octokit: GitHub; services: AppServices }> {
  const env = EnvSchema.parse(process.env);
  const privateKey = privateKeyOf(env);
  const appId = Number(env.APP_ID);
  if (!env.APP_ID || !Number.isInteger(appId) || !privateKey) {
    throw new CliError(
      "consort reconcile runs as the GitHub App, but APP_ID or PRIVATE_KEY is not set",
      "export APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) as the app has them",
    );
  }
  if (!env.CONSORT_STATE_KEY)
    throw new CliError("CONSORT_STATE_KEY is not set", "export the key the app seals consort/state with");
  const app = new ProbotOctokit({ auth: { appId, privateKey } });
  let installationId: number;
  try {
    installationId = (await app.request("GET /repos/{owner}/{repo}/installation", { owner, repo })).data.id;
  } catch (error) {
    throw new CliError(
      `The app is not installed on ${owner}/${repo} (${(error as Error).message})`,
      "install the Consort app on the repository first",
    );
  }
  const octokit = new ProbotOctokit({ auth: { appId, privateKey, installationId } }) as unknown as GitHub;
  return {
    octokit,
    services: {
      appId,
      stateKey: env.CONSORT_STATE_KEY,
      clock: () => new Date(),
      openProvider: (database) => createProvider(database),
      appLogin: appLoginOnce(async () => (await app.request("GET /app")).data),
    },
  };
}

function stderrLog(say: (message: string) => void): Log {
  const line = (level: string) => (a: object | string, b?: string) =>
    say(`${level}: ${typeof a === "string" ? a : (b ?? "")}`);
  return { info: line("info"), warn: line("warn"), error: line("error"), debug: () => {} } as Log;
}

function render(result: RepositoryReconciliation): string {
  if (result.tracks.length === 0) return `${result.repository}: no tracks on consort/state`;
  const lines = [`${result.repository} (configuration: ${result.config})`];
  for (const track of result.tracks) {
    lines.push(`  ${track.trackId}: ${track.outcome}${track.error ? ` (${track.error})` : ""}`);
    for (const fact of track.found) lines.push(`    - ${fact}`);
  }
  return lines.join("\n");
}
