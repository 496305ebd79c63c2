import { assertEvent, assign, setup } from "xstate";
import { hashFrozenText, manifestHashFromHashes } from "../gates/hash.js";
import type { FileGate } from "../contracts/gates.js";
import { currentUnit } from "../contracts/track.js";
import {
  addAuthors,
  addFrozenText,
  designManifest,
  effectiveFrozenTests,
  openGate,
  promoteManifest,
  resumeBuild,
  startDispatch,
  testListManifest,
  withUnitEvidence,
  withdrawFrom,
} from "./context.js";
import type {
  ApprovalRecord,
  CycleEvidence,
  CycleOutcome,
  CycleStep,
  DeployEvidence,
  DesignStep,
  Effect,
  GateName,
  Stage,
  TrackContext,
} from "./types.js";

/**
 * The track machine (docs/ARCHITECTURE.md, The machine) as data: xstate v5 `setup()` with named guards and actions (here)
 * and the states built on them (./machine.ts). It is
 * only ever driven through xstate's pure `transition`/`initialTransition` (src/orchestrator/
 * transition.ts): no actor runs, nothing is executed. Actions that describe effects (`emit`) are
 * collected from the returned action list; `assign` updates the context.
 *
 * Its events are the internal, already-classified form of `TrackEvent`: a push arrives as
 * STEP_PUSHED (every commit accepted) or PUSH_REJECTED, a cycle report only when it names the
 * pending dispatch. Guards still check what the lane depends on, so the graph tests can walk it.
 */

export type MachineEvent =
  | {
      type: "STEP_PUSHED";
      at: string;
      head: string;
      authors: string[];
      /** `.consort/**` texts after the push (null: removed). */
      artifacts: Record<string, string | null>;
      /** Test-file texts after the push (null: removed). */
      testFiles: Record<string, string | null>;
      /** The step's output is complete and valid (design steps, review); always true for code steps. */
      complete: boolean;
      problems: string[];
      /** A story is user-facing, so the design lane visits `ux`. */
      needsUx: boolean;
      verdict: "accept" | "refactor" | null;
    }
  | {
      type: "PUSH_REJECTED";
      at: string;
      sha: string;
      reasons: string[];
      withdraw: FileGate | null;
      /** The tree of the last accepted commit, to recognise a revert of the rejected commits. */
      acceptedTree?: string;
    }
  /** The branch is back at the last accepted commit, or (`head`) at a commit that reverts the rejected ones. */
  | { type: "BRANCH_RESET"; at: string; head?: string }
  /** The default branch was merged into the track ("Update branch"): the head moves, no step was taken. */
  | {
      type: "BRANCH_UPDATED";
      at: string;
      head: string;
      migrationConflicts: string[];
      merges?: string[];
      /** A rebase: each accepted commit and its replay. */
      replayed?: Array<{ from: string; to: string }>;
    }
  | { type: "GATE_APPROVED"; at: string; gate: GateName; approval: ApprovalRecord }
  | { type: "GATE_WITHDRAWN"; at: string; gate: GateName; reason: string }
  | {
      type: "CYCLE_REPORTED";
      at: string;
      step: CycleStep | "promote";
      outcome: CycleOutcome;
      runId: number | null;
      reasons: string[];
      evidence: CycleEvidence | DeployEvidence | null;
    }
  | { type: "RENEGOTIATE"; at: string; by: string; scope: "design" | "test-list"; from: DesignStep; reason: string }
  | { type: "RETRY"; at: string; by: string }
  | { type: "MERGED"; at: string; commit: string }
  | { type: "CLOSED"; at: string; by: string | null }
  | { type: "ABANDON"; at: string; by: string; reason: string };

/** A review on the gate's pending manifest (the reviewer was already checked by src/gates/approval.ts). */
function approves(context: TrackContext, event: MachineEvent, gate: GateName): boolean {
  return (
    event.type === "GATE_APPROVED" &&
    event.gate === gate &&
    context.gates[gate].pendingHash !== null &&
    event.approval.manifestHash === context.gates[gate].pendingHash
  );
}

/** A report of the cycle the machine is waiting for, with this outcome. */
function reportsPending(
  context: TrackContext,
  event: MachineEvent,
  step: CycleStep | "promote",
  outcome: CycleOutcome,
): boolean {
  return (
    event.type === "CYCLE_REPORTED" &&
    context.pendingDispatch?.step === step &&
    event.step === step &&
    event.outcome === outcome
  );
}

/** JSON with sorted keys, so the same evidence always hashes the same. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const applyTexts = (base: Record<string, string>, changes: Record<string, string | null>) => {
  const next = { ...base };
  for (const [path, text] of Object.entries(changes)) {
    if (text === null) delete next[path];
    else next[path] = text;
  }
  return next;
};

/** Which resumed build stage the lane goes to once the test list is approved again. */
function resumeStage(context: TrackContext): "red" | "green" | "deploying" {
  const resumed = resumeBuild(context);
  const unit = currentUnit(resumed);
  if (!unit) return "deploying";
  return resumed.evidence[unit.id]?.red ? "green" : "red";
}

/** The machine's vocabulary: its context and events, and its named guards and actions (the states are in ./machine.ts). */
export const machineSetup = setup({
  types: {
    context: {} as TrackContext,
    events: {} as MachineEvent,
    input: {} as TrackContext,
  },
  actions: {
    /** Describes one effect; the handler executes it. Never run here. */
    emit: (_: unknown, _effect: Effect) => {},
    acceptPush: assign(({ context, event }) => {
      assertEvent(event, "STEP_PUSHED");
      return {
        head: event.head,
        updatedAt: event.at,
        artifacts: applyTexts(context.artifacts, event.artifacts),
        testFiles: applyTexts(context.testFiles, event.testFiles),
        lastProblem: event.problems,
      };
    }),
    recordDesignAuthors: assign(({ context, event }) => {
      assertEvent(event, "STEP_PUSHED");
      return addAuthors(context, ["design", "deploy", "promote"], event.authors);
    }),
    recordTestListAuthors: assign(({ context, event }) => {
      assertEvent(event, "STEP_PUSHED");
      return addAuthors(context, ["test-list", "deploy", "promote"], event.authors);
    }),
    recordBuildAuthors: assign(({ context, event }) => {
      assertEvent(event, "STEP_PUSHED");
      return addAuthors(context, ["deploy", "promote"], event.authors);
    }),
    recordRejection: assign(({ event }) => {
      assertEvent(event, "PUSH_REJECTED");
      const { sha, reasons, at, acceptedTree } = event;
      return { rejectedHead: { sha, reasons, at, ...(acceptedTree ? { acceptedTree } : {}) }, updatedAt: event.at };
    }),
    clearRejection: assign(({ context, event }) => {
      assertEvent(event, "BRANCH_RESET");
      return { rejectedHead: null, head: event.head ?? context.head, updatedAt: event.at };
    }),
    moveHead: assign(({ context, event }) => {
      assertEvent(event, "BRANCH_UPDATED");
      const merges = event.merges ?? [];
      // After a rebase a frozen test's text is read at the replay of the commit whose RED froze it.
      const replayOf = new Map((event.replayed ?? []).map((r) => [r.from, r.to]));
      const frozenTests = Object.fromEntries(
        Object.entries(context.frozenTests).map(([id, entry]) => [
          id,
          { ...entry, commit: replayOf.get(entry.commit) ?? entry.commit },
        ]),
      );
      return {
        head: event.head,
        migrationConflicts: event.migrationConflicts,
        ...(merges.length > 0 ? { updateMerges: [...(context.updateMerges ?? []), ...merges] } : {}),
        ...(replayOf.size > 0 ? { frozenTests } : {}),
        updatedAt: event.at,
      };
    }),
    invalidateRelease: assign(({ context, event }) => {
      assertEvent(event, "BRANCH_UPDATED");
      const reason = `the branch was brought up to date with ${context.baseBranch} at ${event.head.slice(0, 7)}, so the release is verified again against ${context.parentDatabaseBranch} as it stands now`;
      return { ...withdrawFrom(context, "deploy", reason, "withdraw"), deployEvidence: null, updatedAt: event.at };
    }),
    withdrawForPush: assign(({ context, event }) => {
      assertEvent(event, "PUSH_REJECTED");
      return withdrawFrom(context, event.withdraw!, `a frozen file changed in ${event.sha.slice(0, 7)}`, "withdraw");
    }),
    withdrawGate: assign(({ context, event }) => {
      assertEvent(event, "GATE_WITHDRAWN");
      return { ...withdrawFrom(context, event.gate, event.reason, "withdraw"), updatedAt: event.at };
    }),
    openDesignGate: assign(({ context }) => openGate(context, "design", designManifest(context))),
    openTestListGate: assign(({ context }) => openGate(context, "test-list", testListManifest(context))),
    openDeployGate: assign(({ context }) => {
      const files = { "deploy-evidence": context.deployEvidence?.hash ?? "none" };
      return openGate(context, "deploy", { files, hash: manifestHashFromHashes(files) });
    }),
    openPromoteGate: assign(({ context }) => openGate(context, "promote", promoteManifest(context))),
    approveGate: assign(({ context, event }) => {
      assertEvent(event, "GATE_APPROVED");
      const record = context.gates[event.gate];
      return {
        updatedAt: event.at,
        gates: {
          ...context.gates,
          [event.gate]: {
            ...record,
            status: "approved",
            approvedHash: record.pendingHash,
            approvals: [...record.approvals, event.approval],
            withdrawnReason: null,
          },
        },
      };
    }),
    resumeBuild: assign(({ context }) => resumeBuild(context)),
    startCycle: assign(({ context, event }, params: { step: CycleStep | "promote" }) => ({
      ...startDispatch(context, params.step, event.at),
      lastProblem: context.lastProblem,
    })),
    recordReport: assign(({ context, event }) => {
      assertEvent(event, "CYCLE_REPORTED");
      const pending = context.pendingDispatch;
      return {
        updatedAt: event.at,
        pendingDispatch: null,
        lastProblem: event.outcome === "valid" ? [] : event.reasons,
        cycles: context.cycles.map((c) =>
          pending && c.dispatchId === pending.dispatchId
            ? {
                ...c,
                runId: event.runId,
                outcome: event.outcome,
                reasons: event.reasons,
                reportedAt: event.at,
                evidence: event.evidence,
              }
            : c,
        ),
      };
    }),
    recordRed: assign(({ context, event }) => {
      const pending = context.cycles.at(-1)!;
      const unit = currentUnit(context)!;
      // Copied key by key: V8 spreads a record this large (an entry per file per RED) twice as slowly.
      const frozenTests: TrackContext["frozenTests"] = {};
      for (const key of Object.keys(context.frozenTests)) frozenTests[key] = context.frozenTests[key]!;
      // Each distinct text once: most files a RED freezes again are unchanged since the last one,
      // and the others have had tests appended (addFrozenText).
      let frozenTexts = context.frozenTexts;
      const before = effectiveFrozenTests(context);
      const freeze = (key: string, file: string, text: string, test: string) => {
        const hash = hashFrozenText(text);
        if (!Object.hasOwn(frozenTexts, hash)) {
          if (frozenTexts === context.frozenTexts) frozenTexts = { ...context.frozenTexts };
          addFrozenText(frozenTexts, hash, text, before[file]?.hash);
        }
        frozenTests[key] = { file, hash, test, commit: pending.commit };
      };
      for (const test of unit.tests) {
        const text = context.testFiles[test.file];
        if (text !== undefined) freeze(test.id, test.file, text, test.id);
      }
      // Everything else under the test globs decides results too (helpers, fixtures, setup files,
      // snapshots, conftest.py): frozen by the same rule, keyed by the unit's first test and the path.
      const own = new Set(unit.tests.map((t) => t.file));
      const by = unit.tests[0]!.id;
      for (const [file, text] of Object.entries(context.testFiles)) {
        if (own.has(file)) continue;
        freeze(`${by} ${file}`, file, text, by);
      }
      const next = withUnitEvidence(context, (ev) => ({
        ...ev,
        red: { dispatchId: pending.dispatchId, commit: pending.commit, at: event.at },
      }));
      return { ...next, frozenTests, frozenTexts, attempts: 0 };
    }),
    recordGreen: assign(({ context, event }) => {
      const pending = context.cycles.at(-1)!;
      return {
        ...withUnitEvidence(context, (ev) => ({
          ...ev,
          green: { dispatchId: pending.dispatchId, commit: pending.commit, at: event.at },
        })),
        attempts: 0,
      };
    }),
    recordReview: assign(({ context, event }) => {
      assertEvent(event, "STEP_PUSHED");
      return withUnitEvidence(context, (ev) => ({
        ...ev,
        review: { verdict: event.verdict!, commit: event.head, at: event.at },
      }));
    }),
    recordRefactor: assign(({ context, event }) => {
      const pending = context.cycles.at(-1)!;
      return withUnitEvidence(context, (ev) => ({
        ...ev,
        refactor: { dispatchId: pending.dispatchId, commit: pending.commit, at: event.at },
      }));
    }),
    completeUnit: assign(({ context }) => {
      const next = withUnitEvidence(context, (ev) => ({ ...ev, complete: true }));
      return { ...next, unitIndex: context.unitIndex + 1, attempts: 0, lastProblem: [] };
    }),
    countAttempt: assign(({ context }) => ({ attempts: context.attempts + 1 })),
    block: assign(({ context, event }, params: { resume: Stage }) => ({
      blocked: {
        reason: event.type === "CYCLE_REPORTED" ? event.reasons.join("; ") || "verification failed" : "blocked",
        resume: params.resume,
      },
      attempts: context.attempts + 1,
    })),
    unblock: assign(({ event }) => ({ blocked: null, attempts: 0, lastProblem: [], updatedAt: event.at })),
    recordDeploy: assign(({ context, event }) => {
      assertEvent(event, "CYCLE_REPORTED");
      const pending = context.cycles.at(-1)!;
      const evidence = event.evidence;
      // Only a deploy report carries checks; the release step is reported by nothing else.
      if (evidence === null || !("checks" in evidence))
        throw new Error(`the release cycle ${pending.dispatchId} reported no deploy evidence`);
      return {
        deployEvidence: {
          dispatchId: pending.dispatchId,
          commit: pending.commit,
          hash: hashFrozenText(stableJson(evidence)),
          evidence,
        },
      };
    }),
    recordMerge: assign(({ event }) => {
      assertEvent(event, "MERGED");
      return { mergedCommit: event.commit, updatedAt: event.at };
    }),
    /** Renegotiation reopens the gate of its scope (withdrawal cascades down the lane from there). */
    reopen: assign(({ context, event }) => {
      assertEvent(event, "RENEGOTIATE");
      return {
        ...withdrawFrom(context, event.scope, `renegotiated by ${event.by}: ${event.reason}`, "reopen"),
        blocked: null,
        attempts: 0,
        updatedAt: event.at,
      };
    }),
    end: assign(({ event }) => {
      const by = event.type === "ABANDON" ? event.by : event.type === "CLOSED" ? event.by : null;
      const reason =
        event.type === "ABANDON"
          ? event.reason
          : event.type === "CLOSED"
            ? "the pull request was closed without merging"
            : event.type === "MERGED"
              ? "merged before the promote gate was approved: Consort promoted nothing"
              : "done";
      return { ended: { reason, by, at: event.at }, pendingDispatch: null, updatedAt: event.at };
    }),
  },
  guards: {
    complete: ({ event }) => event.type === "STEP_PUSHED" && event.complete,
    completeNeedsUx: ({ event }) => event.type === "STEP_PUSHED" && event.complete && event.needsUx,
    reviewAccepts: ({ event }) => event.type === "STEP_PUSHED" && event.complete && event.verdict === "accept",
    reviewAsksRefactor: ({ event }) => event.type === "STEP_PUSHED" && event.complete && event.verdict === "refactor",
    approvesPending: ({ context, event }, params: { gate: GateName }) => approves(context, event, params.gate),
    approvesDesignWithTestListOpen: ({ context, event }) =>
      approves(context, event, "design") && context.gates["test-list"].status !== "closed",
    approvesTestListResumingAt: ({ context, event }, params: { stage: "red" | "green" | "deploying" }) =>
      approves(context, event, "test-list") && resumeStage(context) === params.stage,
    reviewAcceptsLastUnit: ({ context, event }) =>
      event.type === "STEP_PUSHED" &&
      event.complete &&
      event.verdict === "accept" &&
      context.unitIndex + 1 >= context.units.length,
    refactorVerifiedOnLastUnit: ({ context, event }) =>
      event.type === "CYCLE_REPORTED" &&
      reportsPending(context, event, "refactor", "valid") &&
      context.unitIndex + 1 >= context.units.length,
    reports: ({ context, event }, params: { step: CycleStep | "promote"; outcome: CycleOutcome }) =>
      reportsPending(context, event, params.step, params.outcome),
    reportsWithinBound: ({ context, event }, params: { step: CycleStep; outcome: CycleOutcome }) =>
      reportsPending(context, event, params.step, params.outcome) &&
      context.attempts + 1 < context.settings.repairBound,
    withdrawsApproved: ({ context, event }, params: { gate: GateName }) =>
      (event.type === "PUSH_REJECTED"
        ? event.withdraw === params.gate
        : event.type === "GATE_WITHDRAWN" && event.gate === params.gate) &&
      context.gates[params.gate].status === "approved",
    resumesTo: ({ context }, params: { stage: Stage }) => context.blocked?.resume === params.stage,
    renegotiates: ({ event }, params: { scope: "design" | "test-list"; from?: DesignStep }) =>
      event.type === "RENEGOTIATE" &&
      event.scope === params.scope &&
      (params.scope === "test-list" || event.from === params.from),
  },
});
