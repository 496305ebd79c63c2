import { pathsToRead } from "../orchestrator/index.js";
import type { ChangedPath, PushedCommit } from "../orchestrator/types.js";
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
 * Turn a push's commits into what the machine classifies: each commit's changed paths and the
 * text, after that commit, of every path the machine reads (design artifacts, test files). Only
 * changed paths are fetched, so a push costs one request per changed artifact or test file.
 */
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
    const files: Record<string, string | null> = {};
    for (const path of pathsToRead(changes, config)) {
      files[path] = commit.removed.includes(path) ? null : await fileAt({ octokit, owner, repo, path, ref: commit.id });
    }
    result.push({
      sha: commit.id,
      authorLogin: commit.author.username ?? null,
      message: commit.message,
      changes,
      files,
    });
  }
  return result;
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
