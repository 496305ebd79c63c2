import type { GitHub, RepoRef } from "./github.js";

export type Ref = RepoRef & { octokit: GitHub };

/** A commit as GitHub's compare lists it: enough to walk the parent chain. */
export interface ListedCommit {
  sha: string;
  parents: string[];
  message: string;
  authorLogin: string | null;
  /** The commit's tree id, as compare lists it. */
  tree?: string;
}

/** A file of a compare, as GitHub lists it (page 1 only, 300 at most). */
interface ComparedFile {
  path: string;
  previousPath?: string;
  status: string;
  /** The file's blob at the compare's head; absent when it was removed there. */
  blob?: string;
  /** The diff text; GitHub leaves it out for a binary file or one too big to show. */
  patch?: string;
}

/** What compare/{base}...{head} says, every commit (100 a page) and the files of its first page. */
export interface Compared {
  status: string;
  commits: ListedCommit[];
  files: string[];
  /** The files as listed, undefined when the answer had no list. */
  listed: ComparedFile[] | undefined;
  baseTree: string;
  /** The commit `base` names (a branch's head when it names a branch), and the merge base. */
  baseSha: string;
  mergeBase: string;
}

export async function compareAll({ octokit, owner, repo }: Ref, base: string, head: string): Promise<Compared> {
  const commits: ListedCommit[] = [];
  let status = "";
  let listed: ComparedFile[] | undefined;
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

/** GitHub lists at most this many paths of one commit (in a push payload, and in the commit API). */
export const COMMIT_FILES_CAP = 3000;

const commitPage = ({ octokit, owner, repo }: Ref, sha: string, page: number) =>
  octokit.request("GET /repos/{owner}/{repo}/commits/{ref}", { owner, repo, ref: sha, per_page: 100, page });

/** A file of a commit, as the commit API lists it. */
export type CommitFile = NonNullable<Awaited<ReturnType<typeof commitPage>>["data"]["files"]>[number];

/** A commit's files from the commit API, every page (100 a page), up to GitHub's COMMIT_FILES_CAP. */
export async function commitFiles(ref: Ref, sha: string): Promise<CommitFile[]> {
  const files: CommitFile[] = [];
  for (let page = 1; files.length < COMMIT_FILES_CAP; page++) {
    const listed = (await commitPage(ref, sha, page)).data.files ?? [];
    files.push(...listed);
    if (listed.length < 100) break;
  }
  return files;
}
