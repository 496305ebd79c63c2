import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { createTrack, transition, type TrackSnapshot } from "../orchestrator/index.js";
import { trackIdForBranch } from "../state/index.js";
import { sanitiseBranchName } from "../substrate/index.js";
import { localPush } from "./local-push.js";
import { ToolError } from "./registry.js";
import { currentBranch } from "./track-state.js";

/**
 * A track's state on a plain checkout, with no state file, no token and no network: the track as
 * the app would have started it at the branch's merge base with the default branch, and the
 * branch's commits since then pushed through the same machine (`createTrack`, then `transition`
 * of the push event `localPush` builds from git, as the push webhook would carry it). Only what
 * commits decide is known here: every gate stays waiting for its approval, and a step after a
 * gate or a cycle stands refused until the app has seen them.
 */

export interface ReplayedTrack {
  trackId: string;
  branch: string;
  defaultBranch: string;
  /** The merge base the track starts at. */
  base: string;
  commits: number;
  snapshot: TrackSnapshot;
}

/** The default branch as this checkout knows it: origin's HEAD, else a local or remote main/master. */
async function defaultBranchOf(repoPath: string): Promise<{ name: string; ref: string }> {
  const git = simpleGit(repoPath);
  const originHead = await git
    .raw(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"])
    .then((ref) => ref.trim())
    .catch(() => "");
  if (originHead) return { name: originHead.replace(/^refs\/remotes\/origin\//, ""), ref: originHead };
  for (const name of ["main", "master"]) {
    for (const ref of [`refs/heads/${name}`, `refs/remotes/origin/${name}`]) {
      // simple-git resolves a failed `--quiet` call with no output, so the output decides.
      const found = await git
        .raw(["rev-parse", "--verify", "--quiet", ref])
        .then((sha) => sha.trim() !== "")
        .catch(() => false);
      if (found) return { name, ref };
    }
  }
  throw new ToolError(
    `Could not tell the default branch of ${repoPath}: no origin/HEAD and no main or master branch.`,
    "Fetch the default branch (git fetch origin; git remote set-head origin --auto), or pass a state file.",
    "NO_DEFAULT_BRANCH",
  );
}

export async function replayTrack(repoPath: string, config: ConsortConfig, at: string): Promise<ReplayedTrack> {
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
  const started = createTrack(
    {
      trackId,
      branch,
      baseBranch: defaultBranch.name,
      head: base,
      databaseBranch: sanitiseBranchName(branch),
      parentDatabaseBranch: sanitiseBranchName(defaultBranch.name),
      at,
    },
    config,
  );
  // One push per commit, as an agent pushes each step: the machine decides each on the stage it reaches.
  const push = await localPush(repoPath, base, config, at);
  let snapshot = started.snapshot;
  let before = base;
  for (const commit of push.commits) {
    snapshot = transition(
      snapshot,
      { ...push, before, after: commit.sha, forced: false, commits: [commit] },
      config,
    ).snapshot;
    before = commit.sha;
  }
  return { trackId, branch, defaultBranch: defaultBranch.name, base, commits: push.commits.length, snapshot };
}
