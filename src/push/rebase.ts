import type { ConsortConfig } from "../config/consort-config.js";
import { globMatcher } from "../roles/globs.js";
import { COMMIT_FILES_CAP, type ListedCommit, type PushSource } from "./source.js";

/** One accepted commit of the track and its replay on the default branch. */
export interface Replayed {
  from: string;
  to: string;
}

/** A force-push that rebased the track onto the default branch's head, or why it is not one. */
export type Rebase =
  | { kind: "rebased"; onto: string; commits: Replayed[]; migrationConflicts: string[] }
  | { kind: "rewritten"; reason: string };

const short = (sha: string) => sha.slice(0, 7);

/** A file a commit changed: its blob after the commit and its patch. */
interface ReplayedFile {
  status: string;
  blob: string | null;
  /** The unified diff's hunks without their line numbers (what `git patch-id` compares). */
  hunks: string | undefined;
}

/**
 * Is the push from `before` (the track's last accepted head) to `after` a rebase onto the default
 * branch? It is when `after` sits on the default branch's current head, its own commits are the
 * track's accepted commits (since they left the default branch, merges of it left out) one for one
 * in order, and each is its original replayed: the same message, the same author, the same files
 * with the same change (the same blob after it, or the same hunks wherever they now land). Anything
 * else is history rewritten, and the reason says which commit differs.
 */
export async function recogniseRebase(
  source: PushSource,
  {
    before,
    after,
    defaultBranch,
    config,
  }: { before: string; after: string; defaultBranch: string; config: ConsortConfig },
): Promise<Rebase> {
  const rewritten = (reason: string): Rebase => ({ kind: "rewritten", reason: `history was rewritten: ${reason}` });
  const now = await source.compare(defaultBranch, after);
  if (now.status !== "ahead")
    return rewritten(
      `${short(after)} does not build on ${defaultBranch}'s head ${short(now.baseSha)}, so it is no rebase onto ${defaultBranch}`,
    );
  const was = await source.compare(defaultBranch, before);
  const accepted = was.commits.filter((c) => c.parents.length === 1);
  const replays = now.commits;
  const merge = replays.find((c) => c.parents.length !== 1);
  if (merge) return rewritten(`${short(merge.sha)} is a merge, which a rebase does not make`);
  if (replays.length !== accepted.length)
    return rewritten(
      `${short(after)} holds ${replays.length} commit(s) of its own on ${defaultBranch}, where the track had ${accepted.length} accepted since it left ${defaultBranch}`,
    );
  let parent = now.baseSha;
  const commits: Replayed[] = [];
  for (const [i, replay] of replays.entries()) {
    const original = accepted[i]!;
    if (replay.parents[0] !== parent)
      return rewritten(
        `${short(replay.sha)} is not the child of ${short(parent)}: the replayed commits do not form one line`,
      );
    const differs = await replayDiffers(source, original, replay);
    if (differs)
      return rewritten(`${short(replay.sha)} is not a replay of the accepted ${short(original.sha)}: ${differs}`);
    commits.push({ from: original.sha, to: replay.sha });
    parent = replay.sha;
  }
  // What the default branch gained since the track left it, against what the track brings.
  const gained = await source.compare(was.mergeBase, now.baseSha);
  return {
    kind: "rebased",
    onto: now.baseSha,
    commits,
    migrationConflicts: conflictingMigrations(was.files, gained.files, defaultBranch, config),
  };
}

/** Why `replay` is not `original` replayed, or undefined when it is. */
async function replayDiffers(
  source: PushSource,
  original: ListedCommit,
  replay: ListedCommit,
): Promise<string | undefined> {
  if (replay.message !== original.message) return "its message differs";
  if (replay.authorLogin !== original.authorLogin)
    return `its author is ${replay.authorLogin ?? "unknown"}, not ${original.authorLogin ?? "unknown"}`;
  const [was, now] = [await changedFiles(source, original.sha), await changedFiles(source, replay.sha)];
  if (was.size >= COMMIT_FILES_CAP || now.size >= COMMIT_FILES_CAP)
    return `it changes ${COMMIT_FILES_CAP} files or more, more than GitHub lists, so it cannot be compared`;
  const paths = [...new Set([...was.keys(), ...now.keys()])].sort();
  for (const path of paths) {
    const a = was.get(path);
    const b = now.get(path);
    if (!a || !b) return `it ${a ? "no longer changes" : "also changes"} ${path}`;
    if (a.status !== b.status) return `${path} is ${b.status}, not ${a.status}`;
    const same = (a.blob !== null && a.blob === b.blob) || (a.hunks !== undefined && a.hunks === b.hunks);
    if (!same) return `its change to ${path} differs`;
  }
  return undefined;
}

async function changedFiles(source: PushSource, sha: string): Promise<Map<string, ReplayedFile>> {
  const files = new Map<string, ReplayedFile>();
  for (const f of await source.commitFiles(sha))
    files.set(f.path, {
      status: f.status,
      blob: f.blob ?? null,
      hunks: f.patch?.replace(/^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/gm, "@@"),
    });
  return files;
}

/**
 * The conflicts between the migrations among the track's changed paths (`trackPaths`) and those
 * among the paths the default branch changed meanwhile (`defaultPaths`): one that shares a version with a
 * migration the default branch gained, or whose version sorts before the newest of those (the
 * parent database has already run it, so the track's would run out of order). Versions are the
 * leading part of the file name up to its first `_`.
 */
export function conflictingMigrations(
  trackPaths: string[],
  defaultPaths: string[],
  defaultBranch: string,
  config: ConsortConfig,
): string[] {
  const isMigration = globMatcher(config.paths.migrations);
  const stem = (path: string) => path.replace(/\.(up|down)\.sql$/, "");
  const version = (path: string) => (path.split("/").pop() ?? path).split(/[_.]/)[0]!;
  const ours = new Set(trackPaths.filter(isMigration).map(stem));
  const theirs = new Set(defaultPaths.filter(isMigration).map(stem));
  const byVersion = (a: string, b: string) => version(a).localeCompare(version(b), "en", { numeric: true });
  const latest = [...theirs].sort(byVersion).at(-1);
  if (!latest) return [];
  const conflicts: string[] = [];
  for (const path of [...ours].filter((p) => !theirs.has(p)).sort(byVersion)) {
    const same = [...theirs].find((t) => version(t) === version(path));
    if (same)
      conflicts.push(
        `${path} has version ${version(path)}, as ${same} from ${defaultBranch} does: renumber the track's migration after ${version(latest)}`,
      );
    else if (byVersion(path, latest) < 0)
      conflicts.push(
        `${path} would run before ${latest}, which ${defaultBranch} gained meanwhile and its database has already run: renumber it after ${version(latest)}`,
      );
  }
  return conflicts;
}
