import { assertEvent, assign, setup } from "xstate";
import { hashFrozenText, manifestHashFromHashes } from "../gates/freeze.js";
import { FILE_GATES, GATE_NAMES, type FileGate } from "../gates/names.js";
import {
  addAuthors,
  currentUnit,
  cycleEffect,
  designManifest,
  openGate,
  promoteManifest,
  resumeBuild,
  startDispatch,
  testListManifest,
  withUnitEvidence,
  withdrawFrom,
} from "./context.js";
import { DESIGN_STEPS, STAGES } from "./types.js";
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
 * The track machine (design §3) as data: xstate v5 `setup()` with named guards and actions. It is
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

/** The lane a track moves along until the merge: every stage from the first design step to the promote gate. */
const LANE: readonly Stage[] = STAGES.slice(0, STAGES.indexOf("promote-gate") + 1);
/** From its gate on, a person may reopen the test list. */
const TEST_LIST_RENEGOTIABLE = LANE.slice(LANE.indexOf("test-list-gate"));

/** The renegotiations a person may start at `stage`: the test list from the gate on, any earlier design step. */
function renegotiation(stage: Stage) {
  const at = LANE.indexOf(stage);
  const out: Array<{
    guard: { type: "renegotiates"; params: { scope: "design" | "test-list"; from?: DesignStep } };
    target: string;
    actions: "reopen";
  }> = [];
  if (TEST_LIST_RENEGOTIABLE.includes(stage))
    out.push({
      guard: { type: "renegotiates", params: { scope: "test-list" } },
      target: "test-list",
      actions: "reopen",
    });
  for (const step of DESIGN_STEPS) {
    if (at > LANE.indexOf(step))
      out.push({
        guard: { type: "renegotiates", params: { scope: "design", from: step } },
        target: step,
        actions: "reopen",
      });
  }
  return out;
}

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

type Ev<T extends MachineEvent["type"]> = Extract<MachineEvent, { type: T }>;

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

const outcomeComment = (context: TrackContext, event: Ev<"CYCLE_REPORTED">, what: string) =>
  [
    `**${what}** (${event.step}${currentUnit(context) ? ` for ${currentUnit(context)!.id}` : ""}, commit ${context.head.slice(0, 7)}):`,
    ...event.reasons.map((r) => `- ${r}`),
  ].join("\n");

const machineSetup = setup({
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
      const frozenTests = { ...context.frozenTests };
      for (const test of unit.tests) {
        const text = context.testFiles[test.file];
        if (text !== undefined)
          frozenTests[test.id] = {
            file: test.file,
            text,
            hash: hashFrozenText(text),
            test: test.id,
            commit: pending.commit,
          };
      }
      // Everything else under the test globs decides results too (helpers, fixtures, setup files,
      // snapshots, conftest.py): frozen by the same rule, keyed by the unit's first test and the path.
      const own = new Set(unit.tests.map((t) => t.file));
      const by = unit.tests[0]!.id;
      for (const [file, text] of Object.entries(context.testFiles)) {
        if (own.has(file)) continue;
        frozenTests[`${by} ${file}`] = { file, text, hash: hashFrozenText(text), test: by, commit: pending.commit };
      }
      const next = withUnitEvidence(context, (ev) => ({
        ...ev,
        red: { dispatchId: pending.dispatchId, commit: pending.commit, at: event.at },
      }));
      return { ...next, frozenTests, attempts: 0 };
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

type StateConfig = Parameters<typeof machineSetup.createStateConfig>[0];
/** One transition on CYCLE_REPORTED (the machine's events, guards and actions, type-checked). */
type ReportTransition = Exclude<
  Extract<NonNullable<NonNullable<StateConfig["on"]>["CYCLE_REPORTED"]>, readonly unknown[]>[number],
  string | undefined
>;

const DESIGN_PUSH = ["acceptPush", "recordDesignAuthors"] as const;

/** A design step's push: always accepted, and onward to `next` once the step's artifacts are complete. */
function designPushed<T extends Stage>(next: T) {
  return [{ guard: "complete" as const, target: next, actions: DESIGN_PUSH }, { actions: DESIGN_PUSH }];
}

const BUILD_PUSH = ["acceptPush", "recordBuildAuthors"] as const;

/**
 * The default branch merged into a track whose release was verified (or is being verified): the
 * verification no longer describes the head, so the deploy and promote gates close, the track's
 * database branch is forked afresh from its parent as the parent stands now (other features may
 * have been promoted into it), and the release runs again on the new head.
 */
const REVERIFY_RELEASE = {
  target: "deploying" as const,
  reenter: true,
  actions: [
    "moveHead",
    "invalidateRelease",
    {
      type: "emit",
      params: ({ context }: { context: TrackContext }): Effect => ({
        type: "deleteDatabase",
        branch: context.databaseBranch,
      }),
    },
    {
      type: "emit",
      params: ({ context }: { context: TrackContext }): Effect => ({
        type: "forkDatabase",
        branch: context.databaseBranch,
        parent: context.parentDatabaseBranch,
      }),
    },
  ],
} as const;

/** A build step (red, green, repair, refactor): the role's push is accepted and sent to `verify`. */
function buildStep<T extends Stage>(stage: Stage, verify: T) {
  return { on: { RENEGOTIATE: renegotiation(stage), STEP_PUSHED: { target: verify, actions: BUILD_PUSH } } };
}

/** The report of a valid `step` cycle moves the lane to `target`, recording it with `actions`. */
function validReport<T extends Stage, const A extends readonly string[]>(
  step: "red" | "green" | "refactor",
  target: T,
  ...actions: A
) {
  return { guard: { type: "reports" as const, params: { step, outcome: "valid" as const } }, target, actions };
}

/** A final state: the track has ended, so its database branch is deleted and the PR is told so (`note`). */
function ended(note: (context: TrackContext) => string) {
  return machineSetup.createStateConfig({
    type: "final",
    entry: [
      { type: "emit", params: ({ context }) => ({ type: "deleteDatabase", branch: context.databaseBranch }) },
      { type: "emit", params: ({ context }) => comment(note(context)) },
    ],
  });
}

/**
 * A `*-verify` state: entering it dispatches the step's cycle; the report of that cycle moves the
 * lane on (`valid`), sends it back to `retry` while attempts remain, blocks it once they are used
 * up, and leaves it waiting when the cycle could not decide. A person may retry (a new dispatch).
 */
function verifyState(verify: {
  step: Exclude<CycleStep, "release">;
  valid: ReportTransition[];
  retry: "red" | "repair" | "refactor";
  invalid: (context: TrackContext) => string;
}) {
  const { step, retry } = verify;
  const stage = `${step}-verify` as const;
  const name = step === "refactor" ? "refactor" : step.toUpperCase();
  const blocked = `${step === "refactor" ? "The refactor" : name} failed its last allowed attempt: blocked`;
  const undecided = `The ${name} cycle could not decide (retry when fixed)`;
  return machineSetup.createStateConfig({
    entry: [
      { type: "startCycle", params: { step } },
      { type: "emit", params: ({ context }) => cycleEffect(context) },
    ],
    on: {
      RENEGOTIATE: renegotiation(stage),
      CYCLE_REPORTED: [
        ...verify.valid,
        {
          guard: { type: "reportsWithinBound", params: { step, outcome: "invalid" } },
          target: retry,
          actions: [
            "recordReport",
            "countAttempt",
            {
              type: "emit",
              params: ({ context, event }) => comment(outcomeComment(context, event, verify.invalid(context))),
            },
          ],
        },
        {
          guard: { type: "reports", params: { step, outcome: "invalid" } },
          target: "blocked",
          actions: [
            "recordReport",
            { type: "block", params: { resume: retry } },
            {
              type: "emit",
              params: ({ context, event }) =>
                comment(
                  `${outcomeComment(context, event, blocked)}\n\nA person decides: retry, renegotiate the test list, or abandon.`,
                ),
            },
          ],
        },
        {
          guard: { type: "reports", params: { step, outcome: "error" } },
          actions: [
            "recordReport",
            { type: "emit", params: ({ context, event }) => comment(outcomeComment(context, event, undecided)) },
          ],
        },
      ],
      RETRY: { target: stage, reenter: true },
    },
  });
}

export const trackMachine = machineSetup.createMachine({
  id: "track",
  context: ({ input }) => input,
  initial: "stories",
  entry: [
    {
      type: "emit",
      params: ({ context }) => ({
        type: "forkDatabase",
        branch: context.databaseBranch,
        parent: context.parentDatabaseBranch,
      }),
    },
  ],
  on: {
    // A refused push withdraws the approved file gate whose frozen files it changed.
    PUSH_REJECTED: [
      ...FILE_GATES.map((gate) => ({
        guard: { type: "withdrawsApproved" as const, params: { gate } },
        target: `.${gate}-gate` as const,
        actions: ["recordRejection", "withdrawForPush"] as const,
      })),
      { actions: "recordRejection" },
    ],
    BRANCH_RESET: { actions: "clearRejection" },
    BRANCH_UPDATED: { actions: "moveHead" },
    GATE_WITHDRAWN: GATE_NAMES.map((gate) => ({
      guard: { type: "withdrawsApproved" as const, params: { gate } },
      target: `.${gate}-gate` as const,
      actions: "withdrawGate" as const,
    })),
    ABANDON: { target: ".abandoned", actions: "end" },
    CLOSED: { target: ".abandoned", actions: "end" },
    MERGED: { target: ".abandoned", actions: "end" },
  },
  states: {
    stories: {
      on: {
        STEP_PUSHED: designPushed("spec"),
      },
    },
    spec: {
      on: {
        RENEGOTIATE: renegotiation("spec"),
        STEP_PUSHED: designPushed("architecture"),
      },
    },
    architecture: {
      on: {
        RENEGOTIATE: renegotiation("architecture"),
        STEP_PUSHED: designPushed("db-design"),
      },
    },
    "db-design": {
      on: {
        RENEGOTIATE: renegotiation("db-design"),
        STEP_PUSHED: [{ guard: "completeNeedsUx", target: "ux", actions: DESIGN_PUSH }, ...designPushed("design-gate")],
      },
    },
    ux: {
      on: {
        RENEGOTIATE: renegotiation("ux"),
        STEP_PUSHED: designPushed("design-gate"),
      },
    },
    "design-gate": {
      entry: "openDesignGate",
      on: {
        RENEGOTIATE: renegotiation("design-gate"),
        GATE_APPROVED: [
          { guard: "approvesDesignWithTestListOpen", target: "test-list-gate", actions: "approveGate" },
          {
            guard: { type: "approvesPending", params: { gate: "design" } },
            target: "test-list",
            actions: "approveGate",
          },
        ],
      },
    },
    "test-list": {
      on: {
        RENEGOTIATE: renegotiation("test-list"),
        STEP_PUSHED: [
          { guard: "complete", target: "test-list-gate", actions: ["acceptPush", "recordTestListAuthors"] },
          { actions: ["acceptPush", "recordTestListAuthors"] },
        ],
      },
    },
    "test-list-gate": {
      entry: "openTestListGate",
      on: {
        RENEGOTIATE: renegotiation("test-list-gate"),
        GATE_APPROVED: (["deploying", "green", "red"] as const).map((stage) => ({
          guard: { type: "approvesTestListResumingAt" as const, params: { stage } },
          target: stage,
          actions: ["approveGate", "resumeBuild"] as const,
        })),
      },
    },
    red: buildStep("red", "red-verify"),
    "red-verify": verifyState({
      step: "red",
      valid: [validReport("red", "green", "recordReport", "recordRed")],
      retry: "red",
      invalid: () => "RED is not valid",
    }),
    green: buildStep("green", "green-verify"),
    repair: buildStep("repair", "green-verify"),
    "green-verify": verifyState({
      step: "green",
      valid: [validReport("green", "review", "recordReport", "recordGreen")],
      retry: "repair",
      invalid: (context) =>
        `GREEN is not valid: repair round ${context.attempts} of ${context.settings.repairBound - 1}`,
    }),
    review: {
      on: {
        RENEGOTIATE: renegotiation("review"),
        STEP_PUSHED: [
          {
            guard: "reviewAsksRefactor",
            target: "refactor",
            actions: ["acceptPush", "recordBuildAuthors", "recordReview"],
          },
          {
            guard: "reviewAcceptsLastUnit",
            target: "deploying",
            actions: ["acceptPush", "recordBuildAuthors", "recordReview", "completeUnit"],
          },
          {
            guard: "reviewAccepts",
            target: "red",
            actions: ["acceptPush", "recordBuildAuthors", "recordReview", "completeUnit"],
          },
          { actions: ["acceptPush", "recordBuildAuthors"] },
        ],
      },
    },
    refactor: buildStep("refactor", "refactor-verify"),
    "refactor-verify": verifyState({
      step: "refactor",
      valid: [
        {
          guard: "refactorVerifiedOnLastUnit",
          target: "deploying",
          actions: ["recordReport", "recordRefactor", "completeUnit"],
        },
        validReport("refactor", "red", "recordReport", "recordRefactor", "completeUnit"),
      ],
      retry: "refactor",
      invalid: () => "The refactor broke the tests",
    }),
    blocked: {
      on: {
        RENEGOTIATE: renegotiation("blocked"),
        RETRY: (["red", "repair", "refactor", "deploying"] as const).map((stage) => ({
          guard: { type: "resumesTo" as const, params: { stage } },
          target: stage,
          actions: "unblock" as const,
        })),
      },
    },
    deploying: {
      entry: [
        { type: "startCycle", params: { step: "release" } },
        { type: "emit", params: ({ context }) => cycleEffect(context) },
      ],
      on: {
        RENEGOTIATE: renegotiation("deploying"),
        CYCLE_REPORTED: [
          {
            guard: { type: "reports", params: { step: "release", outcome: "valid" } },
            target: "deploy-gate",
            actions: ["recordReport", "recordDeploy"],
          },
          {
            guard: { type: "reports", params: { step: "release", outcome: "invalid" } },
            target: "blocked",
            actions: [
              "recordReport",
              { type: "block", params: { resume: "deploying" } },
              {
                type: "emit",
                params: ({ context, event }) =>
                  comment(
                    `${outcomeComment(context, event, "The preview deploy did not verify: blocked")}\n\nA person decides: retry, renegotiate, or abandon.`,
                  ),
              },
            ],
          },
          {
            guard: { type: "reports", params: { step: "release", outcome: "error" } },
            actions: [
              "recordReport",
              {
                type: "emit",
                params: ({ context, event }) =>
                  comment(outcomeComment(context, event, "The release cycle could not decide (retry when fixed)")),
              },
            ],
          },
        ],
        RETRY: { target: "deploying", reenter: true },
        BRANCH_UPDATED: REVERIFY_RELEASE,
      },
    },
    "deploy-gate": {
      entry: "openDeployGate",
      on: {
        RENEGOTIATE: renegotiation("deploy-gate"),
        BRANCH_UPDATED: REVERIFY_RELEASE,
        GATE_APPROVED: {
          guard: { type: "approvesPending", params: { gate: "deploy" } },
          target: "promote-gate",
          actions: "approveGate",
        },
      },
    },
    "promote-gate": {
      entry: "openPromoteGate",
      on: {
        RENEGOTIATE: renegotiation("promote-gate"),
        BRANCH_UPDATED: REVERIFY_RELEASE,
        GATE_APPROVED: {
          guard: { type: "approvesPending", params: { gate: "promote" } },
          target: "merging",
          actions: "approveGate",
        },
      },
    },
    merging: {
      on: { MERGED: { target: "promoting", actions: "recordMerge" }, BRANCH_UPDATED: REVERIFY_RELEASE },
    },
    promoting: {
      entry: [
        { type: "startCycle", params: { step: "promote" } },
        {
          type: "emit",
          params: ({ context }) => ({
            type: "promoteDatabase",
            dispatchId: context.pendingDispatch!.dispatchId,
            branch: context.databaseBranch,
            parent: context.parentDatabaseBranch,
            commit: context.mergedCommit ?? context.head,
          }),
        },
      ],
      on: {
        CYCLE_REPORTED: [
          {
            guard: { type: "reports", params: { step: "promote", outcome: "valid" } },
            target: "done",
            actions: "recordReport",
          },
          {
            guard: ({ context, event }) =>
              event.type === "CYCLE_REPORTED" &&
              event.step === "promote" &&
              context.pendingDispatch?.step === "promote",
            actions: [
              "recordReport",
              {
                type: "emit",
                params: ({ event }) =>
                  comment(
                    `**Promotion did not complete**; the parent's snapshot is kept. Retry when fixed:\n${event.reasons.map((r) => `- ${r}`).join("\n")}`,
                  ),
              },
            ],
          },
        ],
        RETRY: { target: "promoting", reenter: true },
        // After the merge the track can only finish: closing or merging again changes nothing.
        MERGED: {},
        CLOSED: {},
        GATE_WITHDRAWN: {},
      },
    },
    done: ended(
      (context) =>
        `**Done.** ${promotionNote(context) ?? `${context.parentDatabaseBranch} is migrated to ${(context.mergedCommit ?? context.head).slice(0, 7)}.`} The track's database branch is deleted.`,
    ),
    abandoned: ended(
      (context) => `**Track abandoned**: ${context.ended?.reason ?? "abandoned"}. Its database branch is deleted.`,
    ),
  },
});

function comment(body: string): Effect {
  return { type: "comment", body };
}

/** What the promotion that passed said it did, when it said more than "migrated" (e.g. no persistent parent). */
function promotionNote(context: TrackContext): string | undefined {
  const promoted = context.cycles.findLast((c) => c.step === "promote" && c.outcome === "valid");
  return promoted?.reasons.length ? promoted.reasons.join(" ") : undefined;
}
