import type { ConsortConfig } from "../config/consort-config.js";
import { checkStates, describeLane, nextAction } from "../orchestrator/index.js";
import {
  GATE_NAMES,
  type CheckState,
  type GateName,
  type GateRecord,
  type Stage,
  type TrackSnapshot,
  type UnitEvidence,
} from "../orchestrator/types.js";
import type {
  BuildView,
  EvidenceView,
  GateView,
  LaneStep,
  SchemaView,
  TestView,
  TrackReport,
} from "../report/index.js";

/**
 * The view the report renders (seven checks, one sticky comment), mapped from a track's snapshot.
 * Conclusions stay with the report's single rule: a gate passes only approved at the current hash.
 */

const BUILD_STAGES: Stage[] = [
  "red",
  "red-verify",
  "green",
  "green-verify",
  "repair",
  "review",
  "refactor",
  "refactor-verify",
  "blocked",
];

export interface ReportInput {
  repository: string;
  snapshot: TrackSnapshot;
  headSha: string;
  config: ConsortConfig;
  schema?: SchemaView;
  notes?: string[];
}

export function trackReport({ repository, snapshot, headSha, config, schema, notes }: ReportInput): TrackReport {
  const ctx = snapshot.context;
  const action = nextAction(snapshot, config);
  const described = describeLane(snapshot);
  const step = (label: string, i: number, where: string): LaneStep => ({ id: `${where}-${i}`, label });
  const lane = {
    done: described.done.map((l, i) => step(l, i, "done")),
    now: described.now ? step(described.now, 0, "now") : null,
    next: described.next.map((l, i) => step(l, i, "next")),
  };
  const machineChecks = checkStates(snapshot);

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
    frozen: GATE_NAMES.flatMap((gate) => {
      const g = ctx.gates[gate];
      const last = g.approvals.at(-1);
      if (g.status !== "approved" || !g.approvedHash || Object.keys(g.files).length === 0) return [];
      return [
        {
          gate,
          manifestHash: g.approvedHash,
          commit: last?.commit ?? ctx.head,
          files: Object.entries(g.files).map(([path, hash]) => ({ path, hash })),
        },
      ];
    }),
    approvals: GATE_NAMES.flatMap((gate) =>
      ctx.gates[gate].approvals.map((a) => ({
        gate,
        user: a.approver,
        at: a.at,
        commit: a.commit,
        hash: a.manifestHash,
      })),
    ),
    // An abandoned track passes nothing: every gate fails with why it ended.
    gates: Object.fromEntries(
      GATE_NAMES.map((gate) => [
        gate,
        snapshot.stage === "abandoned"
          ? { state: "failed", reason: `The track was abandoned: ${ctx.ended?.reason ?? "no reason given"}.` }
          : gateView(gate, ctx.gates[gate]),
      ]),
    ) as Record<GateName, GateView>,
    build: buildView(
      snapshot,
      machineChecks.find((c) => c.name === "consort/build"),
    ),
    discipline:
      snapshot.stage === "abandoned"
        ? {
            checkedCommits: 0,
            violations: [
              { commit: ctx.head, rule: "track abandoned", message: ctx.ended?.reason ?? "the track was abandoned" },
            ],
          }
        : ctx.rejectedHead
          ? {
              checkedCommits: 1,
              violations: ctx.rejectedHead.reasons.map((message) => ({
                commit: ctx.rejectedHead!.sha,
                rule: "commit refused",
                message,
              })),
            }
          : { checkedCommits: 0, violations: [] },
    schema: schema ?? {
      state: "pending",
      reason: `The schema diff of \`${ctx.databaseBranch}\` against \`${ctx.parentDatabaseBranch}\` has not been computed for this commit yet.`,
    },
    ...(ctx.deployEvidence ? { deploy: ctx.deployEvidence.evidence } : {}),
    ...(notes && notes.length > 0 ? { notes } : {}),
  };
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

function gateView(gate: GateName, record: GateRecord): GateView {
  switch (record.status) {
    case "closed":
      return { state: "not-reached", reason: `The track has not reached the ${gate} gate yet.` };
    case "pending":
      return {
        state: "waiting",
        pendingHash: record.pendingHash ?? "",
        reason: `Waiting for an approving review by an approver at manifest ${record.pendingHash?.slice(0, 12) ?? "?"}.`,
      };
    case "approved":
      return {
        state: "approved",
        approvedHash: record.approvedHash ?? "",
        currentHash: record.pendingHash ?? record.approvedHash ?? "",
        by: record.approvals.map((a) => a.approver),
      };
    case "withdrawn":
      return { state: "withdrawn", reason: record.withdrawnReason ?? "The approval was withdrawn; approve again." };
  }
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
    ...(cycle?.evidence?.summary ? { summary: cycle.evidence.summary } : {}),
  };
}

function testsOf(snapshot: TrackSnapshot): TestView[] {
  const ctx = snapshot.context;
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

/** The build check as the machine decides it (`checkStates`), with the buttons a person needs. */
function buildView(snapshot: TrackSnapshot, check: CheckState | undefined): BuildView {
  const ctx = snapshot.context;
  const reason = [check?.title ?? "", ...(check?.details ?? [])].filter(Boolean).join(". ");
  if (!check) return { state: "failed", reason: "The machine reported no build check (a bug): failing closed." };
  if (check.status === "success") return { state: "done", reason };
  if (snapshot.stage === "blocked") return { state: "blocked", reason, canRerun: true, canRenegotiate: true };
  const last = ctx.cycles.at(-1);
  const errored = last !== undefined && last.outcome === "error" && !ctx.pendingDispatch;
  if (check.status === "failure") return { state: "failed", reason, canRerun: errored || ctx.pendingDispatch === null };
  return BUILD_STAGES.includes(snapshot.stage) ? { state: "running", reason } : { state: "not-started", reason };
}
