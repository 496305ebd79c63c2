import type { GitHubClient } from "../github/client.js";
import { STATE_BRANCH } from "../state/index.js";
import { DEFAULT_APPROVALS, desiredRulesets, STATE_BRANCH_RULESET } from "./rulesets.js";

/**
 * Whether the rules that keep consort/state the app's alone are in force. Read through
 * `GET /repos/{o}/{r}/rules/branches/{branch}` (every active rule on the branch, from repository
 * and organisation rulesets alike), which needs no administration permission, so the app itself
 * can ask before it trusts the branch: without them anyone with write access may force-push it
 * back to an older state.
 */

/** The rule types `consort protect` puts on consort/state (one source: its ruleset). */
export const STATE_BRANCH_RULES: readonly string[] = desiredRulesets({ appId: 0, approvals: DEFAULT_APPROVALS })
  .find((ruleset) => ruleset.name === STATE_BRANCH_RULESET)!
  .rules.map((rule) => rule.type);

/** The rules of STATE_BRANCH_RULES not in force on consort/state (empty when it is protected). */
async function missingStateBranchRules(octokit: GitHubClient, owner: string, repo: string): Promise<string[]> {
  const active = await octokit.paginate(octokit.rest.repos.getBranchRules, {
    owner,
    repo,
    branch: STATE_BRANCH,
    per_page: 100,
  });
  return stateRulesMissing(active.map((rule) => rule.type));
}

/** The rules of STATE_BRANCH_RULES not among the rule types in force on consort/state. */
export function stateRulesMissing(inForce: readonly string[]): string[] {
  return STATE_BRANCH_RULES.filter((type) => !inForce.includes(type));
}

/** What is wrong and how to restore it, when `missing` rules are not in force on `repository`'s consort/state. */
export function unprotectedStateBranch(repository: string, missing: readonly string[]): string {
  return `${STATE_BRANCH} of ${repository} is not protected: the rules ${missing.join(", ")} are not in force on it (the ruleset "${STATE_BRANCH_RULESET}" is missing, disabled or changed), so anyone with write access could rewrite it or move it back to an older state. Consort acts on this repository again once it is restored: a repository admin runs \`consort protect --repo ${repository} --app-id <the app's id>\` (or restores the ruleset under Settings → Rules → Rulesets); then redeliver this event or run \`consort reconcile\`.`;
}

/** Raised before the app reads or writes consort/state of a repository whose branch is not protected. */
class UnprotectedStateBranchError extends Error {
  constructor(
    readonly repository: string,
    readonly missing: readonly string[],
  ) {
    super(unprotectedStateBranch(repository, missing));
    this.name = "UnprotectedStateBranchError";
  }
}

/** Throw UnprotectedStateBranchError when consort/state's rules are not all in force. */
export async function requireProtectedStateBranch(octokit: GitHubClient, owner: string, repo: string): Promise<void> {
  const missing = await missingStateBranchRules(octokit, owner, repo);
  if (missing.length > 0) throw new UnprotectedStateBranchError(`${owner}/${repo}`, missing);
}
