import type { CheckState, TrackCheckName } from "../gates/checks.js";
import type { GateName } from "../contracts/gates.js";
import type { CheckAction } from "./checks.js";
import type { MutationReport } from "../contracts/mutation.js";

/**
 * What the check runs and the PR comment show, as plain data. The app maps a track's snapshot to
 * this view, with each check's state as src/gates/checks.ts decides it: rendering decides nothing.
 */

export interface LaneStep {
  /** A stable id, e.g. `spec`, `design-gate`, `T3:green`. */
  id: string;
  /** What a person reads, e.g. "Spec" or "T3 green". */
  label: string;
  detail?: string;
}

interface Lane {
  done: LaneStep[];
  now: LaneStep | null;
  next: LaneStep[];
}

interface NextActionView {
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

/** An approval that counted, as the track's snapshot records it, with a link to its review when known. */
export interface ApprovalView {
  gate: GateName;
  approver: string;
  at: string;
  commit: string;
  manifestHash: string;
  reviewUrl?: string;
}

/** A check as decided from the snapshot, with the buttons a person needs on it. */
export interface CheckView extends Omit<CheckState, "name"> {
  actions: CheckAction[];
}

interface DisciplineView {
  /** Each refused commit's reasons, for the table on consort/discipline. */
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

interface DeployEvidenceView {
  summary: string;
  previewUrl?: string;
  databaseBranch: string;
  runUrl?: string;
  checks: Array<{ name: string; ok: boolean; detail?: string }>;
  /** Caveats beside the verdict, e.g. that the release ran unconfined (weaker evidence). */
  notes?: string[];
  /** The mutation score of the track's tests over its changed lines. */
  mutation?: MutationReport;
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
  /** The six checks decided from the snapshot (consort/schema is `schema`). */
  checks: Record<TrackCheckName, CheckView>;
  discipline: DisciplineView;
  schema: SchemaView;
  deploy?: DeployEvidenceView;
  /** Caveats a person should see, e.g. "database rebuilt from the seed on a hosted runner". */
  notes?: string[];
  /** Why a review just submitted does not count, by gate: shown in that gate's check, under its approvals. */
  refusedApprovals?: Partial<Record<GateName, string[]>>;
  /** Where the database facts of the checks come from (src/contracts/placement.ts). */
  sources?: string;
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
