import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { createTrack, restoreSnapshot, type TrackSnapshot, type TransitionResult } from "../orchestrator/index.js";
import {
  expandStored,
  openStateFile,
  gitStoredSource,
  STATE_REFS,
  trackIdForBranch,
  trackPath,
  unsealed,
} from "../state/index.js";
import { configuredRootBranch, sanitiseBranchName } from "../substrate/index.js";
import { defaultBranchOf, DefaultBranchError } from "../push/default-branch.js";
import { localPushes } from "./local-push.js";
import { workflowRequestOf } from "../engine/requests.js";
import { LaneRequest, lanePath, loadLane, writeLane, type LaneRun, type LocalApproval } from "./local-lane.js";
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
  lane?: {
    path: string;
    resumed: boolean;
    approvals: LocalApproval[];
    /** The cycle or release the machine asked for and nobody ran yet (`consort cycle` runs it). */
    pending?: LaneRequest;
    runs: LaneRun[];
  };
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

/**
 * The job the machine waits for, as the app would have dispatched it: the request a push's
 * transition dispatched (`workflowRequestOf`, the app's own builder), or the one the lane kept,
 * while the machine still waits for that dispatch; none once it waits for nothing (or for a
 * promotion, which only a merge on GitHub brings).
 */
export function pendingRequest(
  kept: LaneRequest | undefined,
  results: TransitionResult[],
  branch: string,
  snapshot: TrackSnapshot,
): LaneRequest | undefined {
  const waiting = snapshot.context.pendingDispatch?.dispatchId;
  if (!waiting) return undefined;
  const dispatched = results.flatMap((result) =>
    result.effects.flatMap((effect) => {
      const request = workflowRequestOf(effect, branch, result.snapshot);
      return request && request.workflow !== "promote" ? [LaneRequest.parse(request)] : [];
    }),
  );
  return [...(kept ? [kept] : []), ...dispatched].findLast((request) => request.dispatchId === waiting);
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
  const defaultBranch = await defaultBranchOf(repoPath).catch((error: unknown) => {
    if (error instanceof DefaultBranchError) throw new ToolError(error.message, error.hint, error.code);
    throw error;
  });
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
            // As the app pairs it: the default branch's database is the provider's root.
            parentDatabaseBranch: configuredRootBranch(config.database) ?? sanitiseBranchName(defaultBranch.name),
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
  // Only the refusals of commits still on the branch: a reset leaves the others to nobody.
  const refusals: Record<string, string[]> = Object.fromEntries(
    Object.entries(lane?.refusals ?? {}).filter(([sha]) => times.has(sha)),
  );
  for (const step of steps) if (step.reasons) refusals[step.sha] = step.reasons;
  const pending = pendingRequest(
    lane?.pending,
    steps.map((step) => step.result),
    branch,
    snapshot,
  );
  const runs = lane?.runs ?? [];
  // Another process's newer write (an approval) stands; this view of the lane is as good for this answer.
  const path = verified
    ? undefined
    : (
        await writeLane(
          repoPath,
          {
            trackId,
            base,
            snapshot,
            approvals,
            refusals,
            ...(pending ? { pending } : {}),
            ...(lane?.runs ? { runs } : {}),
          },
          read.text,
        )
      ).path;
  return {
    trackId,
    branch,
    defaultBranch: defaultBranch.name,
    defaultBranchSource: defaultBranch.source,
    base,
    commits: steps.length,
    snapshot,
    ...(path ? { lane: { path, resumed: lane !== undefined, approvals, runs, ...(pending ? { pending } : {}) } } : {}),
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
