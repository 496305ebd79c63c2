import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import { checkStateFile, openStateFile, TamperedStateError, trackPath } from "../../src/state/index.js";
import { lanePath } from "../../src/tools/local-lane.js";
import { replayTrack } from "../../src/tools/replay.js";
import { localRepo, storiesOnly, type LocalRepo } from "../board/local-repo.js";

/**
 * The local lane (.git/consort/tracks/<id>.json) is a rehearsal: nothing local is evidence for the
 * app. An adversary who copies a lane file (with its terminal approvals) onto consort/state as the
 * track's state file gets it refused by the app's state reader, and by the CLI's reading of a
 * fetched consort/state, because it carries no seal made with the app's key.
 */

const KEY = "k".repeat(32);
let repo: LocalRepo;
let trackId: string;
let laneText: string;
beforeAll(async () => {
  repo = await localRepo("feature/lane-evidence");
  await repo.commitAs("product-owner", "Stories", { ".consort/spec.json": await storiesOnly() });
  const track = await replayTrack(repo.path, defaultConfig(), new Date().toISOString());
  trackId = track.trackId;
  laneText = await readFile(await lanePath(repo.path, trackId), "utf8");
}, 60_000);
afterAll(() => repo?.cleanup());

describe("a local lane presented to the app as a track's state", () => {
  test("the app's state reader refuses it: it is not a sealed state file", () => {
    const { problems } = checkStateFile(laneText, KEY, { trackId });
    expect(problems.length).toBeGreaterThan(0);
    expect(() => openStateFile(laneText, KEY, { trackId, path: trackPath(trackId) })).toThrow(TamperedStateError);
  });

  test("the CLI does not take it from a fetched consort/state either, and says why", async () => {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo.path, encoding: "utf8" }).trim();
    const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo.path, input: laneText })
      .toString()
      .trim();
    const inner = execFileSync("git", ["mktree"], { cwd: repo.path, input: `100644 blob ${blob}\t${trackId}.json\n` })
      .toString()
      .trim();
    const root = execFileSync("git", ["mktree"], { cwd: repo.path, input: `040000 tree ${inner}\ttracks\n` })
      .toString()
      .trim();
    git("update-ref", "refs/remotes/origin/consort/state", git("commit-tree", root, "-m", "state"));
    const track = await replayTrack(repo.path, defaultConfig(), new Date().toISOString(), { stateKey: KEY });
    expect(track.fromState).toBeUndefined();
    expect(track.stateNote).toMatch(
      /^origin\/consort\/state:tracks\/[\w-]+\.json does not verify, so it is not used: /,
    );
  });
});
