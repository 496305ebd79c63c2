import { httpStatus, type GitHubClient as GitHub, type RepoRef } from "../github/client.js";
import { COMMIT_FILES_CAP, type ChangedFile, type Compared, type ListedCommit, type PushSource } from "./source.js";

/** The push reader's GitHub adapter: each read of the port is a REST request (compare, commits, contents, trees). */

export type Ref = RepoRef & { octokit: GitHub };

export function githubSource(ref: Ref): PushSource {
  return {
    compare: (base, head) => compareAll(ref, base, head),
    commitFiles: (sha) => commitFiles(ref, sha),
    fileAt: (path, at) => fileAt({ ...ref, path, ref: at }),
    tree: (sha) => treeAt(ref, sha),
  };
}

async function compareAll({ octokit, owner, repo }: Ref, base: string, head: string): Promise<Compared> {
  const commits: ListedCommit[] = [];
  let status = "";
  let listed: ChangedFile[] | undefined;
  let baseTree = "";
  let baseSha = "";
  let mergeBase = "";
  for (let page = 1; ; page++) {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
      owner,
      repo,
      basehead: `${base}...${head}`,
      per_page: 100,
      page,
    });
    status = data.status;
    if (page === 1) {
      listed = data.files?.map((f) => ({
        path: f.filename,
        status: f.status,
        ...(f.previous_filename ? { previousPath: f.previous_filename } : {}),
        ...(f.sha && f.status !== "removed" ? { blob: f.sha } : {}),
        ...(f.patch !== undefined ? { patch: f.patch } : {}),
      }));
      baseTree = data.base_commit.commit.tree.sha;
      baseSha = data.base_commit.sha;
      mergeBase = data.merge_base_commit.sha;
    }
    for (const c of data.commits)
      commits.push({
        sha: c.sha,
        parents: c.parents.map((p) => p.sha),
        message: c.commit.message,
        authorLogin: c.author?.login ?? null,
        ...(c.commit.tree?.sha ? { tree: c.commit.tree.sha } : {}),
      });
    if (data.commits.length < 100 || commits.length >= data.total_commits) break;
  }
  return { status, commits, files: (listed ?? []).map((f) => f.path), listed, baseTree, baseSha, mergeBase };
}

const commitPage = ({ octokit, owner, repo }: Ref, sha: string, page: number) =>
  octokit.request("GET /repos/{owner}/{repo}/commits/{ref}", { owner, repo, ref: sha, per_page: 100, page });

/** A commit's files from the commit API, every page (100 a page), up to GitHub's COMMIT_FILES_CAP. */
async function commitFiles(ref: Ref, sha: string): Promise<ChangedFile[]> {
  const files: ChangedFile[] = [];
  for (let page = 1; files.length < COMMIT_FILES_CAP; page++) {
    const listed = (await commitPage(ref, sha, page)).data.files ?? [];
    for (const f of listed)
      files.push({
        path: f.filename,
        status: f.status,
        ...(f.previous_filename ? { previousPath: f.previous_filename } : {}),
        ...(f.sha && f.status !== "removed" ? { blob: f.sha } : {}),
        ...(f.patch !== undefined ? { patch: f.patch } : {}),
      });
    if (listed.length < 100) break;
  }
  return files;
}

async function treeAt({ octokit, owner, repo }: Ref, sha: string) {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", {
    owner,
    repo,
    tree_sha: sha,
    recursive: "1",
  });
  const blobs = data.tree.flatMap((entry) =>
    entry.type === "blob" && entry.path && entry.sha ? [{ path: entry.path, sha: entry.sha }] : [],
  );
  return { sha: data.sha, blobs, truncated: data.truncated };
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

/** Where `head` leaves the default branch (their merge base): where a new branch's track starts. */
export async function forkPoint({
  octokit,
  owner,
  repo,
  defaultBranch,
  head,
}: Ref & { defaultBranch: string; head: string }): Promise<string> {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
    owner,
    repo,
    basehead: `${defaultBranch}...${head}`,
    per_page: 1,
  });
  return data.merge_base_commit.sha;
}
