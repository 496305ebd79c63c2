import type { ConsortConfig } from "../config/consort-config.js";
import { checkStates, type TrackCheckName } from "../gates/checks.js";
import { GATE_NAMES } from "../contracts/gates.js";
import { describeLane, nextAction, testListOf, type TrackSnapshot, type UnitEvidence } from "../orchestrator/index.js";
import { factSources, placementOf } from "../contracts/placement.js";
import type { CheckState } from "../gates/checks.js";
import {
  CHECK_ACTIONS,
  type ApprovalView,
  type CheckAction,
  type CheckView,
  type EvidenceView,
  type FrozenView,
  type LaneStep,
  type SchemaView,
  type TestView,
  type TrackReport,
} from "../report/index.js";

/**
 * The view the report renders (seven checks, one sticky comment), mapped from a track's snapshot.
 * Each check shows what src/gates/checks.ts decides; this adds only what a person reads around
 * it (tests, frozen files, approvals, the next action) and the buttons a failing check offers.
 */

export interface ReportInput {
  repository: string;
  snapshot: TrackSnapshot;
  headSha: string;
  config: ConsortConfig;
  schema?: SchemaView;
  notes?: string[];
  /** Why a review just submitted does not count, by gate (shown in the gate's check). */
  refusedApprovals?: TrackReport["refusedApprovals"];
  /** The track's pull request, when known: each approval then links to its review. */
  pullNumber?: number;
}

export function trackReport({
  repository,
  snapshot,
  headSha,
  config,
  schema,
  notes,
  refusedApprovals,
  pullNumber,
}: ReportInput): TrackReport {
  const ctx = snapshot.context;
  const action = nextAction(snapshot, config);
  const described = describeLane(snapshot);
  const step = (label: string, i: number, where: string): LaneStep => ({ id: `${where}-${i}`, label });
  const lane = {
    done: described.done.map((l, i) => step(l, i, "done")),
    now: described.now ? step(described.now, 0, "now") : null,
    next: described.next.map((l, i) => step(l, i, "next")),
  };
  const rejected = ctx.rejectedHead;

  return {
    repository,
    trackId: ctx.trackId,
    branch: ctx.branch,
    headSha,
    lane,
    ...(action.actor === "nobody"
      ? {}
      : {
          nextAction: { role: action.role ?? action.actor, summary: action.task, details: nextActionDetails(action) },
        }),
    tests: testsOf(snapshot),
    frozen: frozenViews(snapshot),
    approvals: approvalViews(snapshot, pullNumber === undefined ? undefined : { repository, pullNumber }),
    checks: Object.fromEntries(
      checkStates(snapshot).map(({ name, ...check }) => [name, { ...check, actions: buttons(snapshot, name, check) }]),
    ) as Record<TrackCheckName, CheckView>,
    discipline: {
      violations: (rejected?.reasons ?? []).map((message) => ({
        commit: rejected!.sha,
        rule: "commit refused",
        message,
      })),
    },
    schema: schema ?? {
      state: "pending",
      reason: `The schema diff of \`${ctx.databaseBranch}\` against \`${ctx.parentDatabaseBranch}\` has not been computed for this commit yet.`,
    },
    ...(ctx.deployEvidence ? { deploy: ctx.deployEvidence.evidence } : {}),
    ...(notes && notes.length > 0 ? { notes } : {}),
    ...(refusedApprovals ? { refusedApprovals } : {}),
    sources: factSources(placementOf(config)),
  };
}

/**
 * The buttons on a failing check: a blocked step offers a re-run and renegotiating the test list;
 * a build or release cycle that failed or never reported offers a re-run once nothing is in flight.
 */
function buttons(snapshot: TrackSnapshot, name: TrackCheckName, check: Omit<CheckState, "name">): CheckAction[] {
  const ctx = snapshot.context;
  if (check.status !== "failure" || snapshot.stage === "abandoned") return [];
  const releasing = ctx.blocked?.resume === "deploying";
  if (name === "consort/build") {
    if (snapshot.stage === "blocked" && !releasing) return [CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate];
    return ctx.pendingDispatch === null ? [CHECK_ACTIONS.rerunCycle] : [];
  }
  if (name === "consort/deploy") {
    if (snapshot.stage === "blocked" && releasing) return [CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate];
    if (snapshot.stage === "deploying" && ctx.pendingDispatch === null) return [CHECK_ACTIONS.rerunCycle];
  }
  return [];
}

/** What each approved gate froze, files sorted by path, at the commit its last approval was on. */
function frozenViews(snapshot: TrackSnapshot): FrozenView[] {
  const ctx = snapshot.context;
  return GATE_NAMES.flatMap((gate) => {
    const g = ctx.gates[gate];
    if (g.status !== "approved" || !g.approvedHash || Object.keys(g.files).length === 0) return [];
    const files = Object.entries(g.files)
      .map(([path, hash]) => ({ path, hash }))
      .sort((a, b) => a.path.localeCompare(b.path));
    return [{ gate, manifestHash: g.approvedHash, commit: g.approvals.at(-1)?.commit ?? ctx.head, files }];
  });
}

/** Every approval the track's gates recorded, with a link to its review when the pull request is known. */
function approvalViews(snapshot: TrackSnapshot, pull?: { repository: string; pullNumber: number }): ApprovalView[] {
  return GATE_NAMES.flatMap((gate) =>
    snapshot.context.gates[gate].approvals.map((a) => ({
      gate,
      approver: a.approver,
      at: a.at,
      commit: a.commit,
      manifestHash: a.manifestHash,
      ...(pull
        ? {
            reviewUrl: `https://github.com/${pull.repository}/pull/${pull.pullNumber}#pullrequestreview-${a.reviewId}`,
          }
        : {}),
    })),
  );
}

function nextActionDetails(action: ReturnType<typeof nextAction>): string[] {
  const details: string[] = [];
  if (action.trailer) details.push(`Commit trailer: \`${action.trailer}\``);
  if (action.allowedPaths.length > 0)
    details.push(`May touch: ${action.allowedPaths.map((p) => `\`${p}\``).join(", ")}`);
  if (action.testsInTurn.length > 0)
    details.push(`Tests in turn: ${action.testsInTurn.map((t) => `${t.id} “${t.title}”`).join(", ")}`);
  if (action.gate)
    details.push(
      `Approve the ${action.gate.name} gate with a review on a commit at manifest \`${action.gate.manifestHash.slice(0, 12)}\``,
    );
  details.push(...action.checks.map((c) => `Checked: ${c}`));
  return details;
}

function evidenceOf(
  step: { dispatchId: string; commit: string; at: string } | null,
  snapshot: TrackSnapshot,
): EvidenceView | undefined {
  if (!step) return undefined;
  const cycle = snapshot.context.cycles.find((c) => c.dispatchId === step.dispatchId);
  return {
    verdict: "valid",
    commit: step.commit,
    at: step.at,
    ...(cycle?.evidence?.runUrl ? { runUrl: cycle.evidence.runUrl } : {}),
    ...(cycle?.evidence?.summary
      ? {
          summary:
            "confined" in cycle.evidence && cycle.evidence.confined === false
              ? `${cycle.evidence.summary} (⚠️ ran unconfined: weaker evidence)`
              : cycle.evidence.summary,
        }
      : {}),
  };
}

function testsOf(snapshot: TrackSnapshot): TestView[] {
  const ctx = snapshot.context;
  // Before the test-list gate is approved there are no units yet: show the list waiting for approval.
  if (ctx.units.length === 0)
    return (testListOf(ctx) ?? []).map((test) => ({
      id: test.id,
      title: test.title,
      file: test.file,
      acceptanceCriterion: test.ac,
      status: "pending" as const,
    }));
  return ctx.units.flatMap((unit, index) => {
    const evidence: UnitEvidence | undefined = ctx.evidence[unit.id];
    const status: TestView["status"] = evidence?.complete
      ? "reviewed"
      : evidence?.green
        ? "green"
        : evidence?.red
          ? "red"
          : index === ctx.unitIndex && snapshot.stage === "blocked"
            ? "blocked"
            : "pending";
    return unit.tests.map((test) => {
      const red = evidenceOf(evidence?.red ?? null, snapshot);
      const green = evidenceOf(evidence?.green ?? null, snapshot);
      return {
        id: test.id,
        title: test.title,
        file: test.file,
        acceptanceCriterion: test.ac,
        status,
        ...(red ? { red } : {}),
        ...(green ? { green } : {}),
      };
    });
  });
}
