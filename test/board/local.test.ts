import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trackEvidence } from "../../src/board/evidence.js";
import { localBoardSource } from "../../src/board/local.js";
import { LONG_TRACK_TESTS_PER_UNIT, type TrackSim } from "../orchestrator/helpers/track.js";
import { compactStateBranch } from "./compact-state-branch.js";
import { localRepo, type LocalRepo } from "./local-repo.js";

/**
 * The local board reads a compact state file (issue #34) as the app's board does: its texts from
 * the checkout's git objects by blob id and every finished unit's record from consort/state (record
 * files, a record inline, a record in an earlier version's blob), so the board and its evidence JSON
 * show every unit of a 50-unit track.
 */

const KEY = "local-board-key-0123456789abcdef0123456789";
const UNITS = 50;
let repo: LocalRepo;
let sim: TrackSim;

beforeAll(async () => {
  repo = await localRepo("feature/elsewhere");
  ({ sim } = await compactStateBranch(repo.path, UNITS, LONG_TRACK_TESTS_PER_UNIT, KEY));
}, 120_000);

afterAll(() => repo?.cleanup());

describe("the local board on a compact state file", () => {
  it("shows every unit's evidence of a 50-unit track, its finished units read from their records", async () => {
    const problems: string[] = [];
    const source = localBoardSource({
      repoPath: repo.path,
      config: sim.config,
      stateKey: KEY,
      warn: (m) => problems.push(m),
    });
    try {
      const { tracks } = await source.tracks({ login: null });
      expect(problems).toEqual([]);
      const track = tracks.find((t) => t.snapshot.context.trackId === sim.snapshot.context.trackId)!;
      expect(track.provenance).toBe("signed");
      const evidence = trackEvidence(track);

      expect(evidence.units).toHaveLength(UNITS);
      expect(evidence.units.slice(0, UNITS - 1).every((unit) => unit.complete && unit.review === "accept")).toBe(true);
      expect(sim.snapshot.stage).toBe("red-verify");
      // Each finished unit's RED and GREEN, and the evidence the snapshot held of them, came back.
      for (const unit of evidence.units.slice(0, UNITS - 1))
        expect(evidence.cycles.filter((c) => c.unit === unit.id).map((c) => c.step)).toEqual(
          sim.snapshot.context.cycles.filter((c) => c.unit === unit.id).map((c) => c.step),
        );
      expect(evidence.cycles).toHaveLength(sim.snapshot.context.cycles.length);
      expect(track.snapshot.context.evidence).toEqual(sim.snapshot.context.evidence);
    } finally {
      source.close();
    }
  });
});
