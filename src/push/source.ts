/**
 * The port every push is read through (as release-please's `Scm`): what git says of a range of
 * commits, whoever holds the repository. The app reads it from GitHub's REST API (github.ts), the
 * CLI from the checkout's own git (git.ts); the reading and judging above it (read.ts, rebase.ts,
 * then the machine) is one code, so the local rehearsal and the app reach the same verdicts.
 */

/** A commit as a compare lists it: enough to walk the parent chain. */
export interface ListedCommit {
  sha: string;
  parents: string[];
  message: string;
  /** The GitHub login of the commit's author, where its address tells one (null: unknown). */
  authorLogin: string | null;
  /** The commit's tree id. */
  tree?: string;
}

/** A changed file, as a compare or a commit lists it. */
export interface ChangedFile {
  path: string;
  previousPath?: string;
  /** GitHub's words for a change. */
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";
  /** The file's blob after the change; absent when it was removed. */
  blob?: string;
  /** The diff's hunks (from the first `@@`); absent for a binary file or one too big to show. */
  patch?: string;
}

/** How `head` stands to `base`: every commit reachable from head and not from base, and the files it changed. */
export interface Compared {
  /** ahead, behind, diverged or identical. */
  status: string;
  /** Oldest first. */
  commits: ListedCommit[];
  files: string[];
  /** The files changed since the merge base, as listed (at most COMPARE_FILES_CAP); undefined when there is no list. */
  listed: ChangedFile[] | undefined;
  baseTree: string;
  /** The commit `base` names (a branch's head when it names a branch), and the merge base. */
  baseSha: string;
  mergeBase: string;
}

/** The blobs of a commit's whole tree. */
export interface TreeRead {
  /** The tree's own id. */
  sha: string;
  blobs: Array<{ path: string; sha: string }>;
  /** The listing is incomplete (GitHub stops listing a very large tree). */
  truncated: boolean;
}

export interface PushSource {
  /** `base...head`: the commits on head since it left base, and the files changed since their merge base. */
  compare(base: string, head: string): Promise<Compared>;
  /** What a commit changed against its first parent, at most COMMIT_FILES_CAP files. */
  commitFiles(sha: string): Promise<ChangedFile[]>;
  /** The text of `path` at `ref`; null when it is not a file there. */
  fileAt(path: string, ref: string): Promise<string | null>;
  /** Every blob of the tree at `sha`. */
  tree(sha: string): Promise<TreeRead>;
}

/**
 * GitHub lists at most this many paths of one commit (in a push payload, and in the commit API).
 * The local reader lists no more, so that a rehearsal says what the app will say.
 */
export const COMMIT_FILES_CAP = 3000;
/** GitHub's compare lists at most this many files; the local reader likewise. */
export const COMPARE_FILES_CAP = 300;

/** GitHub's noreply address (`123+login@users.noreply.github.com`) tells the login; other addresses do not. */
export function loginFromEmail(email: string): string | null {
  const match = /^(?:\d+\+)?([A-Za-z0-9](?:[A-Za-z0-9-]|\[bot\])*)@users\.noreply\.github\.com$/i.exec(email.trim());
  return match ? match[1]! : null;
}
