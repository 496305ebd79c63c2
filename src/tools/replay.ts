import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { createTrack, restoreSnapshot, type TrackSnapshot } from "../orchestrator/index.js";
import {
  expandStored,
  openStateFile,
  gitStoredSource,
  STATE_REFS,
  trackIdForBranch,
  trackPath,
  unsealed,
} from "../state/index.js";
import { sanitiseBranchName } from "../substrate/index.js";
import { localPushes } from "./local-push.js";
import { lanePath, loadLane, writeLane, type LocalApproval } from "./local-lane.js";
import { ToolError } from "./errors.js";
import { currentBranch } from "./track-state.js";

/**
 * A track's state on a plain checkout, with no state file, no token and no network: the track as
 * the app would have started it at the branch's merge base with the default branch, and the
 * branch's commits since then pushed through the same machine (`createTrack`, then `transition`
 * of each push the app's push reader reads from local git (`localPushes`), as the push webhook would carry it). Only what
 * commits decide is known here: every gate stays waiting for its approval, and a step after a
 * gate or a cycle stands refused until the app has seen them.
 *
 * Where `consort/state` was fetched (`git fetch origin consort/state`) and its file for the track
 * verifies with the state key, the app's own snapshot is the starting point instead (approvals and
 * cycles included), and only the commits after its head are replayed. A file that does not verify
 * is never trusted: the replay then starts at the merge base and says why.
 */

export interface ReplayedTrack {
  trackId: string;
  branch: string;
  defaultBranch: string;
  /** Where the default branch was read (the remote's HEAD, git config consort.defaultBranch, …). */
  defaultBranchSource: string;
  /** The merge base the track starts at. */
  base: string;
  commits: number;
  snapshot: TrackSnapshot;
  /** Where the replay started from the app's verified state, the ref and the commit it had reached. */
  fromState?: { ref: string; head: string };
  /** Why a fetched consort/state was not used (no key, not verified, a head this branch left). */
  stateNote?: string;
  /**
   * Each refused commit's own reasons, by sha: what the machine found wrong with it, judged on the
   * last accepted commit as the push after a reset would be (empty: nothing but the refused commit under it).
   */
  refusals: Record<string, string[]>;
  /** The local lane the track was kept in (none when the app's verified state was the start). */
  lane?: { path: string; resumed: boolean; approvals: LocalApproval[] };
}

/** A lane file's snapshot, restored as the machine checks any snapshot; one that does not restore is refused. */
function restoredLane(raw: unknown, path: string): TrackSnapshot {
  try {
    return restoreSnapshot(raw);
  } catch (error) {
    throw new ToolError(
      `The local lane ${path} holds a snapshot the machine cannot restore: ${(error as Error).message}`,
      `Delete ${path} to start the rehearsal over from the merge base (its approvals are lost; the branch's commits are judged again).`,
      "INVALID_STATE",
    );
  }
}

/**
 * The app's verified snapshot of the track from a fetched consort/state, when it is there, verifies
 * with `stateKey`, and its head is on this branch; otherwise why it is not used (undefined: none fetched).
 */
async function fetchedState(
  repoPath: string,
  trackId: string,
  stateKey: string | undefined,
): Promise<{ ref: string; snapshot: TrackSnapshot } | { note: string } | undefined> {
  const git = simpleGit(repoPath);
  const path = trackPath(trackId);
  for (const ref of STATE_REFS) {
    const text = await git.raw(["show", `${ref}:${path}`]).catch(() => "");
    if (!text) continue;
    const where = `${ref.replace(/^refs\/(remotes\/|heads\/)/, "")}:${path}`;
    if (!stateKey)
      return { note: `${where} was fetched, but without CONSORT_STATE_KEY it cannot be verified, so it is not used` };
    let snapshot: TrackSnapshot;
    try {
      const file = unsealed(openStateFile(text, stateKey, { trackId, path }));
      // A compact file refers to its texts by blob id: the clone holds them (its branches' commits).
      const { state } = await expandStored(trackId, file, false, gitStoredSource(repoPath, ref));
      snapshot = restoreSnapshot(state.snapshot);
    } catch (error) {
      return { note: `${where} does not verify, so it is not used: ${(error as Error).message}` };
    }
    const onBranch = await git
      .raw(["merge-base", "--is-ancestor", snapshot.context.head, "HEAD"])
      .then(() => true)
      .catch(() => false);
    if (!onBranch)
      return {
        note: `${where} stands at ${snapshot.context.head.slice(0, 12)}, which this branch does not contain, so it is not used`,
      };
    return { ref, snapshot };
  }
  return undefined;
}

/** A default branch and where it was read, as the CLI says it. */
interface DefaultBranch {
  name: string;
  ref: string;
  source: string;
}

/** How long the remote is asked for its default before the checkout's own refs answer. */
const REMOTE_TIMEOUT_MS = 5_000;

/**
 * The default branch as the repository configures it: `git config consort.defaultBranch` when a
 * person set it, else the remote's own HEAD (asked with `git ls-remote`, its configured default),
 * else main or master, else the clone's `origin/HEAD`. That last is only a cached pointer, which
 * `git remote set-head` or an old clone may have left on a feature branch, so it comes last.
 */
async function defaultBranchOf(repoPath: string): Promise<DefaultBranch> {
  const git = simpleGit(repoPath);
  const refFor = async (name: string) => {
    for (const ref of [`refs/remotes/origin/${name}`, `refs/heads/${name}`]) {
      // simple-git resolves a failed `--quiet` call with no output, so the output decides.
      const found = await git
        .raw(["rev-parse", "--verify", "--quiet", ref])
        .then((sha) => sha.trim() !== "")
        .catch(() => false);
      if (found) return ref;
    }
    return undefined;
  };
  const configured = (await git.raw(["config", "--get", "consort.defaultBranch"]).catch(() => "")).trim();
  if (configured) {
    const ref = await refFor(configured);
    if (ref) return { name: configured, ref, source: "git config consort.defaultBranch" };
    throw new ToolError(
      `git config consort.defaultBranch names ${configured}, which this checkout does not have.`,
      `Fetch it (git fetch origin ${configured}) or correct the setting (git config consort.defaultBranch <branch>).`,
      "NO_DEFAULT_BRANCH",
    );
  }
  const asked = await remoteHead(repoPath);
  if (asked.name) {
    const ref = await refFor(asked.name);
    if (ref) return { name: asked.name, ref, source: "origin's HEAD (git ls-remote --symref origin HEAD)" };
  }
  const why = asked.name ? `origin's default ${asked.name} is not fetched` : `origin could not be asked: ${asked.why}`;
  for (const name of ["main", "master"]) {
    const ref = await refFor(name);
    if (ref)
      return {
        name,
        ref,
        source: `the ${ref.startsWith("refs/heads/") ? "local" : "remote-tracking"} branch ${name} (${why}; git config consort.defaultBranch <branch> decides)`,
      };
  }
  const originHead = (await git.raw(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"]).catch(() => "")).trim();
  if (originHead)
    return {
      name: originHead.replace(/^refs\/remotes\/origin\//, ""),
      ref: originHead,
      source: `the clone's origin/HEAD (${why}; git config consort.defaultBranch <branch> decides)`,
    };
  throw new ToolError(
    `Could not tell the default branch of ${repoPath}: ${why}, and there is no main, master or origin/HEAD.`,
    "Name it: git config consort.defaultBranch <branch> (or fetch origin).",
    "NO_DEFAULT_BRANCH",
  );
}

/** How long one process trusts the remote's answer (or its silence): a board refreshes often, offline too. */
const REMOTE_ANSWER_TTL_MS = 10 * 60_000;
const remoteAnswers = new Map<string, { at: number; answer: Promise<{ name?: string; why: string }> }>();

/** The branch origin's HEAD names on the remote itself, or why it could not be asked; asked once per ten minutes. */
function remoteHead(repoPath: string): Promise<{ name?: string; why: string }> {
  const kept = remoteAnswers.get(repoPath);
  if (kept && Date.now() - kept.at < REMOTE_ANSWER_TTL_MS) return kept.answer;
  const answer = askRemoteHead(repoPath);
  remoteAnswers.set(repoPath, { at: Date.now(), answer });
  return answer;
}

async function askRemoteHead(repoPath: string): Promise<{ name?: string; why: string }> {
  const remote = (
    await simpleGit(repoPath)
      .raw(["remote"])
      .catch(() => "")
  )
    .split("\n")
    .includes("origin");
  if (!remote) return { why: "the checkout has no remote named origin" };
  try {
    // Never a prompt for credentials: a remote that wants them answers as unreachable.
    const { stdout: out } = await promisify(execFile)("git", ["ls-remote", "--symref", "origin", "HEAD"], {
      cwd: repoPath,
      timeout: REMOTE_TIMEOUT_MS,
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_SSH_COMMAND: "ssh -o BatchMode=yes" },
    });
    const name = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)?.[1];
    return name ? { name, why: "" } : { why: "it names no HEAD branch" };
  } catch (error) {
    return { why: (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim() };
  }
}

/** The author time (ISO) of each commit after `base` on HEAD, as the board lists them. */
async function authorTimes(repoPath: string, base: string): Promise<Map<string, string>> {
  const out = await simpleGit(repoPath)
    .raw(["log", "--format=%H %aI", `${base}..HEAD`])
    .catch(() => "");
  const times = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [sha, at] = line.trim().split(" ");
    if (sha && at) times.set(sha, new Date(at).toISOString());
  }
  return times;
}

export async function replayTrack(
  repoPath: string,
  config: ConsortConfig,
  at: string,
  options: { stateKey?: string } = {},
): Promise<ReplayedTrack> {
  const branch = await currentBranch(repoPath);
  if (!branch || branch === "HEAD")
    throw new ToolError(
      `${repoPath} is on a detached HEAD, so it names no track.`,
      "Check out the track's branch.",
      "NO_BRANCH",
    );
  const defaultBranch = await defaultBranchOf(repoPath);
  if (branch === defaultBranch.name)
    throw new ToolError(
      `${repoPath} is on the default branch ${branch}, which is not a track.`,
      "Start a feature on its own branch (git switch -c <feature>); Consort tracks every other branch.",
      "NO_TRACK",
    );
  const git = simpleGit(repoPath);
  let base: string;
  try {
    base = (await git.raw(["merge-base", "HEAD", defaultBranch.ref])).trim();
  } catch {
    throw new ToolError(
      `${branch} shares no history with the default branch ${defaultBranch.name}.`,
      "Branch the feature from the default branch.",
      "NO_MERGE_BASE",
    );
  }
  const trackId = trackIdForBranch(branch);
  const fetched = await fetchedState(repoPath, trackId, options.stateKey);
  const times = await authorTimes(repoPath, base);
  const verified = fetched && "snapshot" in fetched ? fetched : undefined;
  // The app's verified state is the truth where it was fetched; else the checkout's own local lane.
  const read = verified ? {} : await loadLane(repoPath, trackId);
  const lane = read.file;
  const start = verified
    ? verified.snapshot
    : lane
      ? restoredLane(lane.snapshot, await lanePath(repoPath, trackId))
      : createTrack(
          {
            trackId,
            branch,
            baseBranch: defaultBranch.name,
            head: base,
            databaseBranch: sanitiseBranchName(branch),
            parentDatabaseBranch: sanitiseBranchName(defaultBranch.name),
            // The app starts a track at its first push: here, the time of the branch's first commit.
            at: [...times.values()].sort()[0] ?? at,
          },
          config,
        ).snapshot;
  const from = start.context.head;
  // One push per commit, as an agent pushes each step: the machine decides each on the stage it reaches.
  const { snapshot, steps } = await localPushes(repoPath, start, config, {
    at,
    defaultBranch: defaultBranch.name,
    timeOf: (sha) => times.get(sha),
  });
  const approvals = lane?.approvals ?? [];
  const refusals: Record<string, string[]> = { ...lane?.refusals };
  for (const step of steps) if (step.reasons) refusals[step.sha] = step.reasons;
  // Another process's newer write (an approval) stands; this view of the lane is as good for this answer.
  const path = verified
    ? undefined
    : (await writeLane(repoPath, { trackId, base, snapshot, approvals, refusals }, read.text)).path;
  return {
    trackId,
    branch,
    defaultBranch: defaultBranch.name,
    defaultBranchSource: defaultBranch.source,
    base,
    commits: steps.length,
    snapshot,
    ...(path ? { lane: { path, resumed: lane !== undefined, approvals } } : {}),
    ...(verified ? { fromState: { ref: verified.ref, head: from } } : {}),
    ...(fetched && "note" in fetched ? { stateNote: fetched.note } : {}),
    refusals,
  };
}

/** The local lane in words: where it is kept, that it is a rehearsal, and the gates approved in it. */
export function localLane(replayed: ReplayedTrack): string {
  const lane = replayed.lane;
  if (!lane) return "";
  const approved = lane.approvals.map((a) => `${a.gate} by ${a.by}`);
  return `the local lane ${lane.path} (a rehearsal, never evidence for the app${approved.length > 0 ? `; approved at the terminal: ${approved.join(", ")}` : "; gates wait for `consort approve <gate>` at a terminal"})`;
}
