import type { ConsortConfig } from "../config/consort-config.js";
import { authorOf, ownershipAt, type ArtifactStep } from "../roles/roles.js";
import { readRoleTrailer } from "../roles/trailer.js";
import { DESIGN_STEPS, type Stage, type TrackSnapshot } from "../orchestrator/index.js";

/**
 * The timeline of a track's steps by role: every commit on its branch (accepted and refused) and
 * every event the machine recorded (approvals, cycles, the end), oldest first. A commit is judged
 * against the track's snapshot, the machine's own record: accepted up to its last accepted head,
 * refused from there to the rejected head with the machine's reasons, not taken yet after a head
 * the app has not decided. Pure: the app lists the commits through GitHub's compare API and
 * `consort board` through git, and both call this.
 */

/** The role that takes a build step (the one declaration is src/roles/roles.ts). */
const roleOfStep = (stage: Stage, config: ConsortConfig, unit: string | null): string =>
  ownershipAt(stage, config, unit).role ?? "orchestrator";

/** One commit as a source lists it (oldest first, from the merge base with the base branch). */
export interface BranchCommit {
  sha: string;
  /** The author date (ISO). */
  at: string;
  /** The author's GitHub login, else the git author name; null when neither is known. */
  author: string | null;
  message: string;
  /** More than one parent: a merge (e.g. "Update branch"). */
  merge: boolean;
  /** The commit on GitHub, when the repository is there. */
  url: string | null;
}

export type TimelineVerdict = "accepted" | "refused" | "undecided" | "event";

export interface TimelineEntry {
  at: string;
  /** The role, `@login` or `orchestrator`. */
  who: string;
  /** The step ("red for T1", "spec", "approved the design gate"). */
  what: string;
  verdict: TimelineVerdict;
  reasons: string[];
  /** The commit (a short sha) and its link, for commits. */
  commit?: { sha: string; url: string | null };
  /** The Actions run, for cycles. */
  run?: { id: number | null; url: string | null };
}

const short = (sha: string) => sha.slice(0, 7);

/** The design step a design role's commit is for (each design role writes one artifact). */
const DESIGN_STEP_OF = new Map<string, ArtifactStep>(
  [...DESIGN_STEPS, "test-list" as const].map((step) => [authorOf(step), step]),
);

/** The step the machine recorded for an accepted commit, else what its role tells. */
function stepOf(snapshot: TrackSnapshot, commit: BranchCommit, role: string | null, config: ConsortConfig): string {
  const { context } = snapshot;
  if (commit.merge) return `merge of ${context.baseBranch}`;
  for (const [unit, record] of Object.entries(context.evidence))
    if (record.review?.commit === commit.sha) return `review of ${unit}`;
  // The release and the promotion run on a head whose step is its own; a test's cycle names its step.
  const cycle = context.cycles.find((c) => c.commit === commit.sha && c.step !== "promote" && c.step !== "release");
  if (cycle) return `${cycle.step} for ${cycle.unit}`;
  const design = role ? DESIGN_STEP_OF.get(role) : undefined;
  if (design) return design;
  if (role === roleOfStep("red", config, null) || role === roleOfStep("green", config, null)) return "a build step";
  return "a step";
}

/** Every commit of the branch judged against the snapshot, and the machine's events, oldest first. */
export function trackTimeline(
  snapshot: TrackSnapshot,
  commits: BranchCommit[] | undefined,
  config: ConsortConfig,
  runUrl: (runId: number | null, evidence: { runUrl?: string } | null) => string | null,
  ownReasons: Record<string, string[]> = {},
): TimelineEntry[] {
  const { context } = snapshot;
  const entries: TimelineEntry[] = [
    {
      at: context.createdAt,
      who: "orchestrator",
      what: `track started; database branch ${context.databaseBranch} forked from ${context.parentDatabaseBranch}`,
      verdict: "event",
      reasons: [],
    },
  ];
  const list = commits ?? [];
  const headAt = list.findIndex((c) => c.sha === context.head);
  const rejected = context.rejectedHead;
  const rejectedAt = rejected ? list.findIndex((c) => c.sha === rejected.sha) : -1;
  list.forEach((commit, index) => {
    const claim = readRoleTrailer(commit.message);
    const role = claim.ok ? claim.role : null;
    const who = role ?? (commit.author ? `@${commit.author}` : "no role");
    const base = { at: commit.at, who, commit: { sha: commit.sha, url: commit.url } };
    if (index <= headAt) {
      entries.push({ ...base, what: stepOf(snapshot, commit, role, config), verdict: "accepted", reasons: [] });
      return;
    }
    const own = ownReasons[commit.sha];
    if (rejected && (index <= rejectedAt || own)) {
      entries.push({
        ...base,
        what: `${stepOf(snapshot, commit, role, config)} (at ${snapshot.stage})`,
        verdict: "refused",
        // Its own reasons where the source judged it alone, else those of the push it was refused with.
        reasons: own
          ? own.length > 0
            ? own
            : [
                `nothing of its own: it came after a refused commit; reset the branch to ${short(context.head)} and push it again`,
              ]
          : rejected.reasons,
      });
      return;
    }
    entries.push({
      ...base,
      what: stepOf(snapshot, commit, role, config),
      verdict: "undecided",
      reasons: ["the app has not taken this push yet"],
    });
  });
  // A rejected head the listing does not hold (the branch was reset since, or the listing is short).
  if (rejected && rejectedAt < 0)
    entries.push({
      at: rejected.at,
      who: "orchestrator",
      what: `refused commit ${short(rejected.sha)}`,
      verdict: "refused",
      reasons: rejected.reasons,
      commit: { sha: rejected.sha, url: null },
    });
  // Without the commits, the steps the machine recorded stand for them, each by its role.
  if (!commits)
    for (const [unit, record] of Object.entries(context.evidence)) {
      const role = (step: "red" | "green" | "review" | "refactor") => roleOfStep(step, config, unit);
      const stamp = (step: "red" | "green" | "refactor", at: { commit: string; at: string } | null) =>
        at &&
        entries.push({
          at: at.at,
          who: role(step),
          what: `${step === "red" ? "RED" : step === "green" ? "GREEN" : "refactor"} of ${unit} verified`,
          verdict: "accepted",
          reasons: [],
          commit: { sha: at.commit, url: null },
        });
      stamp("red", record.red);
      stamp("green", record.green);
      if (record.review)
        entries.push({
          at: record.review.at,
          who: role("review"),
          what: `review of ${unit}: ${record.review.verdict}`,
          verdict: "accepted",
          reasons: [],
          commit: { sha: record.review.commit, url: null },
        });
      stamp("refactor", record.refactor);
    }
  for (const [gate, record] of Object.entries(context.gates))
    for (const approval of record.approvals)
      entries.push({
        at: approval.at,
        who: `@${approval.approver}`,
        what: `approved the ${gate} gate at ${short(approval.manifestHash)}`,
        verdict: "event",
        reasons: [],
      });
  for (const cycle of context.cycles)
    entries.push({
      at: cycle.reportedAt ?? cycle.dispatchedAt,
      who: "orchestrator",
      what: `${cycle.step} cycle for ${cycle.unit} on ${short(cycle.commit)}: ${cycle.outcome ?? "running"}`,
      verdict: cycle.outcome === null ? "undecided" : cycle.outcome === "valid" ? "accepted" : "refused",
      reasons: cycle.reasons,
      run: { id: cycle.runId, url: runUrl(cycle.runId, cycle.evidence) },
    });
  if (context.ended)
    entries.push({
      at: context.ended.at,
      who: context.ended.by ? `@${context.ended.by}` : "orchestrator",
      what: `ended: ${context.ended.reason}`,
      verdict: "event",
      reasons: [],
    });
  // Stable: entries at the same time keep the order above (the commit before the cycle on it).
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at.localeCompare(b.entry.at) || a.index - b.index)
    .map(({ entry }) => entry);
}
