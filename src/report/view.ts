import type { GateName } from "../state/schema.js";

/**
 * What the check runs and the PR comment show, as plain data. The handlers map a track's
 * snapshot and state to this view, so rendering never depends on the orchestrator's internals.
 */

export interface LaneStep {
  /** A stable id, e.g. `spec`, `design-gate`, `T3:green`. */
  id: string;
  /** What a person reads, e.g. "Spec" or "T3 green". */
  label: string;
  detail?: string;
}

export interface Lane {
  done: LaneStep[];
  now: LaneStep | null;
  next: LaneStep[];
}

export interface NextActionView {
  /** The role expected to act, e.g. `navigator`, or `person` for a gate. */
  role: string;
  summary: string;
  details?: string[];
}

/** Evidence of one verified step: which run, on which commit, what it proved. */
export interface EvidenceView {
  verdict: "valid" | "invalid" | "error" | "pending";
  commit: string;
  runUrl?: string;
  at?: string;
  summary?: string;
}

export interface TestView {
  id: string;
  title: string;
  file: string;
  acceptanceCriterion?: string;
  status: "pending" | "red" | "green" | "reviewed" | "blocked";
  red?: EvidenceView;
  green?: EvidenceView;
}

export interface FrozenView {
  gate: GateName;
  manifestHash: string;
  commit: string;
  files: Array<{ path: string; hash: string }>;
}

export interface ApprovalView {
  gate: GateName;
  user: string;
  at: string;
  commit: string;
  hash: string;
  reviewUrl?: string;
}

export interface RejectedReview {
  user: string;
  reasons: string[];
}

/** A gate as a person reads it. Only `approved` at the current hash passes. */
export type GateView =
  | { state: "not-reached"; reason: string }
  | { state: "waiting"; pendingHash: string; reason: string; rejected?: RejectedReview[] }
  | { state: "approved"; approvedHash: string; currentHash: string; by: string[] }
  | { state: "withdrawn"; reason: string }
  | { state: "failed"; reason: string };

export interface BuildView {
  state: "not-started" | "running" | "blocked" | "failed" | "done";
  reason: string;
  /** Offer the re-run button (a cycle that failed or never reported). */
  canRerun?: boolean;
  /** Offer the renegotiate button (a blocked track). */
  canRenegotiate?: boolean;
}

export interface DisciplineView {
  /** Set when the commits could not be checked: the check then fails (fail closed). */
  error?: string;
  checkedCommits: number;
  violations: Array<{ commit: string; rule: string; path?: string; message: string }>;
}

export interface SchemaView {
  state: "pending" | "ready" | "failed";
  /** The schema diff as Markdown (rendered by the substrate; shown as given). */
  diffMarkdown?: string;
  /** Lint findings that would break real rows; any of them fails the check. */
  breaking?: string[];
  reason?: string;
}

export interface DeployEvidenceView {
  summary: string;
  previewUrl?: string;
  databaseBranch: string;
  runUrl?: string;
  checks: Array<{ name: string; ok: boolean; detail?: string }>;
}

export interface TrackReport {
  /** `owner/name`. */
  repository: string;
  trackId: string;
  branch: string;
  headSha: string;
  /** Web base for links; default https://github.com. */
  serverUrl?: string;
  lane: Lane;
  nextAction?: NextActionView;
  tests: TestView[];
  frozen: FrozenView[];
  approvals: ApprovalView[];
  gates: Record<GateName, GateView>;
  build: BuildView;
  discipline: DisciplineView;
  schema: SchemaView;
  deploy?: DeployEvidenceView;
  /** Caveats a person should see, e.g. "database rebuilt from the seed on a hosted runner". */
  notes?: string[];
}

/** Why every check fails when a track's state file cannot be trusted. */
export interface TamperedView {
  repository: string;
  trackId: string;
  branch: string;
  headSha: string;
  path: string;
  problems: string[];
  stateCommit?: string;
}
