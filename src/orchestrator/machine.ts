import { FILE_GATES, GATE_NAMES } from "../contracts/gates.js";
import { currentUnit } from "../contracts/track.js";
import { cycleEffect } from "./context.js";
import { DESIGN_STEPS, STAGES } from "./types.js";
import { machineSetup, type MachineEvent } from "./machine-setup.js";
import type { CycleStep, DesignStep, Effect, Stage, TrackContext } from "./types.js";

/**
 * The track machine's states (docs/ARCHITECTURE.md, The machine): the lane from the first design step to the merge, built
 * on the guards and actions of ./machine-setup.ts. Driven only through xstate's pure transition
 * (src/orchestrator/transition.ts).
 */

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

type Ev<T extends MachineEvent["type"]> = Extract<MachineEvent, { type: T }>;

const outcomeComment = (context: TrackContext, event: Ev<"CYCLE_REPORTED">, what: string) =>
  [
    `**${what}** (${event.step}${currentUnit(context) ? ` for ${currentUnit(context)!.id}` : ""}, commit ${context.head.slice(0, 7)}):`,
    ...event.reasons.map((r) => `- ${r}`),
  ].join("\n");

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
