import type { Command } from "commander";
import { reconcileRepository, type RepositoryReconciliation } from "../engine/reconcile.js";
import type { Log } from "../app/github.js";
import { GitHubSetupError, resolveRepository } from "../github/env-client.js";
import { deadDeliveries, type DeadDelivery } from "../queue/deliveries.js";
import { appClient } from "./app-client.js";
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
      const { octokit, services } = await appClient(owner, repo, "consort reconcile");
      const log = stderrLog(options.quiet ? () => {} : say);
      say(`reconciling ${owner}/${repo}`);
      const reconciled = await reconcileRepository({ octokit, owner, repo, services, log, onProgress: say });
      // The app's delivery queue lives in its Postgres: with DATABASE_URL, its dead letters are shown too.
      const databaseUrl = process.env.DATABASE_URL?.trim();
      const result = databaseUrl
        ? { ...reconciled, deadLetters: await deadDeliveries(databaseUrl, `${owner}/${repo}`) }
        : reconciled;
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

function stderrLog(say: (message: string) => void): Log {
  const line = (level: string) => (a: object | string, b?: string) =>
    say(`${level}: ${typeof a === "string" ? a : (b ?? "")}`);
  return { info: line("info"), warn: line("warn"), error: line("error"), debug: () => {} } as Log;
}

function render(result: RepositoryReconciliation & { deadLetters?: DeadDelivery[] }): string {
  const lines =
    result.tracks.length === 0
      ? [`${result.repository}: no tracks on consort/state`]
      : [`${result.repository} (configuration: ${result.config})`];
  for (const track of result.tracks) {
    lines.push(`  ${track.trackId}: ${track.outcome}${track.error ? ` (${track.error})` : ""}`);
    for (const fact of track.found) lines.push(`    - ${fact}`);
  }
  for (const branch of result.expiredExperiments)
    lines.push(`  experiment ${branch}: expired, its database branch dropped (experiments.ttlDays)`);
  if (result.deadLetters?.length) {
    lines.push(
      `deliveries that failed for good (the app will not try them again; reconciling above caught up on them):`,
    );
    for (const dead of result.deadLetters)
      lines.push(
        `  ${dead.id} ${dead.event}, ${dead.attempts} attempt(s), ${dead.failedAt.toISOString()}: ${dead.reason}`,
      );
  }
  return lines.join("\n");
}
