import { trackEvidence } from "../src/board/evidence.js";
import { boardPage, trackPage } from "../src/board/pages.js";
import type { BoardTrack } from "../src/board/view.js";
import type { Stage } from "../src/orchestrator/types.js";
import { boardTrack, NOW, renamed } from "../test/board/fixtures.js";
import { benchRuns, measure, printJson, printTable, tailEntry, wantsJson } from "./lib.js";

/**
 * `npm run bench:board`: the server time to render the board for 50 tracks in flight (five
 * repositories, ten stages from the design gate to the promote gate, each track driven through the
 * real machine), against serialising the same 50 snapshots as JSON, the least a server must do to
 * send them. Also one track's page and its evidence. Goal: the board under 100 ms. With --json the
 * last line is { board50_ms_median, board50_ms_p95 } (the tail the run count supports: bench/lib.ts).
 */

const STAGES: Stage[] = [
  "design-gate",
  "test-list-gate",
  "red",
  "green-verify",
  "repair",
  "review",
  "refactor-verify",
  "blocked",
  "deploy-gate",
  "promote-gate",
];
const seeds = STAGES.map((stage) => boardTrack(stage));
const tracks: BoardTrack[] = Array.from({ length: 50 }, (_, index) => ({
  ...renamed(seeds[index % seeds.length]!, `feature/track-${index}`),
  repository: `acme/service-${index % 5}`,
}));
const context = { base: "/consort", viewer: "lead-human", signOut: true, now: NOW, events: "/consort/events" };
const runs = benchRuns(30);

const rows = [
  await measure("JSON of 50 snapshots (baseline)", () => JSON.stringify(tracks.map((t) => t.snapshot)), { runs }),
  await measure("board, 50 tracks", () => boardPage(tracks, context, { mine: false }), { runs }),
  await measure("board, 50 tracks, waiting for me", () => boardPage(tracks, context, { mine: true }), { runs }),
  await measure("track page", () => trackPage(tracks[8]!, context), { runs }),
  await measure("evidence JSON", () => JSON.stringify(trackEvidence(tracks[8]!)), { runs }),
];
printTable("Board rendering (server time, pure: no I/O)", rows, { baseline: "JSON of 50 snapshots (baseline)" });
const board = rows[1]!;
console.log(`\ngoal: board for 50 tracks under 100 ms (median ${board.median.toFixed(1)} ms)`);
if (wantsJson()) printJson({ board50_ms_median: Number(board.median.toFixed(2)), ...tailEntry("board50_ms", board) });
