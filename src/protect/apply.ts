import { githubMessage, httpStatus, type GitHubClient } from "../github/client.js";
import {
  desiredRulesets,
  planRuleset,
  type ExistingRuleset,
  type ProtectSettings,
  type RulesetPlan,
} from "./rulesets.js";

/** Raised when GitHub refuses to show or change the rulesets; says which permission is missing. */
export class ProtectError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = "ProtectError";
  }
}

// Our rule objects are plain data checked against GitHub's description in the tests; Octokit's
// generated union of every rule type is stricter than it needs to be here.
type CreateParams = Parameters<GitHubClient["rest"]["repos"]["createRepoRuleset"]>[0];
type UpdateParams = Parameters<GitHubClient["rest"]["repos"]["updateRepoRuleset"]>[0];

export interface ProtectResult {
  repository: string;
  appId: number;
  dryRun: boolean;
  rulesets: RulesetPlan[];
}

/** GitHub's refusal, as a ProtectError saying which permission or plan is missing. */
export function refused(error: unknown, owner: string, repo: string, what: string): ProtectError {
  const status = httpStatus(error);
  const hint =
    status === 403 || status === 404
      ? "the token needs the repository's Administration: write permission (a fine-grained token or an admin's classic token with repo scope); rulesets on private repositories need GitHub Pro, Team or Enterprise"
      : status === 422
        ? "GitHub rejected the ruleset: check that the app id is a GitHub App installed on this repository"
        : "retry; if it persists, check https://www.githubstatus.com";
  return new ProtectError(
    `Could not ${what} rulesets of ${owner}/${repo}: ${githubMessage(error)} (HTTP ${status ?? "?"})`,
    hint,
  );
}

/**
 * Plan (and unless `dryRun`, apply) Consort's rulesets on a repository. A dry run makes only
 * GET requests and returns exactly what would change.
 */
export async function protectRepository(
  octokit: GitHubClient,
  input: {
    owner: string;
    repo: string;
    settings: ProtectSettings;
    dryRun: boolean;
    progress?: (message: string) => void;
  },
): Promise<ProtectResult> {
  const { owner, repo, settings, dryRun } = input;
  const progress = input.progress ?? (() => {});
  progress(`reading the rulesets of ${owner}/${repo}`);
  let listed: Array<{ id: number; name: string; source_type?: string }>;
  try {
    listed = await octokit.paginate(octokit.rest.repos.getRepoRulesets, {
      owner,
      repo,
      // The organisation's rulesets are listed too: they apply to the branches as well (see applies.ts).
      includes_parents: true,
      per_page: 100,
    });
  } catch (error) {
    throw refused(error, owner, repo, "read the");
  }
  const plans: RulesetPlan[] = [];
  for (const desired of desiredRulesets(settings)) {
    const match = listed.find((r) => r.name === desired.name && (r.source_type ?? "Repository") === "Repository");
    let existing: ExistingRuleset | undefined;
    if (match) {
      try {
        existing = (await octokit.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: match.id }))
          .data as ExistingRuleset;
      } catch (error) {
        throw refused(error, owner, repo, "read the");
      }
    }
    plans.push(planRuleset(desired, existing));
  }
  if (!dryRun) {
    for (const plan of plans) {
      try {
        if (plan.action === "create") {
          progress(`creating ruleset "${plan.name}"`);
          const { data } = await octokit.rest.repos.createRepoRuleset({
            owner,
            repo,
            ...plan.body,
          } as unknown as CreateParams);
          plan.id = (data as { id: number }).id;
        } else if (plan.action === "update") {
          progress(`updating ruleset "${plan.name}"`);
          await octokit.rest.repos.updateRepoRuleset({
            owner,
            repo,
            ruleset_id: plan.id!,
            ...plan.body,
          } as unknown as UpdateParams);
        }
      } catch (error) {
        throw refused(error, owner, repo, plan.action === "create" ? "create the" : "update the");
      }
    }
  }
  return { repository: `${owner}/${repo}`, appId: settings.appId, dryRun, rulesets: plans };
}
