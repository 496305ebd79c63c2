import { createHash } from "node:crypto";
import { httpStatus, type GitHubClient } from "../github/client.js";
import { canonicalJson } from "../state/seal.js";
import { COMMENT_LIMIT, MAX_ACTIONS, OUTPUT_LIMIT, TITLE_LIMIT, type RenderedCheckRun } from "./checks.js";
import { utf8Bytes } from "./markdown.js";
import { stickyMarker } from "./render.js";

/**
 * Writing check runs and the sticky comment, each only when what it shows changed: a webhook
 * storm then costs one listing and no writes. Only this app's runs and comments are touched.
 *
 * A check that only holds a place (a gate not reached, a build not started: `placeholder`) is not
 * created on a head that has no run of it: branch protection reads required checks on the PR
 * head, and a missing required check blocks the merge exactly as an in-progress one does
 * ("Expected — Waiting for status to be reported"). A waiting check that says something (what a
 * gate waits to have approved, the test the build is on, evidence that ran unconfined) is
 * written, for the people who read it. Where a run of ours exists, a waiting check still
 * replaces it, so a success never outlives the state that earned it.
 */

const CONTENT_MARKER = /<!-- consort:content ([0-9a-f]{64}) -->\s*$/;

/** The hash of everything a run shows, including buttons (which GitHub's listing does not return). */
function contentHash(run: RenderedCheckRun): string {
  const { name: _name, ...shown } = run;
  return createHash("sha256").update(canonicalJson(shown)).digest("hex");
}

interface ExistingRun {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  output: { summary: string | null };
}

/** `absent`: a placeholder left unwritten on a head that has no run of that name (see above). */
export type WriteAction = "created" | "updated" | "unchanged" | "absent";
export type WrittenCheckRun =
  { name: string; action: Exclude<WriteAction, "absent">; id: number } | { name: string; action: "absent" };

export interface CheckRunTarget {
  owner: string;
  repo: string;
  /** The app's id: only its runs are read, since only it can update them and only they satisfy the rulesets. */
  appId: number;
  headSha: string;
  /** When the app started these runs, sent with each run it creates (an experiment's last push is read back from it). */
  startedAt?: string;
  /** The integrator's reference sent with each run it creates (an experiment's runs carry its branch). */
  externalId?: string;
}

function unchanged(existing: ExistingRun, run: RenderedCheckRun, hash: string): boolean {
  const marker = CONTENT_MARKER.exec(existing.output.summary ?? "")?.[1];
  const conclusion = run.status === "completed" ? run.conclusion : null;
  return marker === hash && existing.status === run.status && (existing.conclusion ?? null) === conclusion;
}

/** What GitHub would refuse in a check run's output and buttons, as it counts them. */
function outputProblems(run: RenderedCheckRun): string[] {
  const problems: string[] = [];
  for (const field of ["summary", "text"] as const) {
    const value = run.output[field];
    if (value !== undefined && utf8Bytes(value) > OUTPUT_LIMIT)
      problems.push(`output.${field} is ${utf8Bytes(value)} bytes, more than GitHub's ${OUTPUT_LIMIT}`);
  }
  if (run.output.title.length > TITLE_LIMIT)
    problems.push(`output.title is ${run.output.title.length} characters, more than ${TITLE_LIMIT}`);
  if (run.actions.length > MAX_ACTIONS)
    problems.push(`${run.actions.length} buttons, more than GitHub's ${MAX_ACTIONS}`);
  return problems;
}

async function apply(
  octokit: GitHubClient,
  target: CheckRunTarget,
  existing: ExistingRun | undefined,
  run: RenderedCheckRun,
): Promise<WrittenCheckRun> {
  if (!existing && run.status === "in_progress" && run.placeholder) return { name: run.name, action: "absent" };
  const hash = contentHash(run);
  if (existing && unchanged(existing, run, hash)) return { name: run.name, action: "unchanged", id: existing.id };
  const summary = `${run.output.summary}\n\n<!-- consort:content ${hash} -->`;
  // GitHub refuses (422) what passes its limits: refuse here, before sending, with the reason.
  const refused = outputProblems({ ...run, output: { ...run.output, summary } });
  if (refused.length > 0) throw new Error(`${run.name}: ${refused.join("; ")} (render with truncate())`);
  const output = { ...run.output, summary };
  const state =
    run.status === "completed"
      ? { status: "completed" as const, conclusion: run.conclusion }
      : { status: "in_progress" as const };
  const { owner, repo } = target;
  // GitHub cannot move a completed run back to in progress: a new run supersedes it instead.
  if (existing && !(existing.status === "completed" && run.status === "in_progress")) {
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: existing.id,
      ...state,
      output,
      actions: run.actions,
    });
    return { name: run.name, action: "updated", id: existing.id };
  }
  const { data } = await octokit.rest.checks.create({
    owner,
    repo,
    name: run.name,
    head_sha: target.headSha,
    ...(target.startedAt ? { started_at: target.startedAt } : {}),
    ...(target.externalId ? { external_id: target.externalId } : {}),
    ...state,
    output,
    actions: run.actions,
  });
  return { name: run.name, action: "created", id: data.id };
}

async function listOurRuns(
  octokit: GitHubClient,
  target: CheckRunTarget,
  checkName?: string,
): Promise<Map<string, ExistingRun>> {
  const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
    owner: target.owner,
    repo: target.repo,
    ref: target.headSha,
    app_id: target.appId,
    filter: "latest",
    per_page: 100,
    ...(checkName ? { check_name: checkName } : {}),
  });
  const byName = new Map<string, ExistingRun>();
  // `filter=latest` gives the newest run of each name; keep the first seen in case of duplicates.
  for (const r of runs as unknown as ExistingRun[]) if (!byName.has(r.name)) byName.set(r.name, r);
  return byName;
}

/** Create or update one check run of `headSha`, only when its content changed. */
export async function writeCheckRun(
  octokit: GitHubClient,
  target: CheckRunTarget,
  run: RenderedCheckRun,
): Promise<WrittenCheckRun> {
  const existing = await listOurRuns(octokit, target, run.name);
  return apply(octokit, target, existing.get(run.name), run);
}

/** Create or update several check runs of `headSha` with one listing, each only when its content changed. */
export async function writeCheckRuns(
  octokit: GitHubClient,
  target: CheckRunTarget,
  runs: RenderedCheckRun[],
): Promise<WrittenCheckRun[]> {
  const existing = await listOurRuns(octokit, target);
  const written: WrittenCheckRun[] = [];
  for (const run of runs) written.push(await apply(octokit, target, existing.get(run.name), run));
  return written;
}

export interface StickyCommentTarget {
  owner: string;
  repo: string;
  issueNumber: number;
  trackId: string;
  /** Comments count as ours only when this app made them: anyone can paste the marker. */
  appId: number;
  /** The app's bot login (`my-app[bot]`), accepted too when GitHub omits `performed_via_github_app`. */
  botLogin?: string;
}

interface IssueComment {
  id: number;
  body?: string;
  user: { login: string } | null;
  performed_via_github_app?: { id: number } | null;
}

/** What a process remembers of a sticky comment it found by listing: its id and the body it last wrote or saw. */
export type RememberedComments = Map<string, { id: number; body: string }>;

/**
 * Keep exactly ONE Consort comment per track on a PR: update it when its body changed, create it
 * when missing, and delete duplicates a race between replicas may have left.
 *
 * With `remembered`, a comment this process found by listing (a comment id is never reused, and
 * only its author's app may edit it as ours) takes a changed body by one update, without the
 * listing: a comment deleted since answers 404 and is looked for again. A body that did not change
 * is still checked against the listing (a person may have edited the comment), and a comment just
 * created is not remembered, so the next listing finds a duplicate a race created.
 */
export async function upsertStickyComment(
  octokit: GitHubClient,
  target: StickyCommentTarget,
  body: string,
  remembered?: RememberedComments,
): Promise<{ action: Exclude<WriteAction, "absent">; id: number; deleted: number[] }> {
  const { owner, repo, issueNumber } = target;
  const marker = stickyMarker(target.trackId);
  if (!body.startsWith(marker)) throw new Error(`The sticky comment body must start with its marker ${marker}`);
  if (utf8Bytes(body) > COMMENT_LIMIT)
    throw new Error(
      `the sticky comment is ${utf8Bytes(body)} bytes, more than GitHub's ${COMMENT_LIMIT} (render with truncate())`,
    );
  const key = `${owner}/${repo}#${issueNumber} ${target.trackId}`;
  const known = remembered?.get(key);
  remembered?.delete(key);
  if (known && known.body !== body) {
    try {
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: known.id, body });
      remembered?.set(key, { id: known.id, body });
      return { action: "updated", id: known.id, deleted: [] };
    } catch (error) {
      if (httpStatus(error) !== 404 && httpStatus(error) !== 410) throw error;
    }
  }
  const comments = (await octokit.paginate(octokit.rest.issues.listComments, {
    owner,
    repo,
    issue_number: issueNumber,
    per_page: 100,
  })) as IssueComment[];
  const ours = comments.filter(
    (c) =>
      (c.body ?? "").startsWith(marker) &&
      (c.performed_via_github_app?.id === target.appId ||
        (target.botLogin !== undefined && c.user?.login === target.botLogin)),
  );
  const [keep, ...duplicates] = ours;
  const deleted: number[] = [];
  for (const extra of duplicates) {
    await octokit.rest.issues.deleteComment({ owner, repo, comment_id: extra.id });
    deleted.push(extra.id);
  }
  if (keep && keep.body === body) {
    remembered?.set(key, { id: keep.id, body });
    return { action: "unchanged", id: keep.id, deleted };
  }
  if (keep) {
    await octokit.rest.issues.updateComment({ owner, repo, comment_id: keep.id, body });
    remembered?.set(key, { id: keep.id, body });
    return { action: "updated", id: keep.id, deleted };
  }
  const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body });
  return { action: "created", id: data.id, deleted };
}
