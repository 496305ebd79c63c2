import { z } from "zod";
import { simpleGit } from "simple-git";
import { REVIEW_VERDICTS } from "../contracts/review.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { CycleOutcomeSchema, GateRecordSchema, NextActionSchema } from "../contracts/track.js";
import { CHECK_STATUSES, checkStates } from "../gates/checks.js";
import {
  describeLane,
  GATE_NAMES,
  nextAction,
  renderLane,
  renderNextAction,
  restoreSnapshot,
  SnapshotError,
  STAGES,
  type TrackSnapshot,
} from "../orchestrator/index.js";
import { readRoleTrailer } from "../roles/trailer.js";
import type { ToolContext } from "./context.js";
import { localPushes } from "./local-push.js";
import { defineTool, ToolError, type ToolDefinition, type ToolOutputSchema } from "./registry.js";
import type { LoadedState } from "./track-state.js";

/**
 * The tools that read a track: what to do next, where the track stands, and why a commit was
 * refused. They restore the stored snapshot and ask the orchestrator's pure functions; a dry run
 * of a push is a `transition` on a copy whose result is thrown away. Nothing is ever written.
 */

const TrackInput = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .optional()
  .describe("The track id. Default: the track of the checkout's current git branch.");

const StateInfo = z.object({
  trackId: z.string(),
  source: z
    .enum(["file", "github", "commits"])
    .describe(
      "commits: derived from the branch's commits since its merge base with the default branch (no state file, no token); gates then wait for approval.",
    ),
  location: z.string(),
  verified: z
    .boolean()
    .describe(
      "True when the state's signature was checked with CONSORT_STATE_KEY; false for an unsigned snapshot or an unverified read.",
    ),
});

export interface LoadedTrack {
  loaded: LoadedState;
  snapshot: TrackSnapshot;
  config: ConsortConfig;
}

export async function loadTrack(context: ToolContext, track: string | undefined): Promise<LoadedTrack> {
  const loaded = await context.trackState(track);
  let snapshot: TrackSnapshot;
  try {
    snapshot = restoreSnapshot(loaded.snapshot);
  } catch (error) {
    if (error instanceof SnapshotError)
      throw new ToolError(
        `Track ${loaded.trackId}: ${error.message}`,
        error.hint ?? "Ask a maintainer to restore the track's state.",
        "INVALID_STATE",
      );
    throw error;
  }
  if (snapshot.context.trackId !== loaded.trackId) {
    throw new ToolError(
      `The state read for track ${loaded.trackId} holds track ${snapshot.context.trackId}.`,
      "Ask a maintainer to check the track's state.",
      "INVALID_STATE",
    );
  }
  return { loaded, snapshot, config: await context.config() };
}

const stateInfo = (loaded: LoadedState): z.infer<typeof StateInfo> => ({
  trackId: loaded.trackId,
  source: loaded.source.kind,
  location: loaded.source.location,
  verified: loaded.source.verified,
});

/**
 * A tool that reads one track (`input.track`, default the checkout's) and writes nothing: read-only
 * and idempotent, it restores the track and answers with `state`, where the track was read from.
 */
function trackTool<I extends z.ZodObject<{ track: typeof TrackInput }>, O extends ToolOutputSchema>(tool: {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  answer(
    track: LoadedTrack & { state: z.infer<typeof StateInfo> },
    input: z.output<I>,
    context: ToolContext,
  ): Promise<z.input<O>> | z.input<O>;
}): ToolDefinition {
  const { answer, ...described } = tool;
  return defineTool({
    ...described,
    readOnly: true,
    idempotent: true,
    async run(input, context) {
      const track = await loadTrack(context, input.track);
      return answer({ ...track, state: stateInfo(track.loaded) }, input, context);
    },
  });
}

// ---------------------------------------------------------------------------------------------

export const NextActionOutput = z.object({
  state: StateInfo,
  action: NextActionSchema,
  text: z.string().describe("The same, as text for a person."),
});

export const nextActionTool = trackTool({
  name: "next_action",
  title: "What to do next",
  description:
    "Call this first. Returns the next step on the track: who acts (which role, or a person for a gate, or the orchestrator while a cycle runs), the task in plain words, the only paths that role may touch, frozen files and their rules, the tests in turn, what will be checked on push, and the `Consort-Role` trailer the commit must carry. " +
    "A commit by another role, or touching other paths, is rejected by the app.",
  input: z.object({ track: TrackInput }).strict(),
  output: NextActionOutput,
  answer({ state, snapshot, config }) {
    const action = nextAction(snapshot, config);
    return { state, action, text: renderNextAction(action) };
  },
});

// ---------------------------------------------------------------------------------------------

export const TrackStatusOutput = z.object({
  state: StateInfo,
  stage: z.enum(STAGES),
  branch: z.string(),
  baseBranch: z.string(),
  databaseBranch: z.string(),
  head: z.string(),
  lane: z.object({ done: z.array(z.string()), now: z.string(), next: z.array(z.string()) }),
  rejectedHead: z.object({ sha: z.string(), reasons: z.array(z.string()), at: z.string() }).nullable(),
  gates: z.array(
    z.object({
      gate: z.enum(GATE_NAMES),
      status: GateRecordSchema.shape.status,
      pendingHash: z.string().nullable(),
      approvedHash: z.string().nullable(),
      approvals: z.array(z.object({ approver: z.string(), commit: z.string(), at: z.string() })),
      withdrawnReason: z.string().nullable(),
    }),
  ),
  units: z.array(
    z.object({
      id: z.string(),
      tests: z.array(z.string()),
      red: z.boolean().describe("A RED cycle was verified."),
      green: z.boolean().describe("A GREEN cycle was verified."),
      review: REVIEW_VERDICTS.nullable(),
      complete: z.boolean(),
    }),
  ),
  unitInTurn: z.string().nullable(),
  attempts: z.number().int().describe("Failed verifications in the current step."),
  repairBound: z.number().int(),
  blocked: z.string().nullable().describe("Why the track is blocked, when it is."),
  pendingCycle: z.object({ dispatchId: z.string(), step: z.string(), commit: z.string(), unit: z.string() }).nullable(),
  recentCycles: z.array(
    z.object({
      dispatchId: z.string(),
      step: z.string(),
      unit: z.string(),
      commit: z.string(),
      outcome: CycleOutcomeSchema.nullable(),
      reasons: z.array(z.string()),
    }),
  ),
  lastProblem: z.array(z.string()),
  checks: z.array(z.object({ name: z.string(), status: z.enum(CHECK_STATUSES), title: z.string() })),
  text: z.string().describe("The lane as text: done, now, next."),
});

export const trackStatusTool = trackTool({
  name: "track_status",
  title: "Where the track stands",
  description:
    "The whole lane of the track and where it stands: design steps and gates done, the step now, what comes next; each gate's status and approvals; each build unit's RED, GREEN and review evidence; the cycle in flight and recent cycle outcomes; a rejected commit if the branch holds one; and the state each consort/* check shows.",
  input: z.object({ track: TrackInput }).strict(),
  output: TrackStatusOutput,
  answer({ state, snapshot, config }) {
    const c = snapshot.context;
    return {
      state,
      stage: snapshot.stage,
      branch: c.branch,
      baseBranch: c.baseBranch,
      databaseBranch: c.databaseBranch,
      head: c.head,
      lane: describeLane(snapshot),
      rejectedHead: c.rejectedHead,
      gates: GATE_NAMES.map((gate) => {
        const record = c.gates[gate];
        return {
          gate,
          status: record.status,
          pendingHash: record.pendingHash,
          approvedHash: record.approvedHash,
          approvals: record.approvals.map((a) => ({ approver: a.approver, commit: a.commit, at: a.at })),
          withdrawnReason: record.withdrawnReason,
        };
      }),
      units: c.units.map((unit) => {
        const evidence = c.evidence[unit.id];
        return {
          id: unit.id,
          tests: unit.tests.map((t) => t.id),
          red: Boolean(evidence?.red),
          green: Boolean(evidence?.green),
          review: evidence?.review?.verdict ?? null,
          complete: evidence?.complete ?? false,
        };
      }),
      unitInTurn: c.units[c.unitIndex]?.id ?? null,
      attempts: c.attempts,
      repairBound: config.repairBound,
      blocked: c.blocked?.reason ?? null,
      pendingCycle: c.pendingDispatch,
      recentCycles: c.cycles.slice(-5).map((cycle) => ({
        dispatchId: cycle.dispatchId,
        step: cycle.step,
        unit: cycle.unit,
        commit: cycle.commit,
        outcome: cycle.outcome,
        reasons: cycle.reasons,
      })),
      lastProblem: c.lastProblem,
      checks: checkStates(snapshot).map((check) => ({ name: check.name, status: check.status, title: check.title })),
      text: renderLane(snapshot),
    };
  },
});

// ---------------------------------------------------------------------------------------------

export const ExplainRejectionOutput = z.object({
  state: StateInfo,
  stage: z.enum(STAGES),
  recorded: z
    .object({ commit: z.string(), reasons: z.array(z.string()), at: z.string() })
    .nullable()
    .describe("The commit the app refused, as recorded in the track's state; null when the branch holds none."),
  local: z
    .object({
      status: z
        .enum(["nothing-to-push", "accepted", "rejected", "unavailable"])
        .describe("What the app would decide if the checkout's commits were pushed now."),
      commits: z.array(z.object({ sha: z.string(), subject: z.string(), role: z.string().nullable() })),
      reasons: z
        .array(z.string())
        .describe("Why they would be refused (rejected), or what the step still lacks (accepted but incomplete)."),
      stageAfter: z.enum(STAGES).nullable(),
    })
    .describe(
      "A dry run of pushing the checkout's commits after the track's last accepted commit; nothing is pushed or recorded.",
    ),
  expected: NextActionSchema.describe("What would be accepted now."),
  advice: z.array(z.string()),
});

export const explainRejectionTool = trackTool({
  name: "explain_rejection",
  title: "Why a commit was refused",
  description:
    "Explain why the app refused the track's last pushed commit (every reason: role trailer, whose turn, paths not owned now, frozen or protected files, author identity), and what would be accepted instead. " +
    "Also dry-runs the checkout's own unpushed commits through the same decision, so you can fix them before pushing. Never pushes, resets or records anything.",
  input: z
    .object({
      track: TrackInput,
      includeLocal: z
        .boolean()
        .default(true)
        .describe("Also judge the checkout's commits after the track's last accepted commit."),
    })
    .strict(),
  output: ExplainRejectionOutput,
  async answer({ state, snapshot, config }, input, context) {
    const c = snapshot.context;
    const expected = nextAction(snapshot, config);
    const advice: string[] = [];
    if (c.rejectedHead) {
      advice.push(
        `The branch holds refused commit ${c.rejectedHead.sha.slice(0, 7)}: nothing advances until it is reset to ${c.head.slice(0, 7)} (git push --force-with-lease origin ${c.head}:${c.branch}), then push the step again.`,
      );
    }
    let local: z.infer<typeof ExplainRejectionOutput>["local"] = {
      status: "unavailable",
      commits: [],
      reasons: [],
      stageAfter: null,
    };
    if (input.includeLocal) {
      try {
        // Judge from the last accepted head, as the push after a reset would be judged.
        const base: TrackSnapshot = { ...snapshot, context: { ...c, rejectedHead: null } };
        const pushed = await localPushes(context.repoPath, base, config, {
          at: new Date().toISOString(),
          defaultBranch: c.baseBranch,
        });
        const commits = await localCommits(context.repoPath, c.head);
        const refused = pushed.steps.find((step) => step.result.rejection);
        if (pushed.steps.length === 0) local = { status: "nothing-to-push", commits, reasons: [], stageAfter: null };
        else if (refused?.result.rejection)
          local = { status: "rejected", commits, reasons: refused.result.rejection.reasons, stageAfter: null };
        else
          local = {
            status: "accepted",
            commits,
            reasons: pushed.snapshot.context.lastProblem,
            stageAfter: pushed.snapshot.stage,
          };
        if (local.status === "rejected")
          advice.push(
            "Fix the local commits (amend or rebuild them from the last accepted commit) so each carries the expected role's trailer and touches only its allowed paths.",
          );
        if (local.status === "accepted" && local.reasons.length > 0)
          advice.push(
            "The local commits would be accepted, but the step is not complete yet: fix the problems listed before expecting the track to move on.",
          );
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
        local = {
          status: "unavailable",
          commits: [],
          reasons: [`${error.message}${error.hint ? ` ${error.hint}` : ""}`],
          stageAfter: null,
        };
      }
    }
    if (expected.role && expected.trailer)
      advice.push(
        `Next accepted step: ${expected.role} — ${expected.task} Touch only ${expected.allowedPaths.join(", ")}; end the commit message with "${expected.trailer}".`,
      );
    else advice.push(`Next: ${expected.task}`);
    return {
      state,
      stage: snapshot.stage,
      recorded: c.rejectedHead
        ? { commit: c.rejectedHead.sha, reasons: c.rejectedHead.reasons, at: c.rejectedHead.at }
        : null,
      local,
      expected,
      advice,
    };
  },
});

/** The checkout's commits after `from` (first-parent, oldest first): each one's subject and the role it claims. */
async function localCommits(repoPath: string, from: string) {
  const out = await simpleGit(repoPath).raw([
    "log",
    "--first-parent",
    "--reverse",
    "--format=%H%x00%B%x01",
    `${from}..HEAD`,
  ]);
  return out
    .split("\x01")
    .map((entry) => entry.replace(/^\n/, ""))
    .filter(Boolean)
    .map((entry) => {
      const [sha = "", message = ""] = entry.split("\0");
      const claim = readRoleTrailer(message);
      return { sha, subject: message.split("\n")[0] ?? "", role: claim.ok ? claim.role : null };
    });
}
