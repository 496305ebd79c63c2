import { pathsToRead, runnerPathsToRead } from "../orchestrator/index.js";
import type { ChangedPath, PushedCommit, PushEvent, TrackEvent, TrackSnapshot } from "../orchestrator/types.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { httpStatus, type GitHub, type RepoRef } from "./github.js";

/** A pushed commit as the `push` payload describes it (GitHub's own record of the push). */
export interface PayloadCommit {
  id: string;
  message: string;
  author: { username?: string | undefined };
  added: string[];
  removed: string[];
  modified: string[];
}

/**
 * Pushes become the machine's `push` event the same way for the `push` webhook and for
 * `consort reconcile` (which finds pushes whose webhook was lost): each commit's changed paths and
 * the text, after that commit, of every path the machine reads (design artifacts, test files).
 * Only changed paths are fetched, so a commit costs one request per changed artifact or test file.
 */

/**
 * The push event for a branch now at `push.after`, or undefined when the track already stands
 * there (a redelivery). A branch reset to the last accepted commit is an event: it clears a refusal.
 */
export function pushEvent(
  snapshot: TrackSnapshot,
  push: Omit<PushEvent, "type" | "at">,
  at: string,
): PushEvent | undefined {
  const known = snapshot.context.rejectedHead?.sha ?? snapshot.context.head;
  if (push.after === known && push.commits.length === 0) return undefined;
  return { type: "push", at, ...push };
}

/** A track whose branch was deleted is abandoned (unless it already ended). */
export function branchDeletedEvent(
  snapshot: TrackSnapshot,
  deleted: { branch: string; by: string; noticed?: string },
  at: string,
): Extract<TrackEvent, { type: "abandon" }> | undefined {
  if (snapshot.stage === "done" || snapshot.stage === "abandoned") return undefined;
  const reason = `branch ${deleted.branch} was deleted${deleted.noticed ? ` (${deleted.noticed})` : ""}`;
  return { type: "abandon", at, by: deleted.by, reason };
}

/** Turn a push payload's commits into what the machine classifies. */
export async function pushedCommits({
  octokit,
  owner,
  repo,
  commits,
  config,
}: RepoRef & { octokit: GitHub; commits: PayloadCommit[]; config: ConsortConfig }): Promise<PushedCommit[]> {
  const result: PushedCommit[] = [];
  for (const commit of commits) {
    const changes: ChangedPath[] = [
      ...commit.added.map((path) => ({ path, status: "added" as const })),
      ...commit.modified.map((path) => ({ path, status: "modified" as const })),
      ...commit.removed.map((path) => ({ path, status: "removed" as const })),
    ];
    result.push({
      sha: commit.id,
      authorLogin: commit.author.username ?? null,
      message: commit.message,
      changes,
      files: await filesToRead({ octokit, owner, repo, sha: commit.id, changes, config }),
    });
  }
  return result;
}

/**
 * The commits on a branch after `known`, up to `head`, as the push webhook would have carried them:
 * `forced` when the branch no longer contains `known` (rewritten, or reset behind it).
 */
export async function commitsSince({
  octokit,
  owner,
  repo,
  known,
  head,
  config,
}: RepoRef & { octokit: GitHub; known: string; head: string; config: ConsortConfig }): Promise<{
  forced: boolean;
  commits: PushedCommit[];
}> {
  const { data: compare } = await octokit.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
    owner,
    repo,
    basehead: `${known}...${head}`,
    per_page: 100,
  });
  const forced = compare.status === "diverged" || compare.status === "behind";
  const commits: PushedCommit[] = [];
  for (const commit of compare.status === "behind" ? [] : compare.commits) {
    const { data: detail } = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}", {
      owner,
      repo,
      ref: commit.sha,
    });
    const changes: ChangedPath[] = (detail.files ?? []).map((f) => ({
      path: f.filename,
      status: f.status as ChangedPath["status"],
      ...(f.previous_filename ? { previousPath: f.previous_filename } : {}),
    }));
    // The runner's configuration is compared before and after the commit (runnerConfigChanges):
    // its files' texts at the first parent, none for a root commit.
    const parent = detail.parents[0]?.sha;
    const before: Record<string, string | null> = {};
    for (const path of runnerPathsToRead(changes))
      before[path] = parent ? await fileAt({ octokit, owner, repo, path, ref: parent }) : null;
    commits.push({
      sha: commit.sha,
      authorLogin: commit.author?.login ?? null,
      message: commit.commit.message,
      changes,
      files: await filesToRead({ octokit, owner, repo, sha: commit.sha, changes, config }),
      before,
    });
  }
  return { forced, commits };
}

/** The text after commit `sha` of each changed path the machine reads; null where the commit removed it. */
async function filesToRead({
  octokit,
  owner,
  repo,
  sha,
  changes,
  config,
}: RepoRef & { octokit: GitHub; sha: string; changes: ChangedPath[]; config: ConsortConfig }): Promise<
  Record<string, string | null>
> {
  const removed = new Set(changes.filter((c) => c.status === "removed").map((c) => c.path));
  const files: Record<string, string | null> = {};
  for (const path of pathsToRead(changes, config))
    files[path] = removed.has(path) ? null : await fileAt({ octokit, owner, repo, path, ref: sha });
  return files;
}

/** The text of `path` at `ref`; null when it does not exist there. */
export async function fileAt({
  octokit,
  owner,
  repo,
  path,
  ref,
}: RepoRef & { octokit: GitHub; path: string; ref: string }): Promise<string | null> {
  try {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { owner, repo, path, ref });
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return null;
    return Buffer.from(data.content, "base64").toString("utf8");
  } catch (error) {
    if (httpStatus(error) === 404) return null;
    throw error;
  }
}
