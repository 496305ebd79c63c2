import {
  pathsToRead,
  runnerPackagesToRead,
  runnerPathsToRead,
  type ChangedPath,
  type PushedCommit,
  type PushEvent,
  type TrackEvent,
  type TrackSnapshot,
} from "../orchestrator/index.js";
import { configuredCommands, isRunnerConfigPath } from "../gates/freeze.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { globMatcher } from "../roles/globs.js";
import { judgedTextFromPatch } from "../roles/test-code.js";
import { conflictingMigrations, recogniseRebase, type Replayed } from "./rebase.js";
import { COMMIT_FILES_CAP, COMPARE_FILES_CAP, type Compared, type ListedCommit, type PushSource } from "./source.js";

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
  /**
   * Blob id at `after` of every path under `.consort/` and every test file, from one tree read.
   * Absent when the push changes none of those paths, so they are as `before` had them (see
   * `frozenCheckPending` for when that may be relied on).
   */
  headBlobs?: Record<string, string>;
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
 * commit API (paginated). The frozen files are read at `after` by blob id, in one tree read, unless
 * the compare shows that none of the paths they may be changed (see `frozenUnchanged`).
 */
export async function verifiedPush({
  source,
  before,
  after,
  payload,
  defaultBranch,
  config,
}: {
  source: PushSource;
  before: string;
  after: string;
  /** The payload's commits; undefined when there is none (reconcile, a local push): every commit is read from the source. */
  payload: PayloadCommit[] | undefined;
  defaultBranch: string;
  config: ConsortConfig;
}): Promise<VerifiedPush> {
  const compared = await source.compare(before, after);
  const forced = compared.status === "diverged" || compared.status === "behind";
  const { status } = compared;
  if (status !== "ahead") {
    const head = await frozenCandidatesAt(source, after, config);
    const problems = [...head.problems];
    const trees = { before: compared.baseTree, after: head.tree };
    // Rewritten history is taken only as a rebase onto the default branch; else it says why not.
    const rebase =
      status === "diverged" ? await recogniseRebase(source, { before, after, defaultBranch, config }) : undefined;
    if (rebase?.kind === "rewritten") problems.push(rebase.reason);
    return {
      status,
      forced,
      commits: [],
      problems,
      headBlobs: head.blobs,
      trees,
      migrationConflicts: rebase?.kind === "rebased" ? rebase.migrationConflicts : [],
      ...(rebase?.kind === "rebased" ? { rebased: { onto: rebase.onto, commits: rebase.commits } } : {}),
    };
  }

  const problems: string[] = [];
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
  const migrationConflicts: string[] = [];
  const changed = new Map<string, ChangedPath[]>();
  for (const commit of chain) {
    if (commit.parents.length > 1) {
      const refused = await mergeProblems(source, commit, defaultBranch);
      problems.push(...refused);
      if (refused.length === 0)
        migrationConflicts.push(...(await mergedMigrationConflicts(source, commit, defaultBranch, config)));
      continue;
    }
    const fromPayload = listed.get(commit.sha);
    if (fromPayload && payloadWhole && listedPaths(fromPayload) < COMMIT_FILES_CAP)
      changed.set(commit.sha, payloadChanges(fromPayload));
    else {
      const changes = await commitChanges(source, commit.sha);
      changed.set(commit.sha, changes);
      if (changes.length >= COMMIT_FILES_CAP)
        problems.push(
          `${short(commit.sha)}: changes ${COMMIT_FILES_CAP} files or more, more than GitHub lists, so Consort cannot verify it: split it into smaller commits`,
        );
    }
  }
  const diffs = judgedDiffs(compared, chain, changed, config);

  const commits: PushedCommit[] = [];
  /** The texts known as `leftBy` left them: the runner files read before it and the files read after it. */
  let leftTexts = new Map<string, string | null>();
  let leftBy: string | undefined;
  for (const commit of chain) {
    const changes = changed.get(commit.sha);
    if (!changes) {
      commits.push({ ...pick(commit), changes: [], files: {}, merge: true });
      continue;
    }
    // The runner's configuration is compared before and after the commit (runnerConfigChanges):
    // its files' texts at the first parent (the chain above ends where a commit has none). A text
    // the previous commit of the chain left (read after it, or unchanged by it) is not read again.
    const parent = commit.parents[0];
    const before: Record<string, string | null> = {};
    for (const path of runnerPathsToRead(changes, config)) {
      const left = parent === leftBy ? leftTexts.get(path) : undefined;
      before[path] = left !== undefined ? left : parent ? await source.fileAt(path, parent) : null;
    }
    const fromPayload = listed.get(commit.sha);
    const files = await filesToRead({ source, sha: commit.sha, changes, config, diffs });
    leftTexts = new Map(Object.entries(before));
    for (const change of changes) {
      leftTexts.delete(change.path);
      if (change.previousPath !== undefined) leftTexts.delete(change.previousPath);
    }
    // A text judged from the compare's diff is not the whole file: it is never what a later commit starts from.
    for (const [path, text] of Object.entries(files)) if (!diffs.has(path)) leftTexts.set(path, text);
    leftBy = commit.sha;
    commits.push({
      ...pick(commit),
      ...(fromPayload ? { authorLogin: fromPayload.author.username ?? null } : {}),
      changes,
      files,
      before,
    });
  }
  const trees = { before: compared.baseTree, after: chain.at(-1)?.tree ?? "" };
  if (problems.length === 0 && trees.after && frozenUnchanged(compared, chain, changed, config))
    return { status, forced, commits, problems, trees, migrationConflicts };
  const head = await frozenCandidatesAt(source, after, config);
  problems.push(...head.problems);
  return {
    status,
    forced,
    commits,
    problems,
    headBlobs: head.blobs,
    trees: { ...trees, after: head.tree },
    migrationConflicts,
  };
}

/**
 * A push without the head's blobs rests on `before` having passed the at-head check when the track
 * accepted it: true (the tree must be read) unless `before` is the track's accepted head. On top of
 * a refused head, or anywhere else, `before` proves nothing.
 */
export function frozenCheckPending(push: VerifiedPush, before: string, snapshot: TrackSnapshot): boolean {
  return push.headBlobs === undefined && before !== snapshot.context.head;
}

/**
 * Whether the push's commits lack a package.json text the frozen runner configuration needs
 * (runnerPackagesToRead): only the snapshot says whether the test-list gate has opened.
 */
export function runnerPackagesPending(push: VerifiedPush, snapshot: TrackSnapshot, config: ConsortConfig): boolean {
  return push.commits.some((commit) =>
    runnerPackagesToRead(commit.changes, config, snapshot).some((path) => commit.before?.[path] === undefined),
  );
}

/** What the reads that complete a push go by: the track's snapshot, and where the push starts. */
interface PushReads {
  source: PushSource;
  /** The repository the texts are kept for (owner/repo), in `texts`' keys. */
  repository?: string;
  before: string;
  config: ConsortConfig;
  snapshot: TrackSnapshot;
  /** The process's texts at commits (AppServices.commitTexts), read and kept. */
  texts?: Map<string, string | null> | undefined;
}

/**
 * The push with those package.json texts read, each at its commit's first parent, once a push: a
 * text a commit leaves (unchanged, or read after it) is the next commit's, and a merge starts over.
 */
export async function withRunnerPackages(
  { source, repository, before, config, snapshot, texts: atCommits }: PushReads,
  push: VerifiedPush,
): Promise<VerifiedPush> {
  const key = (sha: string, path: string) => `${repository}@${sha}:${path}`;
  const keep = (sha: string, path: string, text: string | null) => {
    if (!atCommits || repository === undefined || !/^[0-9a-f]{40}$/.test(sha)) return;
    atCommits.set(key(sha, path), text);
    if (atCommits.size > COMMIT_TEXTS_MAX) atCommits.delete(atCommits.keys().next().value!);
  };
  const known = new Map<string, string | null>();
  let at = before;
  const commits: PushedCommit[] = [];
  for (const commit of push.commits) {
    const texts: Record<string, string | null> = {};
    for (const path of commit.merge ? [] : runnerPackagesToRead(commit.changes, config, snapshot)) {
      const given = commit.before?.[path];
      if (given !== undefined) texts[path] = given;
      else {
        if (!known.has(path)) {
          const kept = atCommits?.get(key(at, path));
          const text = kept !== undefined ? kept : await source.fileAt(path, at);
          keep(at, path, text);
          known.set(path, text);
        }
        texts[path] = known.get(path)!;
      }
    }
    commits.push(Object.keys(texts).length > 0 ? { ...commit, before: { ...commit.before, ...texts } } : commit);
    if (commit.merge) known.clear();
    for (const change of commit.changes)
      for (const path of [change.path, change.previousPath]) if (path !== undefined) known.delete(path);
    for (const [path, text] of Object.entries(commit.files))
      if (path === "package.json" || path.endsWith("/package.json")) known.set(path, text);
    at = commit.sha;
  }
  // What the last commit left is the head's, where the next push starts.
  for (const [path, text] of known) keep(at, path, text);
  return { ...push, commits };
}

/**
 * Whether only the track's snapshot can tell that the push lacks a read the machine needs to judge
 * it: the head's frozen files (frozenCheckPending) or a package.json text the frozen runner
 * configuration needs (runnerPackagesPending). `completedPush` reads them.
 */
export function readsPending(
  push: VerifiedPush,
  before: string,
  snapshot: TrackSnapshot,
  config: ConsortConfig,
): boolean {
  return frozenCheckPending(push, before, snapshot) || runnerPackagesPending(push, snapshot, config);
}

/**
 * The push with what the snapshot says it lacks read: the head's blobs, then the runner's
 * package.json texts. The `push` webhook and `consort reconcile` both complete a verified push so.
 */
export async function completedPush(reads: PushReads & { after: string }, push: VerifiedPush): Promise<VerifiedPush> {
  const { source, after, config, snapshot, before } = reads;
  const atHead = frozenCheckPending(push, before, snapshot)
    ? await withFrozenAtHead({ source, after, config }, push)
    : push;
  return runnerPackagesPending(atHead, snapshot, config) ? await withRunnerPackages(reads, atHead) : atHead;
}

/** How many texts at commits a process keeps (the oldest are dropped first). */
const COMMIT_TEXTS_MAX = 2000;

/** The push with the head's blobs read (one tree read at `after`), for when `frozenCheckPending`. */
export async function withFrozenAtHead(
  { source, after, config }: { source: PushSource; after: string; config: ConsortConfig },
  push: VerifiedPush,
): Promise<VerifiedPush> {
  const head = await frozenCandidatesAt(source, after, config);
  return {
    ...push,
    problems: [...push.problems, ...head.problems],
    headBlobs: head.blobs,
    trees: { ...push.trees, after: head.tree },
  };
}

/** May a frozen file be at `path` (`.consort/**`, test files)? Those are what the tree read at a head is for. */
const mayBeFrozen = (config: ConsortConfig) => {
  const isTest = globMatcher(config.paths.tests);
  return (path: string) => path.startsWith(".consort/") || isTest(path);
};

/** Every path a change names, the one it was renamed from too. */
const namedPaths = (changes: ChangedPath[]) =>
  changes.flatMap((c) => (c.previousPath ? [c.path, c.previousPath] : [c.path]));

/**
 * Whether the push provably leaves every path a frozen file may be at as `before` had it, so the
 * head's blobs need no tree read: the chain is the track's own commits only (a merge brings in what
 * no commit lists), and neither the compare's file list (complete: under GitHub's 300) nor any
 * commit names such a path. Rests on `before` having been checked when it was accepted, which only
 * the track's state can tell (see `frozenCheckPending`). When unsure, the tree is read.
 */
function frozenUnchanged(
  compared: Compared,
  chain: ListedCommit[],
  changed: Map<string, ChangedPath[]>,
  config: ConsortConfig,
): boolean {
  const files = compared.listed;
  if (!files || files.length >= COMPARE_FILES_CAP || chain.some((c) => !changed.has(c.sha))) return false;
  const frozenMay = mayBeFrozen(config);
  const named = [...files.flatMap((f) => (f.previousPath ? [f.path, f.previousPath] : [f.path]))];
  for (const changes of changed.values()) named.push(...namedPaths(changes));
  return !named.some(frozenMay);
}

/**
 * The compare's diff of each code file that one commit of the chain changed and no other did (so
 * the compare's diff of it is that commit's), as the production-code rule judges it instead of the
 * whole file (judgedTextFromPatch). None when a merge is in the chain (its diff holds the default
 * branch's changes too) or the compare's list may be capped; a file without a patch (binary, or too
 * big for GitHub to show), renamed or copied, is read whole.
 */
function judgedDiffs(
  compared: Compared,
  chain: ListedCommit[],
  changed: Map<string, ChangedPath[]>,
  config: ConsortConfig,
): Map<string, string> {
  const diffs = new Map<string, string>();
  const files = compared.listed;
  if (!files || files.length >= COMPARE_FILES_CAP || chain.some((c) => !changed.has(c.sha))) return diffs;
  const touches = new Map<string, number>();
  for (const changes of changed.values())
    for (const path of new Set(namedPaths(changes))) touches.set(path, (touches.get(path) ?? 0) + 1);
  const isCode = globMatcher(config.paths.code);
  const frozenMay = mayBeFrozen(config);
  // A runner configuration file is compared whole before and after (runnerConfigChanges), never from a diff.
  const commands = Object.values(configuredCommands(config.commands));
  for (const file of files) {
    if (file.patch === undefined || (file.status !== "added" && file.status !== "modified")) continue;
    if (!isCode(file.path) || frozenMay(file.path) || isRunnerConfigPath(file.path, commands)) continue;
    if (touches.get(file.path) !== 1) continue;
    const judged = judgedTextFromPatch(file.patch);
    if (judged !== undefined) diffs.set(file.path, judged);
  }
  return diffs;
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

/** A commit's changed paths, as the source lists them (GitHub lists 3000 at most). */
async function commitChanges(source: PushSource, sha: string): Promise<ChangedPath[]> {
  return (await source.commitFiles(sha)).flatMap((f) =>
    f.status === "unchanged"
      ? []
      : [{ path: f.path, status: f.status, ...(f.previousPath ? { previousPath: f.previousPath } : {}) }],
  );
}

/**
 * Why a merge commit on the track cannot be taken: it merges something not on the default branch,
 * or it changes paths that what it merges did not, or it leaves a path only the default branch
 * changed since the fork other than the default branch made it (git's merge takes that text as it
 * is; work slipped into a merge is no role's step).
 */
async function mergeProblems(source: PushSource, merge: ListedCommit, defaultBranch: string): Promise<string[]> {
  const [first, ...others] = merge.parents as [string, ...string[]];
  const problems: string[] = [];
  const brought = new Set<string>();
  /** The paths only the merged-in side changed since the fork, with their blob there (undefined: removed). */
  const theirsAlone = new Map<string, string | undefined>();
  for (const other of others) {
    const onDefault = await source.compare(other, defaultBranch);
    if (onDefault.status !== "identical" && onDefault.status !== "ahead") {
      problems.push(
        `${short(merge.sha)}: merges ${short(other)}, which is not on ${defaultBranch}: a track takes merges of ${defaultBranch} only ("Update branch"); rebuild the branch without it`,
      );
      continue;
    }
    const incoming = await source.compare(first, other);
    if (incoming.files.length >= COMPARE_FILES_CAP)
      problems.push(
        `${short(merge.sha)}: brings in ${COMPARE_FILES_CAP} files or more from ${defaultBranch}, more than GitHub's compare lists, so Consort cannot tell them from the merge's own changes`,
      );
    for (const path of incoming.files) brought.add(path);
    const ours = new Set((await source.compare(other, first)).files);
    for (const f of incoming.listed ?? []) if (!ours.has(f.path)) theirsAlone.set(f.path, f.blob);
  }
  if (problems.length > 0) return problems;
  const changed = await source.commitFiles(merge.sha);
  const own = changed.map((c) => c.path).filter((path) => !brought.has(path));
  if (own.length > 0)
    problems.push(
      `${short(merge.sha)}: merges ${defaultBranch} but also changes ${own.join(", ")}, which ${defaultBranch} did not: make such a change a step of its own`,
    );
  // A path the merge did not change against the track keeps the fork's text: main's change was dropped.
  const merged = new Map(changed.map((c) => [c.path, c.blob]));
  const altered = [...theirsAlone]
    .filter(([path, blob]) => !merged.has(path) || merged.get(path) !== blob)
    .map(([path]) => path);
  if (altered.length > 0)
    problems.push(
      `${short(merge.sha)}: merges ${defaultBranch} but leaves ${altered.join(", ")} other than ${defaultBranch} made ${altered.length > 1 ? "them" : "it"}, though only ${defaultBranch} changed ${altered.length > 1 ? "them" : "it"} since the track forked: take ${defaultBranch}'s text in the merge, and make any change of your own a step`,
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
  source: PushSource,
  merge: ListedCommit,
  defaultBranch: string,
  config: ConsortConfig,
): Promise<string[]> {
  const [first, ...others] = merge.parents as [string, ...string[]];
  const ours: string[] = [];
  const theirs: string[] = [];
  for (const other of others) {
    ours.push(...(await source.compare(other, first)).files);
    theirs.push(...(await source.compare(first, other)).files);
  }
  return conflictingMigrations(ours, theirs, defaultBranch, config);
}

/** Blob ids at `sha` of the paths a frozen file may be (`.consort/**`, test files), from one recursive tree read. */
async function frozenCandidatesAt(
  source: PushSource,
  sha: string,
  config: ConsortConfig,
): Promise<{ blobs: Record<string, string>; problems: string[]; tree: string }> {
  const tree = await source.tree(sha);
  const frozenMay = mayBeFrozen(config);
  const blobs: Record<string, string> = {};
  for (const entry of tree.blobs) if (frozenMay(entry.path)) blobs[entry.path] = entry.sha;
  const problems = tree.truncated
    ? [`the tree at ${short(sha)} is too large for GitHub to list whole, so its frozen files cannot be checked`]
    : [];
  return { blobs, problems, tree: tree.sha };
}

/**
 * The text after commit `sha` of each changed path the machine reads; null where the commit removed
 * it. A code file in `diffs` is given as its diff's judged text (the only use of a code file's text
 * is the production-code rule), which costs no read.
 */
async function filesToRead({
  source,
  sha,
  changes,
  config,
  diffs,
}: {
  source: PushSource;
  sha: string;
  changes: ChangedPath[];
  config: ConsortConfig;
  diffs: Map<string, string>;
}): Promise<Record<string, string | null>> {
  const removed = new Set(changes.filter((c) => c.status === "removed").map((c) => c.path));
  const files: Record<string, string | null> = {};
  for (const path of pathsToRead(changes, config))
    files[path] = removed.has(path) ? null : (diffs.get(path) ?? (await source.fileAt(path, sha)));
  return files;
}

/**
 * A push that holds a late push's commits as well: one push event per commit, as the pushes were
 * made (a push is one step). The problems go with the first; the head's blobs and trees, which
 * describe the last commit, with the last.
 */
export function oneStepEach(from: string, push: VerifiedPush, at: string, pusher?: string): PushEvent[] {
  return push.commits.map((commit, i) => ({
    type: "push",
    at,
    ...(pusher !== undefined ? { pusher } : {}),
    before: i === 0 ? from : push.commits[i - 1]!.sha,
    after: commit.sha,
    forced: false,
    commits: [commit],
    migrationConflicts: push.migrationConflicts,
    ...(i === 0 ? { problems: push.problems } : {}),
    ...(i === push.commits.length - 1
      ? { trees: push.trees, ...(push.headBlobs ? { headBlobs: push.headBlobs } : {}) }
      : {}),
  }));
}
