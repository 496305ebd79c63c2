import { ConsortConfig, type ConsortConfigInput } from "../../src/config/consort-config.js";
import type { BoardTrack } from "../../src/board/view.js";
import type { Stage } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";

/** A board track driven through the real machine to `stage` (StockFlow, two tests), as a source hands it over. */
export function boardTrack(
  stage: Stage,
  options: { repository?: string; config?: ConsortConfigInput; provenance?: BoardTrack["provenance"] } = {},
): BoardTrack {
  const config = ConsortConfig.parse({ repairBound: 2, ...options.config });
  const sim = reach(stage, { repairBound: 2, ...options.config });
  return {
    repository: options.repository ?? "acme/stockflow",
    snapshot: sim.snapshot,
    config,
    provenance: options.provenance ?? "signed",
  };
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
