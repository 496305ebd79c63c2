import { pathsToRead, runnerPathsToRead } from "../orchestrator/index.js";
import type { ChangedPath, PushedCommit, PushEvent, TrackEvent, TrackSnapshot } from "../orchestrator/types.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { globMatcher } from "../roles/globs.js";
import { httpStatus, type GitHub, type RepoRef } from "./github.js";
import { compareAll, type ListedCommit, type Ref } from "./compare.js";
import { conflictingMigrations, recogniseRebase, type Replayed } from "./rebase.js";

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

/** GitHub lists at most this many commits in a push payload; a push listing this many may hold more. */
const PAYLOAD_COMMITS_CAP = 2048;
/** GitHub lists at most this many paths of one commit (in a payload, and in the commit API). */
const COMMIT_FILES_CAP = 3000;
/** GitHub's compare lists at most this many files. */
const COMPARE_FILES_CAP = 300;

const short = (sha: string) => sha.slice(0, 7);

/** What a push is, verified against git rather than read off its payload. */
export interface VerifiedPush {
  /** How `after` stands to `before` (GitHub's compare: ahead, behind, diverged, identical). */
  status: string;
  /** `after` does not contain `before` (history rewritten, or the branch reset behind it). */
  forced: boolean;
  /** The track's own commits (the first-parent chain from `before` to `after`), oldest first. */
  commits: PushedCommit[];
  /** Why the push cannot be taken as it stands (the chain does not close, a merge of another branch, a commit too big to list). */
  problems: string[];
  /** Blob id at `after` of every path under `.consort/` and every test file, from one tree read. */
  headBlobs: Record<string, string>;
  /** The trees of `before` and `after`. */
  trees: { before: string; after: string };
  /** The track's migrations that conflict with the ones a merge of the default branch brought in. */
  migrationConflicts: string[];
  /** A force-push that replayed the track's accepted commits onto the default branch's head. */
  rebased?: { onto: string; commits: Replayed[] };
}

/**
 * The commits and files of a branch moving from `before` to `after`, read from git (the payload is
 * GitHub's summary, capped at 2048 commits and 3000 paths a commit). The commits come from compare
 * (paginated), and each must be the previous one's child, the first `before`'s. A merge is taken
 * only when what it merges is on the default branch ("Update branch"): the merged-in commits are
 * not the track's and are not classified, and the merge itself may change nothing the default
 * branch did not. A commit's paths come from the payload when it lists them whole, else from the
 * commit API (paginated). The frozen files are read at `after` by blob id, in one tree read.
 */
export async function verifiedPush({
  octokit,
  owner,
  repo,
  before,
  after,
  payload,
  defaultBranch,
  config,
}: Ref & {
  before: string;
  after: string;
  /** The payload's commits; undefined when there is none (reconcile): every commit is read from GitHub. */
  payload: PayloadCommit[] | undefined;
  defaultBranch: string;
  config: ConsortConfig;
}): Promise<VerifiedPush> {
  const ref = { octokit, owner, repo };
  const compared = await compareAll(ref, before, after);
  const forced = compared.status === "diverged" || compared.status === "behind";
  const head = await frozenCandidatesAt(ref, after, config);
  const problems = [...head.problems];
  const trees = { before: compared.baseTree, after: head.tree };
  const { status } = compared;
  if (status === "diverged") {
    // Rewritten history is taken only as a rebase onto the default branch; else it says why not.
    const rebase = await recogniseRebase(ref, { before, after, defaultBranch, config });
    if (rebase.kind === "rewritten") problems.push(rebase.reason);
    return {
      status,
      forced,
      commits: [],
      problems,
      headBlobs: head.blobs,
      trees,
      migrationConflicts: rebase.kind === "rebased" ? rebase.migrationConflicts : [],
      ...(rebase.kind === "rebased" ? { rebased: { onto: rebase.onto, commits: rebase.commits } } : {}),
    };
  }
  if (status !== "ahead")
    return { status, forced, commits: [], problems, headBlobs: head.blobs, trees, migrationConflicts: [] };

  const bySha = new Map(compared.commits.map((c) => [c.sha, c]));
  const chain: ListedCommit[] = [];
  for (let at = after; at !== before;) {
    const commit = bySha.get(at);
    if (!commit) {
      problems.push(
        `the pushed commits do not lead back to ${short(before)}: the parent ${short(at)} of ${short(chain[0]?.sha ?? after)} is not among them`,
      );
      break;
    }
    chain.unshift(commit);
    if (commit.parents.length === 0) {
      problems.push(`${short(commit.sha)}: has no parent: the push does not build on ${short(before)}`);
      break;
    }
    at = commit.parents[0]!;
  }

  const listed = new Map((payload ?? []).map((c) => [c.id, c]));
  const payloadWhole = payload !== undefined && payload.length < PAYLOAD_COMMITS_CAP;
  const commits: PushedCommit[] = [];
  const migrationConflicts: string[] = [];
  for (const commit of chain) {
    if (commit.parents.length > 1) {
      const refused = await mergeProblems(ref, commit, defaultBranch);
      problems.push(...refused);
      if (refused.length === 0)
        migrationConflicts.push(...(await mergedMigrationConflicts(ref, commit, defaultBranch, config)));
      commits.push({ ...pick(commit), changes: [], files: {}, merge: true });
      continue;
    }
    const fromPayload = listed.get(commit.sha);
    let changes: ChangedPath[];
    if (fromPayload && payloadWhole && listedPaths(fromPayload) < COMMIT_FILES_CAP)
      changes = payloadChanges(fromPayload);
    else {
      changes = await commitChanges(ref, commit.sha);
      if (changes.length >= COMMIT_FILES_CAP)
        problems.push(
          `${short(commit.sha)}: changes ${COMMIT_FILES_CAP} files or more, more than GitHub lists, so Consort cannot verify it: split it into smaller commits`,
        );
    }
    // The runner's configuration is compared before and after the commit (runnerConfigChanges):
    // its files' texts at the first parent (the chain above ends where a commit has none).
    const parent = commit.parents[0];
    const before: Record<string, string | null> = {};
    for (const path of runnerPathsToRead(changes))
      before[path] = parent ? await fileAt({ octokit, owner, repo, path, ref: parent }) : null;
    commits.push({
      ...pick(commit),
      ...(fromPayload ? { authorLogin: fromPayload.author.username ?? null } : {}),
      changes,
      files: await filesToRead({ octokit, owner, repo, sha: commit.sha, changes, config }),
      before,
    });
  }
  return { status, forced, commits, problems, headBlobs: head.blobs, trees, migrationConflicts };
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

const pick = ({ sha, authorLogin, message }: ListedCommit) => ({ sha, authorLogin, message });

const listedPaths = (commit: PayloadCommit) => commit.added.length + commit.removed.length + commit.modified.length;

function payloadChanges(commit: PayloadCommit): ChangedPath[] {
  return [
    ...commit.added.map((path) => ({ path, status: "added" as const })),
    ...commit.modified.map((path) => ({ path, status: "modified" as const })),
    ...commit.removed.map((path) => ({ path, status: "removed" as const })),
  ];
}

/** A commit's changed paths from the commit API, every page (GitHub lists 3000 at most). */
async function commitChanges({ octokit, owner, repo }: Ref, sha: string): Promise<ChangedPath[]> {
  const changes: ChangedPath[] = [];
  for (let page = 1; changes.length < COMMIT_FILES_CAP; page++) {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}", {
      owner,
      repo,
      ref: sha,
      per_page: 100,
      page,
    });
    const files = data.files ?? [];
    for (const f of files)
      if (f.status !== "unchanged")
        changes.push({
          path: f.filename,
          status: f.status,
          ...(f.previous_filename ? { previousPath: f.previous_filename } : {}),
        });
    if (files.length < 100) break;
  }
  return changes;
}

/**
 * Why a merge commit on the track cannot be taken: it merges something not on the default branch,
 * or it changes paths that what it merges did not (work slipped into a merge is no role's step).
 */
async function mergeProblems(ref: Ref, merge: ListedCommit, defaultBranch: string): Promise<string[]> {
  const [first, ...others] = merge.parents as [string, ...string[]];
  const problems: string[] = [];
  const brought = new Set<string>();
  for (const other of others) {
    const onDefault = await compareAll(ref, other, defaultBranch);
    if (onDefault.status !== "identical" && onDefault.status !== "ahead") {
      problems.push(
        `${short(merge.sha)}: merges ${short(other)}, which is not on ${defaultBranch}: a track takes merges of ${defaultBranch} only ("Update branch"); rebuild the branch without it`,
      );
      continue;
    }
    const incoming = await compareAll(ref, first, other);
    if (incoming.files.length >= COMPARE_FILES_CAP)
      problems.push(
        `${short(merge.sha)}: brings in ${COMPARE_FILES_CAP} files or more from ${defaultBranch}, more than GitHub's compare lists, so Consort cannot tell them from the merge's own changes`,
      );
    for (const path of incoming.files) brought.add(path);
  }
  if (problems.length > 0) return problems;
  const own = (await commitChanges(ref, merge.sha)).map((c) => c.path).filter((path) => !brought.has(path));
  if (own.length > 0)
    problems.push(
      `${short(merge.sha)}: merges ${defaultBranch} but also changes ${own.join(", ")}, which ${defaultBranch} did not: make such a change a step of its own`,
    );
  return problems;
}

/**
 * The track's migrations that no longer apply after a merge of the default branch: one that shares
 * a version with a migration the default branch gained since the track forked, or one whose
 * version sorts before such a migration (the parent database has already run it, so the track's
 * would run out of order). Versions are the leading part of the file name up to its first `_`.
 */
async function mergedMigrationConflicts(
  ref: Ref,
  merge: ListedCommit,
  defaultBranch: string,
  config: ConsortConfig,
): Promise<string[]> {
  const [first, ...others] = merge.parents as [string, ...string[]];
  const ours: string[] = [];
  const theirs: string[] = [];
  for (const other of others) {
    ours.push(...(await compareAll(ref, other, first)).files);
    theirs.push(...(await compareAll(ref, first, other)).files);
  }
  return conflictingMigrations(ours, theirs, defaultBranch, config);
}

/** Blob ids at `sha` of the paths a frozen file may be (`.consort/**`, test files), from one recursive tree read. */
async function frozenCandidatesAt(
  { octokit, owner, repo }: Ref,
  sha: string,
  config: ConsortConfig,
): Promise<{ blobs: Record<string, string>; problems: string[]; tree: string }> {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", {
    owner,
    repo,
    tree_sha: sha,
    recursive: "1",
  });
  const isTest = globMatcher(config.paths.tests);
  const blobs: Record<string, string> = {};
  for (const entry of data.tree)
    if (entry.type === "blob" && entry.path && entry.sha && (entry.path.startsWith(".consort/") || isTest(entry.path)))
      blobs[entry.path] = entry.sha;
  const problems = data.truncated
    ? [`the tree at ${short(sha)} is too large for GitHub to list whole, so its frozen files cannot be checked`]
    : [];
  return { blobs, problems, tree: data.sha };
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
