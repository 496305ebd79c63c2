import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { projectState } from "../../src/engine/projection.js";
import { trackEvidence } from "../../src/board/evidence.js";
import {
  describeLane,
  restoreSnapshot,
  transition,
  type PushEvent,
  type TrackSnapshot,
} from "../../src/orchestrator/index.js";
import {
  compact,
  createStateStore,
  emptyTrackState,
  expand,
  serialiseStateFile,
  sealState,
  storedFormOf,
  UnitRecord,
  unitRecordPath,
  withRecords,
  type TrackState,
} from "../../src/state/index.js";
import { FakeStateBranch, FULL_NAME, TEST_STATE_KEY } from "../handlers/fake-repo.js";
import { GitHubMock } from "../helpers/github.js";
import { LONG_TRACK_TESTS_PER_UNIT, TrackSim } from "../orchestrator/helpers/track.js";
import { octokit } from "./helpers.js";
import { gitBlobId } from "../../src/gates/hash.js";

/**
 * The state file of a long track stays bounded (issue #34): a 500-test track of 50 units, its
 * state as the app projects it after every step, compacted as the store writes it.
 */

const TESTS = 500;
const UNITS = TESTS / LONG_TRACK_TESTS_PER_UNIT;
const TRACK = "feature-f1-stock";

/** The frozen texts of a snapshot, each resolved whole (held whole or as a prefix of another). */
function resolvedTexts(snapshot: TrackSnapshot): Record<string, string> {
  const texts = snapshot.context.frozenTexts;
  const out: Record<string, string> = {};
  for (const entry of Object.values(snapshot.context.frozenTests)) {
    const stored = texts[entry.hash]!;
    out[entry.hash] = typeof stored === "string" ? stored : (texts[stored.of] as string).slice(0, stored.length);
  }
  return out;
}

/** The snapshot without its frozen texts' representation, which a record holds whole. */
const comparable = (snapshot: TrackSnapshot) => ({
  ...snapshot,
  context: { ...snapshot.context, frozenTexts: resolvedTexts(snapshot) },
});

/** The navigator's RED push for the unit in turn, onto the track's head. */
function redPush(track: TrackSim): PushEvent {
  const red = track.redCommit();
  return {
    type: "push",
    at: "2026-12-01T09:00:00Z",
    before: track.context.head,
    after: red.sha,
    forced: false,
    commits: [red],
  };
}

let sim: TrackSim;
let full: TrackState;
beforeAll(() => {
  sim = TrackSim.longTrack(TESTS);
  for (let i = 1; i < UNITS; i++) sim.throughUnit();
  const start = emptyTrackState({
    trackId: TRACK,
    repository: FULL_NAME,
    branch: sim.context.branch,
    snapshot: sim.snapshot,
    now: new Date("2026-11-30T09:00:00Z"),
  });
  full = projectState(start, sim.snapshot);
});

describe("a 50-unit track's state, compacted", () => {
  it("is at most 64 KiB, with one record per finished unit, each written once", () => {
    const compacted = compact(full, { stored: undefined, loaded: undefined }, sim.context.head);
    const text = serialiseStateFile(sealState(compacted.state, TEST_STATE_KEY));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(64 * 1024);
    expect(compacted.records.map((r) => r.path)).toEqual(
      Array.from({ length: UNITS - 1 }, (_, i) => unitRecordPath(TRACK, i + 1)),
    );
    for (const record of compacted.records) expect(Buffer.byteLength(record.text)).toBeLessThanOrEqual(64 * 1024);
    // No text git holds is copied into the state: each is named by its blob id.
    expect(text).not.toContain("a location keeps its count through a transfer");
  });

  it("gives back, with its records, every unit's evidence, cycles, frozen tests and reviews", () => {
    const compacted = compact(full, { stored: undefined, loaded: undefined }, sim.context.head);
    const records = compacted.records.map((r) => UnitRecord.parse(JSON.parse(r.text)));
    const { state } = expand(compacted.state, compacted.texts);
    const merged = withRecords(state, records, compacted.texts);
    const snapshot = restoreSnapshot(merged.snapshot);
    expect(comparable(snapshot)).toEqual(comparable(sim.snapshot));
    expect(merged.cycles).toEqual(full.cycles);
    expect(Object.keys(snapshot.context.evidence)).toHaveLength(UNITS - 1); // the unit in turn has none before its RED
  });

  it("without its records, holds what the next decision needs: the same snapshot but the finished units' past", () => {
    const compacted = compact(full, { stored: undefined, loaded: undefined }, sim.context.head);
    const snapshot = restoreSnapshot(expand(compacted.state, compacted.texts).state.snapshot);
    const context = sim.snapshot.context;
    expect(snapshot.stage).toBe(sim.snapshot.stage);
    expect(snapshot.context.units).toEqual(context.units);
    expect(snapshot.context.artifacts[".consort/test-list.json"]).toBe(context.artifacts[".consort/test-list.json"]);
    expect(snapshot.context.testFiles).toEqual(context.testFiles);
    expect(Object.keys(snapshot.context.evidence)).toEqual([]);
    // The next step is decided the same on both.
    const event = redPush(sim);
    const fromSlim = transition(snapshot, event, sim.config);
    const fromFull = transition(sim.snapshot, event, sim.config);
    expect(fromSlim.rejection).toBeUndefined();
    expect(fromSlim.snapshot.stage).toBe(fromFull.snapshot.stage);
    expect(fromSlim.effects).toEqual(fromFull.effects);
  });

  it("is compacted again to the same file, writing no record, when nothing finished", () => {
    const first = compact(full, { stored: undefined, loaded: undefined }, sim.context.head);
    const { state, stored } = expand(first.state, first.texts);
    const again = compact(state, { stored, loaded: undefined }, sim.context.head);
    expect(again.records).toEqual([]);
    expect(again.state).toEqual(first.state);
  });
});

describe("a track in flight across the upgrade, through the store", () => {
  let github: GitHubMock;
  let branch: FakeStateBranch;
  beforeEach(() => {
    github = new GitHubMock();
    branch = new FakeStateBranch(github);
  });
  afterEach(() => {
    github.verify();
    github.dispose();
  });

  const store = () =>
    createStateStore({ octokit: octokit(), owner: "acme", repo: "shop", key: TEST_STATE_KEY, retryDelayMs: 0 });

  it("opens a 50-unit state file written in full by today's serialiser, advances it, and keeps every unit's evidence", async () => {
    // As the code before this change sealed and wrote it: the whole snapshot in one file.
    branch.seed(full);
    const written = branch.text(`tracks/${TRACK}.json`)!;
    expect(storedFormOf(JSON.parse(written) as TrackState)).toBeUndefined();

    const outcome = await store().update(TRACK, "delivery-red", (current) => {
      const result = transition(restoreSnapshot(current!.snapshot), redPush(sim), sim.config);
      expect(result.rejection).toBeUndefined();
      return projectState(current!, result.snapshot);
    });

    expect(outcome.outcome).toBe("written");
    expect(restoreSnapshot(outcome.state!.snapshot).stage).toBe("red-verify");
    // One commit: the compact state and a record per finished unit.
    expect(branch.updates.filter((u) => u.accepted)).toHaveLength(1);
    expect(Buffer.byteLength(branch.text(`tracks/${TRACK}.json`)!)).toBeLessThanOrEqual(64 * 1024);
    for (let n = 1; n < UNITS; n++) expect(branch.text(unitRecordPath(TRACK, n))).toBeDefined();

    const next = await store().read(TRACK);
    expect(restoreSnapshot(next!.snapshot).stage).toBe("red-verify");
    const withHistory = await store().read(TRACK, { history: true });
    const snapshot = restoreSnapshot(withHistory!.snapshot);
    expect(Object.keys(snapshot.context.evidence)).toHaveLength(UNITS - 1); // the unit in turn has none before its RED
    expect(snapshot.context.cycles.filter((c) => c.outcome === "valid").length).toBe(
      sim.snapshot.context.cycles.filter((c) => c.outcome === "valid").length,
    );

    // The evidence JSON and the status a person reads list every unit, as for the track never compacted.
    const board = (s: TrackSnapshot) =>
      trackEvidence({ repository: FULL_NAME, snapshot: s, config: sim.config, provenance: "signed" });
    const evidence = board(snapshot);
    const before = board(sim.snapshot);
    expect(evidence.units).toHaveLength(UNITS);
    expect(evidence.units.filter((u) => u.complete)).toHaveLength(UNITS - 1);
    expect(evidence.units).toEqual(before.units);
    // Every cycle the track ran, and the RED this push dispatched.
    expect(evidence.cycles.map((c) => c.dispatchId)).toEqual([
      ...before.cycles.map((c) => c.dispatchId),
      snapshot.context.pendingDispatch!.dispatchId,
    ]);
    expect(describeLane(snapshot).done).toEqual(describeLane(sim.snapshot).done);
  });
});

describe("the step that ends a unit, through the store", () => {
  let github: GitHubMock;
  let branch: FakeStateBranch;
  beforeEach(() => {
    github = new GitHubMock();
    branch = new FakeStateBranch(github);
  });
  afterEach(() => {
    github.verify();
    github.dispose();
  });

  const store = () =>
    createStateStore({ octokit: octokit(), owner: "acme", repo: "shop", key: TEST_STATE_KEY, retryDelayMs: 0 });
  const path = `tracks/${TRACK}.json`;
  const storedForm = () => storedFormOf(JSON.parse(branch.text(path)!) as TrackState)!;
  const writes = () => github.requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);

  it("writes one file holding the unit's record; the next version names that one's blob; no crash between loses it", async () => {
    const track = TrackSim.longTrack(3 * LONG_TRACK_TESTS_PER_UNIT);
    branch.seed(
      projectState(
        emptyTrackState({
          trackId: TRACK,
          repository: FULL_NAME,
          branch: track.context.branch,
          snapshot: track.snapshot,
          now: new Date("2026-11-30T09:00:00Z"),
        }),
        track.snapshot,
      ),
    );
    let delivery = 0;
    const step = async (snapshot: TrackSnapshot) => {
      const outcome = await store().update(TRACK, `delivery-${++delivery}`, (current) =>
        projectState(current!, snapshot),
      );
      expect(outcome.outcome).toBe("written");
    };
    const from = track.results.length;
    track.throughUnit();
    const unit = track.context.units[0]!.id;
    for (const result of track.results.slice(from)) await step(result.snapshot);

    // The review that ends the unit was one Contents API write, its record inline in that version.
    const reviewWrite = writes().slice(-1);
    expect(reviewWrite).toEqual([expect.stringMatching(/^PUT .*\/contents\/tracks/)]);
    expect(writes().filter((w) => w.includes("/git/"))).toEqual([]);
    expect(branch.text(unitRecordPath(TRACK, 1))).toBeUndefined();
    expect(Object.keys(storedForm().pending ?? {})).toEqual([unit]);
    const holding = branch.text(path)!;

    // Read now (the process that wrote it gone before any next write): every finished unit's evidence is there.
    const expected = track.snapshot.context.evidence[unit];
    expect(expected?.complete).toBe(true);
    const afterCrash = restoreSnapshot((await store().read(TRACK, { history: true }))!.snapshot);
    expect(afterCrash.context.evidence[unit]).toEqual(expected);

    // The next step names the version that holds the record by its blob, and holds it no more.
    const next = track.results.length;
    track.pushCommits(track.redCommit());
    for (const result of track.results.slice(next)) await step(result.snapshot);
    expect(storedForm().pending).toBeUndefined();
    expect(storedForm().records[unit]).toMatchObject({ n: 1, heldIn: gitBlobId(holding) });
    const later = restoreSnapshot((await store().read(TRACK, { history: true }))!.snapshot);
    expect(later.context.evidence[unit]).toEqual(expected);
    expect(later.context.cycles.filter((c) => c.unit === unit)).toEqual(
      track.snapshot.context.cycles.filter((c) => c.unit === unit),
    );
  });
});
