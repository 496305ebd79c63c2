import { CHECK_NAMES } from "../contracts/gates.js";
import { githubMessage, httpStatus, type GitHubClient } from "../github/client.js";
import { STATE_BRANCH } from "../state/index.js";
import { refused } from "./apply.js";
import { DEFAULT_BRANCH_RULESET, STATE_BRANCH_RULESET } from "./rulesets.js";

/**
 * Everything GitHub enforces on the default branch and on consort/state besides the rulesets
 * `consort protect` writes: classic branch protection rules, rulesets of the organisation (and of
 * the repository) that match either branch, and whether the owner's plan enforces rulesets on
 * this repository at all. Each conflict says what goes wrong and the exact fix; `--check` fails
 * while any remains.
 */

/** One thing that keeps the gates or consort/state from being protected as the rulesets say. */
interface ProtectionConflict {
  /** The branch (or the repository) it is about. */
  where: string;
  problem: string;
  fix: string;
}

export interface AppliedProtection {
  /** What else applies, one line each (shown so nothing is hidden from the person running the command). */
  seen: string[];
  conflicts: ProtectionConflict[];
  /** The rule types in force on consort/state, from every level (see missingStateBranchRules). */
  stateRuleTypes: string[];
}

/** An active rule as `GET /repos/{o}/{r}/rules/branches/{branch}` lists it, with the ruleset it comes from. */
interface ActiveRule {
  type: string;
  ruleset_id?: number;
  ruleset_source_type?: string;
  ruleset_source?: string;
}

/** Branch protection settings that refuse a direct, non-forced update by the app (the others let it through). */
const BLOCKING_ON_STATE = new Set([
  "required_status_checks",
  "required_pull_request_reviews",
  "restrictions",
  "lock_branch",
  "block_creations",
]);

/** Rules the app's writes to consort/state pass without a bypass: it only fast-forwards, never deletes, and GitHub signs its commits. */
const HARMLESS_ON_STATE = new Set(["non_fast_forward", "deletion", "required_linear_history", "required_signatures"]);

/**
 * Read what applies to `owner/repo`'s default branch and consort/state. `ours` are the ids of the
 * repository rulesets Consort manages (absent for one not created yet). Needs what `consort protect`
 * needs (Administration: read); a refusal fails the command rather than hiding what it cannot see.
 */
export async function readAppliedProtection(
  octokit: GitHubClient,
  input: { owner: string; repo: string; appId: number; ours: ReadonlyArray<number | undefined> },
): Promise<AppliedProtection> {
  try {
    return await readApplied(octokit, input);
  } catch (error) {
    if (httpStatus(error) === undefined) throw error;
    throw refused(error, input.owner, input.repo, "read the protection that applies besides the");
  }
}

interface Where {
  owner: string;
  repo: string;
  appId: number;
}

/** What one reader found: lines for `seen` and the conflicts among them. */
interface Found {
  seen: string[];
  conflicts: ProtectionConflict[];
}

async function readApplied(
  octokit: GitHubClient,
  { ours, ...where }: Where & { ours: ReadonlyArray<number | undefined> },
): Promise<AppliedProtection> {
  const { data: repository } = await octokit.rest.repos.get({ owner: where.owner, repo: where.repo });
  const plan = await planEnforcement(octokit, repository);
  const onDefault = await defaultBranchProtection(octokit, where, repository.default_branch);
  const onState = await stateBranchProtection(octokit, where);
  const rules = (await octokit.paginate(octokit.rest.repos.getBranchRules, {
    owner: where.owner,
    repo: where.repo,
    branch: STATE_BRANCH,
    per_page: 100,
  })) as ActiveRule[];
  const rulesets = await stateRulesetConflicts(octokit, where, rules, ours);
  return {
    seen: [...onDefault.seen, ...onState.seen, ...rulesets.seen],
    conflicts: [...(plan ? [plan] : []), ...onDefault.conflicts, ...onState.conflicts, ...rulesets.conflicts],
    stateRuleTypes: rules.map((r) => r.type),
  };
}

/** A branch protection rule on the default branch adds to the ruleset; it conflicts only by requiring a Consort check from another app. */
async function defaultBranchProtection(octokit: GitHubClient, where: Where, defaultBranch: string): Promise<Found> {
  const rule = await legacyProtection(octokit, where.owner, where.repo, defaultBranch);
  if (!rule) return { seen: [], conflicts: [] };
  const seen = [`${defaultBranch}: a branch protection rule (${legacySettings(rule).join(", ") || "no settings"})`];
  const foreign = (rule.required_status_checks?.checks ?? []).filter(
    (c) => (CHECK_NAMES as readonly string[]).includes(c.context) && c.app_id !== null && c.app_id !== where.appId,
  );
  if (foreign.length === 0) return { seen, conflicts: [] };
  return {
    seen,
    conflicts: [
      {
        where: defaultBranch,
        problem: `the branch protection rule on ${defaultBranch} requires ${foreign.map((c) => `${c.context} from app ${c.app_id}`).join(", ")}, which only the Consort app (id ${where.appId}) posts, so no pull request can merge`,
        fix: `under Settings → Branches, edit the rule that matches ${defaultBranch}: remove those checks from "Require status checks to pass" (the ruleset "${DEFAULT_BRANCH_RULESET}" requires them from the app)`,
      },
    ],
  };
}

/** A branch protection rule on consort/state that refuses a direct update: the ruleset's bypass for the app does not lift it. */
async function stateBranchProtection(octokit: GitHubClient, { owner, repo, appId }: Where): Promise<Found> {
  const rule = await legacyProtection(octokit, owner, repo, STATE_BRANCH);
  if (!rule) return { seen: [], conflicts: [] };
  const seen = [`${STATE_BRANCH}: a branch protection rule (${legacySettings(rule).join(", ") || "no settings"})`];
  const appMayPush = rule.restrictions?.apps?.some((a) => a.id === appId) ?? false;
  const stops = legacySettings(rule).filter((s) => BLOCKING_ON_STATE.has(s) && !(s === "restrictions" && appMayPush));
  if (stops.length === 0) return { seen, conflicts: [] };
  return {
    seen,
    conflicts: [
      {
        where: STATE_BRANCH,
        problem: `a branch protection rule matches ${STATE_BRANCH} (${stops.join(", ")}); the app's bypass in the ruleset "${STATE_BRANCH_RULESET}" does not lift a branch protection rule, so GitHub refuses the app's writes and no track can move`,
        fix: `under Settings → Branches, change the pattern of the rule that matches ${STATE_BRANCH} so it no longer does, or delete it (for a rule made for that branch alone: gh api -X DELETE repos/${owner}/${repo}/branches/${encodeURIComponent(STATE_BRANCH)}/protection); the ruleset "${STATE_BRANCH_RULESET}" keeps the branch the app's alone`,
      },
    ],
  };
}

/** Rulesets other than Consort's (the organisation's among them) in force on consort/state, by ruleset: each that stops the app's update and that it may not bypass. */
async function stateRulesetConflicts(
  octokit: GitHubClient,
  where: Where,
  rules: readonly ActiveRule[],
  ours: ReadonlyArray<number | undefined>,
): Promise<Found> {
  const others = new Map<number, ActiveRule[]>();
  for (const rule of rules) {
    if (rule.ruleset_id === undefined || ours.includes(rule.ruleset_id)) continue;
    others.set(rule.ruleset_id, [...(others.get(rule.ruleset_id) ?? []), rule]);
  }
  const found: Found = { seen: [], conflicts: [] };
  for (const [id, applying] of others) {
    const first = applying[0]!;
    const organisation = first.ruleset_source_type === "Organization";
    const source =
      `${organisation ? "organisation" : (first.ruleset_source_type ?? "repository").toLowerCase()} ${first.ruleset_source ?? ""}`.trim();
    const types = applying.map((r) => r.type);
    found.seen.push(`${STATE_BRANCH}: ruleset ${id} of the ${source} (${types.join(", ")})`);
    const stops = types.filter((t) => !HARMLESS_ON_STATE.has(t));
    if (stops.length === 0) continue;
    const ruleset = await bypassOf(octokit, { ...where, id });
    if (ruleset.appBypasses) continue;
    const settings = organisation
      ? `https://github.com/organizations/${first.ruleset_source}/settings/rules/${id}`
      : `https://github.com/${where.owner}/${where.repo}/settings/rules/${id}`;
    found.conflicts.push({
      where: STATE_BRANCH,
      problem: `the ruleset "${ruleset.name ?? id}" of the ${source} applies ${stops.join(", ")} to ${STATE_BRANCH} ${ruleset.unreadable ? `and its bypass list cannot be read (${ruleset.unreadable})` : "and does not let the app bypass it"}, so GitHub refuses the app's writes and no track can move`,
      fix: `add the Consort app (GitHub App id ${where.appId}) to the bypass list of that ruleset, mode Always (${settings}), or exclude refs/heads/${STATE_BRANCH} from its target branches`,
    });
  }
  return found;
}

type Repository = Awaited<ReturnType<GitHubClient["rest"]["repos"]["get"]>>["data"];

/**
 * Rulesets are enforced on public repositories on every plan, and on private ones only on GitHub
 * Pro, Team and Enterprise: on GitHub Free they can be written but do nothing. GitHub shows the
 * plan only to the owner (an organisation's owners), so a plan it does not show is a conflict too.
 */
async function planEnforcement(octokit: GitHubClient, repository: Repository): Promise<ProtectionConflict | undefined> {
  const visibility = repository.visibility ?? (repository.private ? "private" : "public");
  if (visibility === "public") return undefined;
  const owner = repository.owner.login;
  const organisation = repository.owner.type === "Organization";
  let plan: string | undefined;
  try {
    plan = organisation
      ? (await octokit.rest.orgs.get({ org: owner })).data.plan?.name
      : (await octokit.rest.users.getByUsername({ username: owner })).data.plan?.name;
  } catch (error) {
    if (httpStatus(error) !== 403 && httpStatus(error) !== 404) throw error;
  }
  const upgrade = organisation ? "GitHub Team or Enterprise" : "GitHub Pro";
  if (plan === undefined)
    return {
      where: repository.full_name,
      problem: `${repository.full_name} is ${visibility}, and GitHub did not show the plan of ${owner}, so Consort cannot tell whether its rulesets are enforced (on GitHub Free they are not, and the gates would only advise)`,
      fix: organisation
        ? `run consort protect --check with the token of an owner of the organisation ${owner} (GitHub shows an organisation's plan only to its owners)`
        : `run consort protect --check with a token of ${owner} (GitHub shows a user's plan only to that user)`,
    };
  if (plan.toLowerCase() !== "free") return undefined;
  return {
    where: repository.full_name,
    problem: `${repository.full_name} is ${visibility} and ${owner} is on GitHub Free, where rulesets on private repositories are not enforced: the seven checks are not required and consort/state is not protected, whatever the rulesets say`,
    fix: `make ${repository.full_name} public, or move ${owner} to ${upgrade}; then run consort protect --check again`,
  };
}

type LegacyProtection = Awaited<ReturnType<GitHubClient["rest"]["repos"]["getBranchProtection"]>>["data"];

/** The classic branch protection that applies to `branch`, or undefined (GitHub answers 404 for none, or no such branch). */
async function legacyProtection(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  branch: string,
): Promise<LegacyProtection | undefined> {
  try {
    return (await octokit.rest.repos.getBranchProtection({ owner, repo, branch })).data;
  } catch (error) {
    if (httpStatus(error) === 404) return undefined;
    throw error;
  }
}

/** The settings a branch protection rule turns on, by GitHub's names. */
function legacySettings(p: LegacyProtection): string[] {
  const on = (value: { enabled?: boolean } | undefined) => value?.enabled === true;
  return [
    ...(p.required_status_checks ? ["required_status_checks"] : []),
    ...(p.required_pull_request_reviews ? ["required_pull_request_reviews"] : []),
    ...(p.restrictions ? ["restrictions"] : []),
    ...(on(p.lock_branch) ? ["lock_branch"] : []),
    ...(on(p.block_creations) ? ["block_creations"] : []),
    ...(on(p.required_linear_history) ? ["required_linear_history"] : []),
    ...(on(p.required_signatures) ? ["required_signatures"] : []),
    ...(on(p.required_conversation_resolution) ? ["required_conversation_resolution"] : []),
    ...(on(p.allow_force_pushes) ? ["allow_force_pushes"] : []),
    ...(on(p.allow_deletions) ? ["allow_deletions"] : []),
  ];
}

/** Whether the app bypasses ruleset `id` (of any level), with its name; fail closed when its bypass list cannot be read. */
async function bypassOf(
  octokit: GitHubClient,
  { owner, repo, id, appId }: { owner: string; repo: string; id: number; appId: number },
): Promise<{ name?: string; appBypasses: boolean; unreadable?: string }> {
  try {
    const { data } = await octokit.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: id, includes_parents: true });
    if (!data.bypass_actors)
      return {
        name: data.name,
        appBypasses: false,
        unreadable: "GitHub shows it only to those who may edit the ruleset",
      };
    // A bypass "for pull requests only" does not cover the app's direct writes.
    const appBypasses = data.bypass_actors.some(
      (a) => a.actor_type === "Integration" && a.actor_id === appId && a.bypass_mode !== "pull_request",
    );
    return { name: data.name, appBypasses };
  } catch (error) {
    const status = httpStatus(error);
    if (status !== 403 && status !== 404) throw error;
    return { appBypasses: false, unreadable: `${githubMessage(error)} (HTTP ${status})` };
  }
}
