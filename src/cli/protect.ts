import type { Command } from "commander";
import { z } from "zod";
import { formatZodError } from "../contracts/zod-error.js";
import { clientFromEnv, GitHubSetupError, resolveRepository } from "../github/env-client.js";
import {
  DEFAULT_APPROVALS,
  formatPlan,
  protectRepository,
  ProtectError,
  readAppliedProtection,
  STATE_BRANCH_RULES,
  stateRulesMissing,
  unprotectedStateBranch,
  type AppliedProtection,
} from "../protect/index.js";
import { CliError, printResult, progress } from "./output.js";

/**
 * `consort protect`: install (or update) the repository rulesets that make Consort's checks
 * required, bound to the app's id, with the review rules; and keep `consort/state` for the app.
 */

const Options = z.object({
  repo: z.string().optional(),
  appId: z.coerce
    .number({ error: "--app-id must be a number" })
    .int()
    .positive("--app-id must be the GitHub App's numeric id"),
  approvals: z.coerce
    .number()
    .int()
    .min(1, "--approvals must be at least 1: a gate needs a person")
    .max(10, "--approvals must be at most 10 (GitHub's limit)"),
  dryRun: z.boolean().default(false),
  check: z.boolean().default(false),
  json: z.boolean().default(false),
});

export function registerProtectCommands(program: Command): void {
  program
    .command("protect")
    .description(
      "Require Consort's seven checks (bound to the app) and PR reviews on the default branch, and reserve consort/state for the app, with repository rulesets",
    )
    .option("--repo <owner/name>", "the repository (default: GITHUB_REPOSITORY, else the origin remote)")
    .option("--app-id <id>", "the Consort GitHub App's id (default: CONSORT_APP_ID or APP_ID)")
    .option("--approvals <n>", "approving reviews a merge needs", String(DEFAULT_APPROVALS))
    .option("--dry-run", "print the difference; change nothing")
    .option(
      "--check",
      "print the difference, whether consort/state's rules are in force (as the app checks before every write) and every conflict with other protection; change nothing; exit 1 while any remains",
    )
    .option("--json", "print the plan as JSON")
    .addHelpText("after", "\nAuth: GITHUB_TOKEN with the repository's Administration: write permission.")
    .action(async (raw: Record<string, unknown>) => {
      const appId = raw.appId ?? process.env.CONSORT_APP_ID ?? process.env.APP_ID;
      const parsed = Options.safeParse({ ...raw, appId });
      if (!parsed.success) {
        const missing = appId === undefined;
        throw new CliError(
          missing ? "The app id is missing" : formatZodError(parsed.error, "the options are invalid", { inline: true }),
          missing
            ? "pass --app-id N or set CONSORT_APP_ID (the number on the app's settings page)"
            : "run consort protect --help",
        );
      }
      const options = parsed.data;
      try {
        const { owner, repo } = resolveRepository(options.repo);
        const octokit = clientFromEnv();
        const result = await protectRepository(octokit, {
          owner,
          repo,
          settings: { appId: options.appId, approvals: options.approvals },
          dryRun: options.dryRun || options.check,
          progress: progress({}),
        });
        // Everything else that applies to the two branches, read after the writes so it sees them.
        const applied = await readAppliedProtection(octokit, {
          owner,
          repo,
          appId: options.appId,
          ours: result.rulesets.map((plan) => plan.id),
        });
        const missing = options.check ? stateRulesMissing(applied.stateRuleTypes) : undefined;
        const stateBranch = missing && { protected: missing.length === 0, missing };
        const json = {
          ...result,
          rulesets: result.rulesets.map(({ body: _body, ...plan }) => plan),
          protection: { seen: applied.seen, conflicts: applied.conflicts },
          ...(stateBranch ? { stateBranch } : {}),
        };
        printResult(options, json, () =>
          [
            `${result.repository}, app ${result.appId}${result.dryRun ? " (dry run: nothing written)" : ""}`,
            "",
            formatPlan(result.rulesets),
            ...(missing?.length === 0
              ? ["", `consort/state: protected (${STATE_BRANCH_RULES.join(", ")} in force)`]
              : []),
            "",
            formatApplied(applied),
          ].join("\n"),
        );
        if (missing && missing.length > 0)
          throw new CliError(
            unprotectedStateBranch(result.repository, missing),
            `consort protect --repo ${result.repository} --app-id ${options.appId}`,
          );
        if (options.check && applied.conflicts.length > 0)
          throw new CliError(
            `${applied.conflicts.length} conflict(s) with other protection remain on ${result.repository}:\n${applied.conflicts.map((c) => `- ${c.problem}`).join("\n")}`,
            applied.conflicts.map((c) => c.fix).join("\n  → "),
          );
      } catch (error) {
        if (error instanceof ProtectError || error instanceof GitHubSetupError)
          throw new CliError(error.message, error.hint);
        throw error;
      }
    });
}

/** What else applies to the two branches, and each conflict with its fix. */
function formatApplied(applied: AppliedProtection): string {
  const seen = applied.seen.length
    ? ["Other protection that applies:", ...applied.seen.map((line) => `  ${line}`)]
    : ["No other protection applies to the default branch or consort/state."];
  const conflicts = applied.conflicts.length
    ? [
        "",
        `Conflicts (${applied.conflicts.length}):`,
        ...applied.conflicts.flatMap((c) => [`  ✗ ${c.where}: ${c.problem}`, `    fix: ${c.fix}`]),
      ]
    : ["", "No conflicts: the rulesets protect the gates and consort/state as they say."];
  return [...seen, ...conflicts].join("\n");
}
