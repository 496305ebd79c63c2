import { checkStates } from "../gates/checks.js";
import { githubMessage, httpStatus } from "../github/client.js";
import { frozenState, restoreSnapshot } from "../orchestrator/index.js";
import { TamperedStateError } from "../state/index.js";
import { branchOf } from "./delivery.js";
import { NEVER_MERGES } from "../config/branch-kind.js";
import { isTracksBranch, stateStoreFor, type EngineDeps } from "./track.js";

/**
 * What a merge queue's group may merge (the gates of docs/ARCHITECTURE.md, Gates, applied to a merge queue): the group's head is a
 * commit no track ever saw, so its checks pass only when every pull request in it is a track whose
 * checks all stand green on the PR head, and the group merges exactly that head's approved content:
 * the PR head is an ancestor of the group head, and no frozen file of the track changed between
 * them (a later entry of the queue, or a conflict resolution, could change it unseen).
 */

/** `gh-readonly-queue/<base>/pr-<n>-<sha>`: the branch a merge queue builds a group on. */
const QUEUE_REF = /^(?:refs\/heads\/)?gh-readonly-queue\/(.+)\/pr-(\d+)-[0-9a-f]{40}$/;

/** GitHub lists at most this many files of a compare: a longer list cannot show a frozen file unchanged. */
const COMPARE_FILES_CAP = 300;

export interface MergeGroup {
  headSha: string;
  headRef: string;
  baseRef: string;
}

export type GroupVerdict = { ok: true; pulls: number[] } | { ok: false; problems: string[] };

/** The PR number a queue branch was built for; undefined for any other ref. */
function queuedPull(ref: string): { base: string; number: number } | undefined {
  const match = QUEUE_REF.exec(ref);
  return match ? { base: match[1]!, number: Number(match[2]) } : undefined;
}

/**
 * The pull requests a group merges: the one its branch names and every entry ahead of it in the
 * queue whose group head the group contains (GitHub builds each entry on the one before).
 */
async function pullsInGroup(deps: EngineDeps, group: MergeGroup, base: string, own: number): Promise<number[]> {
  const { octokit, repo } = deps;
  const { data: refs } = await octokit.rest.git.listMatchingRefs({
    owner: repo.owner,
    repo: repo.repo,
    ref: `heads/gh-readonly-queue/${base}/`,
  });
  const pulls = new Set<number>([own]);
  for (const ref of refs) {
    const entry = queuedPull(ref.ref);
    if (!entry || pulls.has(entry.number)) continue;
    const sha = ref.object.sha;
    if (sha === group.headSha || (await contains(deps, sha, group.headSha))) pulls.add(entry.number);
  }
  return [...pulls].sort((a, b) => a - b);
}

/** Whether `head` holds `ancestor`, as GitHub's compare says (404: no common history). */
async function contains(deps: EngineDeps, ancestor: string, head: string): Promise<boolean> {
  return ["ahead", "identical"].includes((await compareFiles(deps, ancestor, head)).status);
}

async function compareFiles(
  deps: EngineDeps,
  base: string,
  head: string,
): Promise<{ status: string; files: string[] }> {
  try {
    const { data } = await deps.octokit.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
      owner: deps.repo.owner,
      repo: deps.repo.repo,
      basehead: `${base}...${head}`,
      per_page: 1,
    });
    return { status: data.status, files: (data.files ?? []).map((f) => f.filename) };
  } catch (error) {
    if (httpStatus(error) === 404) return { status: "unrelated", files: [] };
    throw error;
  }
}

/** Why pull request `number` may not merge in this group; empty when it may. */
async function pullProblems(deps: EngineDeps, group: MergeGroup, number: number): Promise<string[]> {
  const { octokit, repo } = deps;
  const { data: pull } = await octokit.rest.pulls.get({ owner: repo.owner, repo: repo.repo, pull_number: number });
  const name = `#${number} (${pull.head.ref})`;
  if (pull.head.repo?.full_name !== repo.fullName)
    return [`${name} comes from a fork: Consort gates only branches of this repository (push the branch here).`];
  if (pull.base.ref !== repo.defaultBranch)
    return [`${name} goes into ${pull.base.ref}, not ${repo.defaultBranch}: Consort gates only the default branch.`];
  const branch = pull.head.ref;
  // No check goes on a PR head from here: the group's own checks carry the verdict.
  const found = await branchOf(deps, branch, undefined);
  if (!found) return [`${name} is not a Consort track.`];
  if (found.kind === "experiment") return [`${name} is an experiment: ${NEVER_MERGES}.`];
  const { trackId } = found;
  let state;
  try {
    state = await stateStoreFor(deps).read(trackId);
  } catch (error) {
    if (error instanceof TamperedStateError) return [`${name}: its state file failed verification (${error.message}).`];
    throw error;
  }
  if (!state || !isTracksBranch(state, branch))
    return [`${name} is not a Consort track: no state on consort/state for ${branch}.`];
  const snapshot = restoreSnapshot(state.snapshot);
  const head = snapshot.context.head;
  if (head !== pull.head.sha)
    return [
      `${name}: its head ${pull.head.sha.slice(0, 7)} is not the track's head ${head.slice(0, 7)}; wait for Consort to show the PR's checks, then queue it again.`,
    ];
  const problems = checkStates(snapshot)
    .filter((check) => check.status !== "success")
    .map((check) => `${name}: ${check.name} is ${check.status} (${check.title}).`);
  const { data: schema } = await octokit.rest.checks.listForRef({
    owner: repo.owner,
    repo: repo.repo,
    ref: head,
    app_id: deps.services.appId,
    check_name: "consort/schema",
    filter: "latest",
  });
  const run = schema.check_runs[0];
  if (run?.status !== "completed" || run.conclusion !== "success")
    problems.push(`${name}: consort/schema is not green on the PR head.`);
  const compared = await compareFiles(deps, head, group.headSha);
  if (!["ahead", "identical"].includes(compared.status))
    return [
      ...problems,
      `${name}: the group does not contain the approved head ${head.slice(0, 7)} (compare says ${compared.status}); queue the PR with the merge method "Merge commit" so the approved commits are merged as they are.`,
    ];
  if (compared.files.length >= COMPARE_FILES_CAP)
    return [
      ...problems,
      `${name}: the group changes ${COMPARE_FILES_CAP} or more files after the PR head; GitHub lists no more, so the frozen files cannot be shown unchanged. Queue it in a smaller group.`,
    ];
  const frozen = frozenState(snapshot.context);
  const paths = new Set([...Object.keys(frozen.gated), ...Object.keys(frozen.tests)]);
  for (const path of compared.files.filter((file) => paths.has(file)))
    problems.push(
      `${name}: the group changes ${path}, frozen by the track, after the PR head: its approval does not cover it.`,
    );
  return problems;
}

/** The verdict on a merge group: every PR it merges, judged; any fact Consort cannot read fails it with the reason. */
export async function judgeMergeGroup(deps: EngineDeps, group: MergeGroup): Promise<GroupVerdict> {
  const queued = queuedPull(group.headRef);
  const base = group.baseRef.replace(/^refs\/heads\//, "");
  if (!queued) return { ok: false, problems: [`${group.headRef} is not a merge queue branch Consort can read.`] };
  if (base !== deps.repo.defaultBranch)
    return { ok: false, problems: [`The group merges into ${base}: Consort gates only ${deps.repo.defaultBranch}.`] };
  try {
    const numbers = await pullsInGroup(deps, group, base, queued.number);
    const problems: string[] = [];
    for (const number of numbers) problems.push(...(await pullProblems(deps, group, number)));
    return problems.length > 0 ? { ok: false, problems } : { ok: true, pulls: numbers };
  } catch (error) {
    return { ok: false, problems: [`Consort could not read the group from GitHub: ${githubMessage(error)}`] };
  }
}
