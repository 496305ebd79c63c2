import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleGit } from "simple-git";
import { projectState } from "../../src/engine/projection.js";
import { gitBlobId } from "../../src/gates/hash.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import {
  compact,
  emptyTrackState,
  expand,
  sealState,
  serialiseStateFile,
  storedFormOf,
  type TrackState,
} from "../../src/state/index.js";
import { TrackSim } from "../orchestrator/helpers/track.js";

/**
 * A long track's consort/state as the app leaves it in a clone (refs/remotes/origin/consort/state):
 * three versions of the compact state file. The first holds all but the last two finished units
 * as record files (a file written in full, compacted once); the second ends a unit, its record
 * inline; the third, the next unit's RED, names the second by its blob. So a reader finds records
 * in all three places. Returns the finished sim and the state file's text.
 */
export async function compactStateBranch(
  repoPath: string,
  units: number,
  testsPerUnit: number,
  key: string,
  trackId = "f1-stock",
): Promise<{ sim: TrackSim; text: string }> {
  const sim = TrackSim.longTrack(units * testsPerUnit);
  for (let i = 0; i < units - 2; i++) sim.throughUnit();
  const early = sim.snapshot;
  sim.throughUnit();
  const ended = sim.snapshot;
  sim.pushCommits(sim.redCommit());
  const red = sim.snapshot;

  const git = simpleGit(repoPath);
  const blob = async (text: string) => {
    const file = join(repoPath, ".git", "compact-state-blob");
    await writeFile(file, text);
    const id = (await git.raw(["hash-object", "-w", file])).trim();
    await rm(file);
    return id;
  };
  const mktree = (listing: string[]) =>
    new Promise<string>((done, fail) => {
      const child = execFile("git", ["mktree"], { cwd: repoPath }, (error, stdout) =>
        error ? fail(error) : done(stdout.trim()),
      );
      child.stdin!.end(`${listing.join("\n")}\n`);
    });

  let previous: { state: TrackState; text: string } | undefined;
  let parent: string | undefined;
  const recordFiles: string[] = [];
  for (const snapshot of [early, ended, red] as TrackSnapshot[]) {
    const base = previous
      ? expand(previous.state, textsOf).state
      : emptyTrackState({
          trackId,
          repository: "acme/stockflow",
          branch: snapshot.context.branch,
          snapshot,
          now: new Date(snapshot.context.updatedAt),
        });
    const compacted = compact(
      projectState(base, snapshot),
      previous
        ? { stored: storedFormOf(previous.state), loaded: undefined, blob: gitBlobId(previous.text) }
        : { stored: undefined, loaded: undefined },
      snapshot.context.head,
    );
    for (const [id, text] of compacted.texts) {
      textsOf.set(id, text);
      if ((await blob(text)) !== id) throw new Error(`git names the text ${id} otherwise`);
    }
    for (const record of compacted.records)
      recordFiles.push(`100644 blob ${await blob(record.text)}\t${record.path.split("/").pop()}`);
    const text = serialiseStateFile(sealState(compacted.state, key));
    const own =
      recordFiles.length > 0
        ? [`040000 tree ${await mktree([`040000 tree ${await mktree(recordFiles)}\tunits`])}\t${trackId}`]
        : [];
    const tracks = await mktree([`100644 blob ${await blob(text)}\t${trackId}.json`, ...own]);
    const root = await mktree([`040000 tree ${tracks}\ttracks`]);
    parent = (await git.raw(["commit-tree", root, ...(parent ? ["-p", parent] : []), "-m", "state"])).trim();
    previous = { state: compacted.state, text };
  }
  await git.raw(["update-ref", "refs/remotes/origin/consort/state", parent!]);
  return { sim, text: previous!.text };
}

/** The texts the versions refer to, by blob id, for expanding the one before. */
const textsOf = new Map<string, string>();
