import type { ConsortConfig } from "../config/consort-config.js";
import { openPullRequestFor } from "../github/pull-request.js";
import { httpStatus } from "../github/client.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { experimentRunId, refuseExperiment, showExperimentChecks, type ExperimentView } from "../app/checks.js";
import { TamperedStateError } from "../state/index.js";
import {
  breakingFindings,
  compareBranches,
  sanitiseBranchName,
  type BranchProvider,
  type DatabaseBranch,
} from "../substrate/index.js";
import { stateStoreFor, type EngineDeps } from "./track.js";

/**
 * Experiments (issue #37): a branch under `experiments.prefix` with its own database branch, no
 * lane, no gates, never merging. Consort keeps no state file for one: each fact lives where it is
 * made, once. Git says which experiments exist and where each started; the database provider
 * keeps each database branch and its parent; and the last push is the `started_at` of the
 * consort/schema run the app creates on the experiment's new head (only the app writes its runs,
 * and GitHub keeps them per commit), so a push costs no write to the shared consort/state branch.
 */

const DAY_MS = 86_400_000;

/** An experiment branch as git has it. */
interface ExperimentRef {
  branch: string;
  head: string;
}

/** The database branch an experiment pairs with: the tracks' rule, so `consort db` and the MCP tools find it by the git name. */
const databaseBranchOf = (branch: string) => sanitiseBranchName(branch);

/**
 * An experiment's create or push: sweep the repository's expired experiments, fork this one's
 * database branch if it has none (refused beyond `experiments.max`), and, when the head is the
 * experiment's own commit (`ownHead`: a check run belongs to a commit, and a head shared with
 * the branch it started from carries that branch's checks), show the seven checks on it.
 */
export async function showExperiment(
  deps: EngineDeps,
  { branch, head, config, ownHead }: { branch: string; head: string; config: ConsortConfig; ownHead: boolean },
): Promise<void> {
  const provider = await deps.services.openProvider(config.database);
  try {
    const root = await provider.rootBranch();
    const experiments = await experimentRefs(deps, config);
    await dropExpired(deps, config, provider, experiments);
    const database = databaseBranchOf(branch);
    let info = await provider.getBranch(database);
    if (!info) {
      const holding = await holdingDatabases(provider, experiments, branch);
      if (holding.length >= config.experiments.max) {
        deps.log.warn(
          { branch, max: config.experiments.max },
          `experiment ${branch} refused: ${holding.length} experiments hold a database branch (experiments.max)`,
        );
        if (ownHead) await refuseExperiment(targetOf(deps, head), branch, config.experiments.max, holding);
        return;
      }
      const parent = await parentDatabaseOf(deps, branch, head, root);
      info = await provider.createBranch(database, { from: parent });
    }
    if (!ownHead) return;
    const now = deps.services.clock();
    const view: ExperimentView = {
      branch,
      databaseBranch: database,
      parentDatabaseBranch: info.parent ?? root,
      expiresAt: new Date(now.getTime() + config.experiments.ttlDays * DAY_MS).toISOString(),
      ttlDays: config.experiments.ttlDays,
      schema: await schemaOf(provider, info, root),
    };
    await showExperimentChecks(targetOf(deps, head), view, now.toISOString());
  } finally {
    await provider.close();
  }
}

/** An experiment's branch was deleted: its database branch is dropped (one already gone is what was wanted). */
export async function dropExperiment(deps: EngineDeps, { branch, config }: { branch: string; config: ConsortConfig }) {
  const provider = await deps.services.openProvider(config.database);
  try {
    const database = databaseBranchOf(branch);
    if (await provider.getBranch(database)) await provider.deleteBranch(database);
  } finally {
    await provider.close();
  }
}

/**
 * Drop the database branch of every experiment idle longer than `experiments.ttlDays`, with a
 * comment on its open pull request saying so and how to get it back. Asked on every experiment's
 * event and by `consort reconcile` (which can run on a schedule), as a lost cycle's timeout is.
 * Returns the experiments whose database branch it dropped.
 */
export async function sweepExperiments(deps: EngineDeps, config: ConsortConfig): Promise<string[]> {
  const experiments = await experimentRefs(deps, config);
  // No experiment, nothing to pay for: the database is not opened.
  if (experiments.length === 0) return [];
  const provider = await deps.services.openProvider(config.database);
  try {
    return await dropExpired(deps, config, provider, experiments);
  } finally {
    await provider.close();
  }
}

async function dropExpired(
  deps: EngineDeps,
  config: ConsortConfig,
  provider: BranchProvider,
  experiments: ExperimentRef[],
): Promise<string[]> {
  if (experiments.length === 0) return [];
  const live = new Map((await provider.listBranches()).map((b) => [b.name, b]));
  const now = deps.services.clock().getTime();
  const dropped: string[] = [];
  for (const experiment of experiments) {
    const info = live.get(databaseBranchOf(experiment.branch));
    if (!info) continue;
    const lastPush = (await lastPushOf(deps, experiment)) ?? info.createdAt;
    const since = lastPush === undefined ? Number.NaN : Date.parse(lastPush);
    // No time Consort can trust is no reason to keep paying for the branch: fail closed on cost.
    if (!Number.isNaN(since) && now - since <= config.experiments.ttlDays * DAY_MS) continue;
    await provider.deleteBranch(info.name);
    dropped.push(experiment.branch);
    deps.log.info({ branch: experiment.branch, lastPush }, `experiment ${experiment.branch} expired`);
    const pull = await openPullRequestFor(deps, experiment.branch);
    if (pull)
      await deps.octokit.rest.issues.createComment({
        owner: deps.repo.owner,
        repo: deps.repo.repo,
        issue_number: pull.number,
        body: expiredComment(experiment.branch, info, config.experiments.ttlDays, lastPush),
      });
  }
  return dropped;
}

function expiredComment(branch: string, info: DatabaseBranch, ttlDays: number, lastPush: string | undefined): string {
  return [
    `**Experiment \`${branch}\` expired**: its database branch \`${info.name}\` was dropped, because nobody pushed to \`${branch}\` for ${ttlDays} days${lastPush ? ` (last push ${lastPush})` : ""}; experiments.ttlDays in .github/consort.yml sets how long.`,
    `**To get it back**: push a commit to \`${branch}\`. Consort forks \`${info.name}\` again from \`${info.parent ?? "the root branch"}\`; whatever you had migrated or written on it is gone, so run your migrations again.`,
  ].join("\n\n");
}

/** Every branch under `experiments.prefix`, with its head. */
async function experimentRefs(deps: EngineDeps, config: ConsortConfig): Promise<ExperimentRef[]> {
  const { data } = await deps.octokit.rest.git.listMatchingRefs({
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    ref: `heads/${config.experiments.prefix}`,
  });
  return data
    .filter((ref) => ref.object.type === "commit")
    .map((ref) => ({ branch: ref.ref.slice("refs/heads/".length), head: ref.object.sha }));
}

/** The other experiments that hold a database branch now: what `experiments.max` counts. */
async function holdingDatabases(
  provider: BranchProvider,
  experiments: ExperimentRef[],
  branch: string,
): Promise<string[]> {
  const live = new Set((await provider.listBranches()).map((b) => b.name));
  return experiments
    .map((e) => e.branch)
    .filter((b) => b !== branch && live.has(databaseBranchOf(b)))
    .sort();
}

/** When the app last showed the experiment's checks on its head: its last push. */
async function lastPushOf(deps: EngineDeps, experiment: ExperimentRef): Promise<string | undefined> {
  const { data } = await deps.octokit.rest.checks.listForRef({
    owner: deps.repo.owner,
    repo: deps.repo.repo,
    ref: experiment.head,
    app_id: deps.services.appId,
    check_name: "consort/schema",
    filter: "latest",
  });
  return data.check_runs.find((run) => run.external_id === experimentRunId(experiment.branch))?.started_at ?? undefined;
}

/**
 * The database branch an experiment forks from: the default branch's, unless it started from a
 * live track's branch (it holds commits of that track that the default branch does not), so a
 * spike sees the track's schema. Of several, the track it shares the newest commit with.
 */
async function parentDatabaseOf(deps: EngineDeps, branch: string, head: string, root: string): Promise<string> {
  const own = (await compare(deps, deps.repo.defaultBranch, head))?.commits ?? [];
  if (own.length === 0) return root;
  const store = stateStoreFor(deps);
  let best: { index: number; database: string } | undefined;
  for (const trackId of await store.list()) {
    let state;
    try {
      state = await store.read(trackId);
    } catch (error) {
      // A track whose state cannot be trusted is no parent to fork from.
      if (error instanceof TamperedStateError) continue;
      throw error;
    }
    if (!state || state.branch === branch) continue;
    const snapshot = restoreSnapshot(state.snapshot);
    if (snapshot.stage === "done" || snapshot.stage === "abandoned") continue;
    const shared = await compare(deps, state.branch, head);
    const index = shared ? own.indexOf(shared.mergeBase) : -1;
    if (index >= 0 && (!best || index > best.index)) best = { index, database: snapshot.context.databaseBranch };
  }
  return best?.database ?? root;
}

/** GitHub's compare of `base...head`: the commits head holds that base does not (oldest first) and their merge base; undefined when unrelated or gone. */
async function compare(
  deps: EngineDeps,
  base: string,
  head: string,
): Promise<{ commits: string[]; mergeBase: string } | undefined> {
  try {
    const { data } = await deps.octokit.rest.repos.compareCommitsWithBasehead({
      owner: deps.repo.owner,
      repo: deps.repo.repo,
      basehead: `${base}...${head}`,
      per_page: 250,
    });
    return { commits: data.commits.map((c) => c.sha), mergeBase: data.merge_base_commit.sha };
  } catch (error) {
    if (httpStatus(error) === 404) return undefined;
    throw error;
  }
}

/** The experiment's schema against its parent, from the catalogs; a comparison that fails is a failed check with the reason. */
async function schemaOf(
  provider: BranchProvider,
  info: DatabaseBranch,
  root: string,
): Promise<ExperimentView["schema"]> {
  try {
    const comparison = await compareBranches(provider, info.name, info.parent ?? root);
    return {
      state: "ready",
      diffMarkdown: comparison.markdown,
      breaking: breakingFindings(comparison),
      reason:
        "Compared as the database branch stands now: migrate it with your migrate command on `consort db url <branch>`, then push, and this check shows the result.",
    };
  } catch (error) {
    return {
      state: "failed",
      reason: `The schema diff of \`${info.name}\` could not be computed: ${(error as Error).message}. Consort fails closed; it is computed again on the next push.`,
    };
  }
}

const targetOf = (deps: EngineDeps, headSha: string) => ({
  octokit: deps.octokit,
  owner: deps.repo.owner,
  repo: deps.repo.repo,
  appId: deps.services.appId,
  headSha,
});
