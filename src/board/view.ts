import type { ConsortConfig } from "../config/consort-config.js";
import { checkStates, type CheckState } from "../gates/checks.js";
import { gateCheckName, gateTitle, type GateName } from "../contracts/gates.js";
import {
  DESIGN_STEPS,
  gateAtStage,
  laneOf,
  nextAction,
  type LaneStation,
  type LaneStationStatus,
  type NextAction,
  type Stage,
  type TrackSnapshot,
} from "../orchestrator/index.js";
import type { BranchCommit } from "./timeline.js";

/**
 * What the board shows of a track, derived from its snapshot alone (pure: the app and `consort
 * board` both call it). Gate and check state come from src/gates/checks.ts and the next step from
 * the orchestrator's `nextAction`: nothing here re-decides them, it only arranges them for a page.
 */

export const PROVENANCES = ["signed", "unsigned", "commits"] as const;
export type Provenance = (typeof PROVENANCES)[number];

/** What a person reads about where a track's state came from (nothing for a checked signature). */
export const PROVENANCE_NOTE: Record<Provenance, string> = {
  signed: "",
  unsigned: "state signature not checked",
  commits: "replayed from commits: approvals and cycles unknown",
};

/** One track as a board source hands it over: where it lives, its snapshot and the rules in force. */
export interface BoardTrack {
  /** `owner/name`. */
  repository: string;
  snapshot: TrackSnapshot;
  /** The repository's configuration (approvers, roles' paths), as read from its default branch. */
  config: ConsortConfig;
  /**
   * Where the snapshot comes from: a state file whose signature was checked, one read without the
   * key (`consort board` on a fetched consort/state), or the branch's commits replayed locally.
   */
  provenance: Provenance;
  /**
   * Where the snapshot was read, as the board names it on each fact it shows ("consort/state at
   * 1a2b3c4"); without it the provenance alone is named.
   */
  stateSource?: string;
  /** Each refused commit's own reasons by sha, where the source judged each on its own (the local replay). */
  commitRefusals?: Record<string, string[]>;
}

/**
 * What only a track's page shows, read by the source for that page alone (never for the board of
 * every track): the branch's commits and consort/schema's summary, each with where it was read.
 */
export interface TrackDetails {
  /** Every commit of the track's branch since its merge base, oldest first. */
  commits?: { list: BranchCommit[]; source: string };
  /** The consort/schema check's summary as it shows on the pull request (Markdown). */
  schema?: { markdown: string | null; conclusion: string | null; source: string };
  /** What could not be read, with why: shown on the page, never hidden. */
  problems: string[];
}

/** The source mark of every fact the snapshot holds: where it was read, and whether it was checked. */
export function stateSourceOf(track: Pick<BoardTrack, "provenance" | "stateSource">): string {
  const where = track.stateSource ?? (track.provenance === "commits" ? "" : "consort/state");
  if (track.provenance === "commits")
    return where ? `from ${where}, then replayed from the branch's commits` : "replayed from the branch's commits";
  // Whether its signature was checked is the provenance's to say (a tag of its own on the page).
  return `from ${where}`;
}

/** One station of the lane picture: the design steps, each gate, each build unit, the release. */
export interface LaneNode {
  key: string;
  label: string;
  kind: LaneStation["kind"];
  status: LaneStationStatus;
}

/** Who the track waits for now, and whether that is the viewer. */
interface Waiting {
  actor: NextAction["actor"];
  /** A short phrase: "approval: design gate", "navigator: red for T2", "cycle red-verify". */
  what: string;
  /** The logins that can act, when the configuration names them; empty when any approver may. */
  who: string[];
  /** True when the viewer is one of the people the track waits for (with no viewer: when it waits for a person). */
  mine: boolean;
}

export interface TrackView {
  repository: string;
  trackId: string;
  branch: string;
  stage: Stage;
  lane: LaneNode[];
  waiting: Waiting;
  /** When the track last changed: how long it has waited is counted from here. */
  since: string;
  /** Every reason the track is refused or failing now (a rejected commit, a failed check, a block). */
  refusals: string[];
  checks: CheckState[];
  provenance: Provenance;
  /** Where the snapshot was read ("from consort/state at 1a2b3c4"), shown as the row's source mark. */
  source: string;
}

const lower = (login: string) => login.toLowerCase();

/**
 * Who may approve `gate` as the board can tell without asking GitHub: the configured users less the
 * gate's authors. With no users named, any approver with write access may (teams, CODEOWNERS), so
 * the list is empty and every viewer who authored none of it counts as one.
 */
function approversFor(track: BoardTrack, gate: GateName): { who: string[]; may: (login: string) => boolean } {
  const authors = new Set(track.snapshot.context.gates[gate].authors.map(lower));
  const named = track.config.approvers.users.filter((login) => !authors.has(lower(login)));
  if (track.config.approvers.users.length > 0) {
    const allowed = new Set(named.map(lower));
    return { who: named, may: (login) => allowed.has(lower(login)) };
  }
  return { who: [], may: (login) => !authors.has(lower(login)) };
}

function waitingOf(track: BoardTrack, action: NextAction, viewer: string | null): Waiting {
  const { stage, context } = track.snapshot;
  const gate = gateAtStage(stage);
  if (action.actor === "person" && gate) {
    const { who, may } = approversFor(track, gate);
    return {
      actor: "person",
      what: `approval: ${gateTitle(gate).toLowerCase()}`,
      who,
      mine: viewer ? may(viewer) : true,
    };
  }
  if (action.actor === "person")
    return {
      actor: "person",
      what: stage === "blocked" ? "a decision: retry, renegotiate or abandon" : "the merge of the pull request",
      who: [],
      mine: true,
    };
  if (action.actor === "orchestrator")
    return {
      actor: "orchestrator",
      what: context.pendingDispatch
        ? `${context.pendingDispatch.step} cycle ${context.pendingDispatch.dispatchId}`
        : `a cycle for ${stage} (none dispatched: retry)`,
      who: [],
      mine: false,
    };
  if (action.actor === "agent")
    return {
      actor: "agent",
      what: `${action.role ?? "an agent"}: ${stage}${action.unit ? ` for ${action.unit}` : ""}`,
      who: [],
      mine: false,
    };
  return { actor: "nobody", what: stage === "done" ? "nothing: done" : `nothing: ${stage}`, who: [], mine: false };
}

/**
 * The board's picture of the lane (orchestrator/lane.ts): the design steps drawn as one station, the
 * merge and the promotion as another, and a gate whose check fails again drawn failed.
 */
const BOARD_STATION: Partial<Record<LaneStation["key"], { key: string; label: string }>> = {
  ...Object.fromEntries(DESIGN_STEPS.map((step) => [step, { key: "design", label: "Design" }])),
  "test-list": { key: "test-list", label: "Test list" },
  build: { key: "build", label: "Build" },
  deploying: { key: "deploying", label: "Preview" },
  merging: { key: "promoting", label: "Promote" },
  promoting: { key: "promoting", label: "Promote" },
};

/** A station drawn for several: the one the track stands at, else done only when all of them are. */
function merged(statuses: LaneStationStatus[]): LaneStationStatus {
  return (
    statuses.find((s) => s !== "done" && s !== "ahead") ?? (statuses.every((s) => s === "done") ? "done" : "ahead")
  );
}

function lanePicture(snapshot: TrackSnapshot, checks: CheckState[]): LaneNode[] {
  const failedCheck = new Set(checks.filter((c) => c.status === "failure").map((c) => c.name));
  const nodes: Array<Omit<LaneNode, "status"> & { statuses: LaneStationStatus[] }> = [];
  for (const station of laneOf(snapshot).stations) {
    const gate = station.kind === "gate" ? gateAtStage(station.key) : undefined;
    const drawn =
      BOARD_STATION[station.key] ??
      (gate
        ? { key: station.key, label: gateTitle(gate) }
        : { key: station.key, label: station.unit ?? station.label });
    const last = nodes.at(-1);
    if (last?.key === drawn.key) last.statuses.push(station.status);
    else nodes.push({ ...drawn, kind: station.kind, statuses: [station.status] });
  }
  return nodes.map(({ statuses, ...node }) => {
    const gate = node.kind === "gate" ? gateAtStage(node.key) : undefined;
    const status = merged(statuses);
    return { ...node, status: gate && status === "done" && failedCheck.has(gateCheckName(gate)) ? "failed" : status };
  });
}

function refusalsOf(snapshot: TrackSnapshot, checks: CheckState[]): string[] {
  const { context } = snapshot;
  const reasons: string[] = [];
  if (context.rejectedHead)
    reasons.push(
      ...context.rejectedHead.reasons.map(
        (reason) => `Commit ${context.rejectedHead!.sha.slice(0, 7)} refused: ${reason}`,
      ),
    );
  if (context.blocked) reasons.push(`Blocked: ${context.blocked.reason}`);
  for (const check of checks)
    if (check.status === "failure") for (const detail of check.details) reasons.push(`${check.name}: ${detail}`);
  return [...new Set(reasons)];
}

/** The board's view of one track for `viewer` (a GitHub login; null when nobody signed in). */
export function trackView(track: BoardTrack, viewer: string | null): TrackView {
  const { snapshot } = track;
  const checks = checkStates(snapshot);
  const action = nextAction(snapshot, track.config);
  return {
    repository: track.repository,
    trackId: snapshot.context.trackId,
    branch: snapshot.context.branch,
    stage: snapshot.stage,
    lane: lanePicture(snapshot, checks),
    waiting: waitingOf(track, action, viewer),
    since: snapshot.context.updatedAt,
    refusals: refusalsOf(snapshot, checks),
    checks,
    provenance: track.provenance,
    source: stateSourceOf(track),
  };
}

/** Tracks still in flight: not done, not abandoned. */
export const inFlight = (track: BoardTrack): boolean =>
  track.snapshot.stage !== "done" && track.snapshot.stage !== "abandoned";
