import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { projectState } from "../../src/engine/projection.js";
import { restoreSnapshot, transition } from "../../src/orchestrator/index.js";
import {
  createStateStore,
  emptyTrackState,
  TamperedStateError,
  unitRecordPath,
  type TrackState,
} from "../../src/state/index.js";
import { FakeStateBranch, FULL_NAME, TEST_STATE_KEY } from "../handlers/fake-repo.js";
import { GitHubMock } from "../helpers/github.js";
import { TrackSim } from "../orchestrator/helpers/track.js";
import { octokit } from "../state/helpers.js";

/**
 * A finished unit's record on consort/state (tracks/<id>/units/<n>.json, src/state/compact.ts) is
 * evidence a person relies on: the sealed state names each record's sha256, so a record rewritten
 * past the branch's ruleset (a RED that never failed made to look verified, a review turned into
 * an accept) is refused wherever the history is read, naming the record.
 */

const TRACK = "feature-records";
let github: GitHubMock;
let branch: FakeStateBranch;
let sim: TrackSim;
let full: TrackState;

beforeAll(() => {
  sim = TrackSim.longTrack(30);
  sim.throughUnit().throughUnit();
  full = projectState(
    emptyTrackState({
      trackId: TRACK,
      repository: FULL_NAME,
      branch: sim.context.branch,
      snapshot: sim.snapshot,
      now: new Date("2026-11-30T09:00:00Z"),
    }),
    sim.snapshot,
  );
});
beforeEach(async () => {
  github = new GitHubMock();
  branch = new FakeStateBranch(github);
  branch.seed(full);
  // The first write compacts the track: the two finished units go to their records.
  const outcome = await store().update(TRACK, "delivery-red", (current) => {
    const red = sim.redCommit();
    const event = {
      type: "push" as const,
      at: "2026-12-01T09:00:00Z",
      before: sim.context.head,
      after: red.sha,
      forced: false,
      commits: [red],
    };
    return projectState(current!, transition(restoreSnapshot(current!.snapshot), event, sim.config).snapshot);
  });
  expect(outcome.outcome).toBe("written");
});
afterEach(() => github.dispose());

const store = () => createStateStore({ octokit: octokit(), owner: "acme", repo: "shop", key: TEST_STATE_KEY });

describe("a finished unit's record", () => {
  it("is read back as written when nobody touched it", async () => {
    const state = await store().read(TRACK, { history: true });
    expect(Object.keys(restoreSnapshot(state!.snapshot).context.evidence)).toEqual(["S1-AC1", "S1-AC2"]);
  });

  it("rewritten on consort/state (its review made an accept it never was) is refused, naming the record", async () => {
    const path = unitRecordPath(TRACK, 1);
    const record = JSON.parse(branch.text(path)!) as { evidence: { review: { verdict: string } } };
    record.evidence.review.verdict = "refactor";
    branch.write(path, `${JSON.stringify(record, null, 2)}\n`);

    const read = store().read(TRACK, { history: true });
    await expect(read).rejects.toBeInstanceOf(TamperedStateError);
    await expect(store().read(TRACK, { history: true })).rejects.toThrow(
      `the record of unit S1-AC1, ${path}, is not the one the sealed state names`,
    );
  });

  it("deleted from consort/state is refused, naming the record", async () => {
    const path = unitRecordPath(TRACK, 2);
    branch.remove(path);
    await expect(store().read(TRACK, { history: true })).rejects.toThrow(
      `the record of unit S1-AC2, ${path}, is missing`,
    );
  });
});
