import { ConsortConfig, type ConsortConfigInput } from "../../src/config/consort-config.js";
import type { BranchCommit } from "../../src/board/timeline.js";
import type { BoardTrack } from "../../src/board/view.js";
import { throwawayBranchName } from "../../src/cycle/run.js";
import type { Stage, TrackEvent, TrackSnapshot } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";
import { TrackSim, type CommitSpec } from "../orchestrator/helpers/track.js";

type TrackOptions = { repository?: string; config?: ConsortConfigInput; provenance?: BoardTrack["provenance"] };

/** Each cycle ran on a throwaway branch, as the app records it from the cycle's result (src/engine/ingest.ts). */
function withCycleBranches(snapshot: TrackSnapshot): TrackSnapshot {
  const { context } = snapshot;
  const cycles = context.cycles.map((cycle, index) =>
    cycle.evidence && cycle.step !== "release"
      ? {
          ...cycle,
          evidence: { ...cycle.evidence, databaseBranch: throwawayBranchName(context.databaseBranch, `c${index}`) },
        }
      : cycle,
  );
  return { ...snapshot, context: { ...context, cycles } };
}

function asBoardTrack(sim: TrackSim, options: TrackOptions): BoardTrack {
  return {
    repository: options.repository ?? "acme/stockflow",
    snapshot: withCycleBranches(sim.snapshot),
    config: ConsortConfig.parse({ repairBound: 2, ...options.config }),
    provenance: options.provenance ?? "signed",
  };
}

/** A board track driven through the real machine to `stage` (StockFlow, two tests), as a source hands it over. */
export function boardTrack(stage: Stage, options: TrackOptions = {}): BoardTrack {
  return asBoardTrack(reach(stage, { repairBound: 2, ...options.config }), options);
}

/**
 * A board track with the commits of its branch as a source lists them: every commit the machine was
 * pushed on the way to `stage`, then each of `refused` pushed on top, one push each (the machine
 * refuses them for real: the first for what it is, the rest for the rejected commit under them).
 */
export function trackWithCommits(
  stage: Stage,
  refused: CommitSpec[] = [],
  options: TrackOptions = {},
): { track: BoardTrack; commits: BranchCommit[] } {
  const pushed: BranchCommit[] = [];
  const send = TrackSim.prototype.send;
  // Each push the sim sends is recorded as the branch's commits (one minute apart, as its clock).
  TrackSim.prototype.send = function (this: TrackSim, event: TrackEvent) {
    if (event.type === "push")
      for (const commit of event.commits)
        pushed.push({
          sha: commit.sha,
          at: event.at,
          author: commit.authorLogin,
          message: commit.message,
          merge: false,
          url: `https://github.com/${options.repository ?? "acme/stockflow"}/commit/${commit.sha}`,
        });
    return send.call(this, event);
  };
  try {
    const sim = reach(stage, { repairBound: 2, ...options.config });
    for (const spec of refused) sim.push(spec);
    return { track: asBoardTrack(sim, options), commits: pushed };
  } finally {
    TrackSim.prototype.send = send;
  }
}

/** The same track under another branch name and id (several tracks on one board). */
export function renamed(track: BoardTrack, branch: string): BoardTrack {
  const trackId = branch.toLowerCase().replace(/[^a-z0-9._-]+/g, "-");
  return {
    ...track,
    snapshot: { ...track.snapshot, context: { ...track.snapshot.context, branch, trackId } },
  };
}

export const NOW = new Date("2026-11-30T12:00:00Z");
