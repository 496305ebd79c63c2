import { ARTIFACT_PATHS } from "../artifacts/paths.js";
import { hasUserFacingStory } from "../artifacts/spec.js";
import { authorOf, type ArtifactStep } from "../roles/roles.js";
import { gateAtStage, isBuildStage, type Stage, type TrackSnapshot } from "./types.js";

/**
 * The lane of a track: every station from the first story to the promotion, and where the track
 * stands on it. One model, derived from the snapshot alone; `consort next` and `status`, the check
 * runs, the sticky comment and the board each render it (as lines of text or as a picture).
 */

/**
 * `done` and `ahead` lie behind and before the track; the station it stands at is `current`, or
 * `waiting` (a gate for a person's approval) or `failed` (blocked, ended, a refused commit, a
 * problem the last push or cycle reported).
 */
export type LaneStationStatus = "done" | "current" | "waiting" | "failed" | "ahead";

/** One station: a design step, a gate, a unit of the build (or the build before its units exist), a release step. */
export interface LaneStation {
  /** The stage it stands for (`stories`, `design-gate`, `deploying`…), `unit:<id>` for a unit, `build` before the test list. */
  key: Stage | `unit:${string}` | "build";
  kind: "step" | "gate" | "unit";
  /** What it is, with who acts ("architecture (architect)", "T1: red → green → review"). */
  label: string;
  /** The unit's id, or "build" for the build before its units exist; null for every other station. */
  unit: string | null;
  status: LaneStationStatus;
}

export interface Lane {
  stage: Stage;
  stations: LaneStation[];
  /** Set while the track is blocked: why (empty when no reason was recorded). */
  blocked: { reason: string } | null;
  /** Set while a refused commit sits on the branch: the track moves on once it is reset. */
  halted: { sha: string } | null;
  /** Set once the track is abandoned: why. */
  ended: { reason: string } | null;
}

type Station = Omit<LaneStation, "status"> & { stages: readonly Stage[] };

const step = (stage: ArtifactStep, what: string): Station => ({
  key: stage,
  kind: "step",
  label: `${what} (${authorOf(stage)})`,
  unit: null,
  stages: [stage],
});
const gate = (stage: Stage, what: string): Station => ({
  key: stage,
  kind: "gate",
  label: `${what} (a person approves)`,
  unit: null,
  stages: [stage],
});
const release = (stage: Stage, label: string): Station => ({
  key: stage,
  kind: "step",
  label,
  unit: null,
  stages: [stage],
});

/** Whether the lane visits the screens: the track is there, it has written them, or its spec names a user-facing story. */
function visitsUx(snapshot: TrackSnapshot, effective: Stage): boolean {
  const { artifacts } = snapshot.context;
  return (
    effective === "ux" ||
    artifacts[ARTIFACT_PATHS.ux] !== undefined ||
    hasUserFacingStory(artifacts[ARTIFACT_PATHS.spec])
  );
}

function stationsOf(snapshot: TrackSnapshot, effective: Stage): Station[] {
  const { units } = snapshot.context;
  const build: Station[] =
    units.length > 0
      ? units.map((unit) => ({
          key: `unit:${unit.id}` as const,
          kind: "unit" as const,
          label: `${unit.id}: red → green → review${unit.tests.length > 1 ? ` (${unit.tests.map((t) => t.id).join(", ")})` : ""}`,
          unit: unit.id,
          stages: [],
        }))
      : [{ key: "build", kind: "unit", label: "build: red → green → review per test", unit: "build", stages: [] }];
  return [
    step("stories", "stories and acceptance criteria"),
    step("spec", "spec and NFRs"),
    step("architecture", "architecture"),
    step("db-design", "database design"),
    ...(visitsUx(snapshot, effective) ? [step("ux", "screens and states")] : []),
    gate("design-gate", "design gate"),
    step("test-list", "test list"),
    gate("test-list-gate", "test-list gate"),
    ...build,
    release("deploying", "preview deploy, verified"),
    gate("deploy-gate", "deploy gate"),
    gate("promote-gate", "promote gate"),
    release("merging", "merge the pull request"),
    release("promoting", "migrate the parent database"),
  ];
}

/** The station the track stands at: -1 for none (done: every station lies behind it). */
function currentIndex(snapshot: TrackSnapshot, stations: Station[], effective: Stage): number {
  const { stage, context } = snapshot;
  if (stage === "done") return stations.length;
  const firstUnit = stations.findIndex((s) => s.kind === "unit");
  const unitAt = firstUnit + Math.min(context.unitIndex, Math.max(context.units.length - 1, 0));
  // An abandoned track ended where its evidence stops: in the build once there are units, else in the design.
  if (stage === "abandoned") {
    if (context.units.length > 0) return unitAt;
    return stations.findIndex((s) => s.key === (context.gates.design.status === "approved" ? "test-list" : "stories"));
  }
  if (isBuildStage(effective)) return unitAt;
  return stations.findIndex((s) => s.stages.includes(effective));
}

/** The lane of `snapshot`: its stations in order, and where the track stands. */
export function laneOf(snapshot: TrackSnapshot): Lane {
  const { stage, context } = snapshot;
  // Blocked counts as the stage it will resume: a unit of the build lane, or the release.
  const effective: Stage = stage === "blocked" ? (context.blocked?.resume ?? "red") : stage;
  const stations = stationsOf(snapshot, effective);
  const current = currentIndex(snapshot, stations, effective);
  const failedHere =
    stage === "blocked" || stage === "abandoned" || context.rejectedHead !== null || context.lastProblem.length > 0;
  return {
    stage,
    stations: stations.map(({ stages: _stages, ...station }, index) => {
      const gateHere = station.kind === "gate" ? gateAtStage(station.key) : undefined;
      let status: LaneStationStatus = index < current ? "done" : index === current ? "current" : "ahead";
      // A gate the track stands at waits for a person; a refused commit on top stops no gate.
      if (index === current && gateHere && context.gates[gateHere].status === "pending") status = "waiting";
      else if (index === current && failedHere) status = "failed";
      return { ...station, status };
    }),
    blocked: stage === "blocked" ? { reason: context.blocked?.reason ?? "" } : null,
    halted: context.rejectedHead ? { sha: context.rejectedHead.sha } : null,
    ended: stage === "abandoned" ? { reason: context.ended?.reason ?? "" } : null,
  };
}

export interface LaneView {
  done: string[];
  now: string;
  next: string[];
}

/** The lane as done / now / next lines, for check-run summaries, the comment and `consort status`. */
export function describeLane(snapshot: TrackSnapshot): LaneView {
  return laneLines(laneOf(snapshot));
}

/** The station the track stands at, as a line: the unit with its stage, or the station, and why it stopped. */
function nowLine(lane: Lane, station: LaneStation | undefined): string {
  if (lane.stage === "done") return "done";
  if (!station) return "";
  const why = lane.blocked ? ` (${lane.blocked.reason})` : "";
  if (station.unit !== null) return `${station.unit}: ${lane.stage}${why}`;
  return lane.blocked ? `${station.label}: blocked${why}` : station.label;
}

function laneLines(lane: Lane): LaneView {
  if (lane.ended) return { done: [], now: `abandoned: ${lane.ended.reason}`, next: [] };
  const at = lane.stations.find((s) => s.status !== "done" && s.status !== "ahead");
  const view: LaneView = {
    done: lane.stations.filter((s) => s.status === "done").map((s) => s.label),
    now: nowLine(lane, at),
    next: lane.stations.filter((s) => s.status === "ahead").map((s) => s.label),
  };
  if (lane.halted) view.now += ` — halted: commit ${lane.halted.sha.slice(0, 7)} rejected`;
  return view;
}

/** The lane as text. */
export function renderLane(snapshot: TrackSnapshot): string {
  const lane = describeLane(snapshot);
  return [...lane.done.map((l) => `  ✓ ${l}`), `  ▶ ${lane.now}`, ...lane.next.map((l) => `  · ${l}`)].join("\n");
}
