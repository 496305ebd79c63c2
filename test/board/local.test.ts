import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simpleGit } from "simple-git";
import { trackEvidence } from "../../src/board/evidence.js";
import { localBoardSource } from "../../src/board/local.js";
import { projectState } from "../../src/engine/projection.js";
import { compact, emptyTrackState, sealState, serialiseStateFile, storedFormOf } from "../../src/state/index.js";
import { LONG_TRACK_TESTS_PER_UNIT, TrackSim } from "../orchestrator/helpers/track.js";
import { localRepo, type LocalRepo } from "./local-repo.js";

/**
 * The local board reads a compact state file (issue #34) as the app's board does: its texts from
 * the checkout's git objects by blob id and every finished unit's record from consort/state, so
 * the board and its evidence JSON show every unit of a 50-unit track.
 */

const KEY = "local-board-key-0123456789abcdef0123456789";
const UNITS = 50;
let repo: LocalRepo;
let sim: TrackSim;

/** `git mktree` of `listing` (one `mode type id\tname` a line). */
function mktree(path: string, listing: string[]): Promise<string> {
  return new Promise((done, fail) => {
    const child = execFile("git", ["mktree"], { cwd: path }, (error, stdout) =>
      error ? fail(error) : done(stdout.trim()),
    );
    child.stdin!.end(`${listing.join("\n")}\n`);
  });
}

beforeAll(async () => {
  sim = TrackSim.longTrack(UNITS * LONG_TRACK_TESTS_PER_UNIT);
  for (let i = 0; i < UNITS - 1; i++) sim.throughUnit();
  repo = await localRepo("feature/elsewhere");
  const snapshot = sim.snapshot;
  const trackId = "f1-stock";
  const state = projectState(
    emptyTrackState({
      trackId,
      repository: "acme/stockflow",
      branch: snapshot.context.branch,
      snapshot,
      now: new Date(snapshot.context.updatedAt),
    }),
    snapshot,
  );
  // As the app leaves it: the state compact, each finished unit's record beside it, the texts in git.
  const compacted = compact(state, { stored: undefined, loaded: undefined }, snapshot.context.head);
  const git = simpleGit(repo.path);
  const blob = async (text: string) => {
    const file = join(repo.path, ".git", "local-test-blob");
    await writeFile(file, text);
    const id = (await git.raw(["hash-object", "-w", file])).trim();
    await rm(file);
    return id;
  };
  for (const [id, text] of compacted.texts) expect(await blob(text)).toBe(id);
  const records: string[] = [];
  for (const record of compacted.records)
    records.push(`100644 blob ${await blob(record.text)}\t${record.path.split("/").pop()}`);
  const units = await mktree(repo.path, records);
  const own = await mktree(repo.path, [`040000 tree ${units}\tunits`]);
  const file = await blob(serialiseStateFile(sealState(compacted.state, KEY)));
  const tracks = await mktree(repo.path, [`100644 blob ${file}\t${trackId}.json`, `040000 tree ${own}\t${trackId}`]);
  const root = await mktree(repo.path, [`040000 tree ${tracks}\ttracks`]);
  const commit = (await git.raw(["commit-tree", root, "-m", "state"])).trim();
  await git.raw(["update-ref", "refs/remotes/origin/consort/state", commit]);
  expect(storedFormOf(compacted.state)?.recordCount).toBe(UNITS - 1);
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
