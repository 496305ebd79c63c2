import type { ConsortConfig } from "../config/consort-config.js";
import { AgentRequest } from "../contracts/agent-turn.js";
import { GATE_NAMES, gateCheckName, type CheckName, type GateName } from "../contracts/gates.js";
import { restoreSnapshot, type Effect, type TrackSnapshot } from "../orchestrator/index.js";
import type { TrackState } from "../state/index.js";
import type { BranchProvider } from "../substrate/index.js";
import { placementOf, type Placement } from "../contracts/placement.js";
import {
  renderCheckRuns,
  renderComment,
  upsertStickyComment,
  writeCheckRuns,
  type CheckAction,
  type RenderedCheckRun,
  type SchemaView,
} from "../report/index.js";
import { breakingFindings, compareBranches } from "../substrate/index.js";
import { dispatchWorkflow, type WorkflowKind } from "../github/dispatch.js";
import { workflowRequestOf } from "./requests.js";
import { BUTTONS } from "../app/checks.js";
import { openPullRequestFor } from "../github/pull-request.js";
import { trackReport } from "../app/report-view.js";
import { stateStoreFor, type EngineDeps } from "./track.js";

export interface EffectRun {
  trackId: string;
  state: TrackState;
  snapshot: TrackSnapshot;
  effects: Effect[];
  config: ConsortConfig;
  /** Reasons the machine refused the event, shown in the sticky comment. */
  rejection?: string[];
  /** What this delivery saw but did not act on (e.g. a run that borrowed a dispatch id), shown on the checks and the comment. */
  notes?: string[];
}

/**
 * Execute a transition's effects, in order: database branches, dispatches (each request's hash
 * already recorded on `consort/state` with the step), check runs (written only on change), then the ONE sticky comment. Every
 * effect is attempted; any that failed are rethrown together so the delivery shows as failed and
 * `consort reconcile` repairs what is missing.
 */
export async function runEffects(deps: EngineDeps, run: EffectRun): Promise<void> {
  const { octokit, repo, services } = deps;
  const failures: string[] = [];
  const failed: FailedEffect[] = [];
  const comments: string[] = [];
  // The checks are written once, after every other effect, so they can say which effect failed.
  let checksOn: string | undefined;
  let provider: BranchProvider | undefined;
  const database = async () => (provider ??= await services.openProvider(run.config.database));
  try {
    for (const effect of run.effects) {
      try {
        switch (effect.type) {
          case "forkDatabase":
            // Providers reuse a branch that exists with the same parent, so a retry after a partial failure completes.
            await (await database()).createBranch(effect.branch, { from: effect.parent });
            break;
          case "deleteDatabase": {
            // A branch already gone is what a retry wants: only an existing one is deleted.
            const provider = await database();
            if (await provider.getBranch(effect.branch)) await provider.deleteBranch(effect.branch);
            break;
          }
          case "dispatchCycle":
          case "promoteDatabase":
            await dispatchRecorded(deps, run, effect);
            break;
          case "dispatchAgent":
            if (run.config.agents.enabled) {
              const request = AgentRequest.parse({
                version: 1,
                track: run.state.branch,
                role: effect.role,
                commit: effect.nextAction.head,
                nextAction: effect.nextAction,
                allowedPaths: effect.nextAction.allowedPaths,
              });
              await dispatchNow(deps, "agent", request);
            }
            break;
          case "updateChecks":
            checksOn = effect.commit;
            break;
          case "comment":
            comments.push(effect.body);
            break;
        }
      } catch (error) {
        const message = (error as Error).message;
        deps.log.error({ trackId: run.trackId, effect: effect.type }, `effect failed: ${message}`);
        failures.push(`${effect.type}: ${message}`);
        failed.push({ effect, message });
      }
    }
    const problems = failed.flatMap(failureNote);
    // The state must not claim what did not happen: a failed database step is recorded with the
    // track's problems (what people and agents read), and cleared once the step succeeded.
    const repaired = run.effects
      .filter((e) => (e.type === "forkDatabase" || e.type === "deleteDatabase") && !failed.some((f) => f.effect === e))
      .map((e) => databaseProblemPrefix((e as { branch: string }).branch));
    const stale = run.snapshot.context.lastProblem.filter((p) => repaired.some((prefix) => p.startsWith(prefix)));
    if (problems.length > 0 || stale.length > 0) {
      try {
        await reviseProblems(deps, run.trackId, problems, stale);
      } catch (error) {
        failures.push(`recording the failure on the state: ${(error as Error).message}`);
      }
    }
    // A failed effect is shown on the track's checks even when the transition asked for none.
    const headSha = checksOn ?? (failed.length > 0 ? run.snapshot.context.head : undefined);
    if (headSha) {
      try {
        const runs = await trackCheckRuns(deps, { ...run, headSha, failed, database });
        await writeCheckRuns(octokit, { owner: repo.owner, repo: repo.repo, appId: services.appId, headSha }, runs);
      } catch (error) {
        deps.log.error({ trackId: run.trackId, effect: "updateChecks" }, `effect failed: ${(error as Error).message}`);
        failures.push(`updateChecks: ${(error as Error).message}`);
      }
    }
    try {
      await updateStickyComment(deps, {
        trackId: run.trackId,
        branch: run.state.branch,
        snapshot: run.snapshot,
        config: run.config,
        notes: [...(run.rejection ?? []).map((r) => `Refused: ${r}`), ...(run.notes ?? []), ...problems, ...comments],
      });
    } catch (error) {
      failures.push(`sticky comment: ${(error as Error).message}`);
    }
  } finally {
    await provider?.close().catch(() => {});
  }
  if (failures.length > 0) throw new EffectsError(run.trackId, failures);
}

/** Some effects of a delivery failed; each failure is already on the track's checks (or could not be written there). */
export class EffectsError extends Error {
  constructor(trackId: string, failures: string[]) {
    super(`Consort could not finish every effect for track ${trackId}:\n${failures.join("\n")}`);
    this.name = "EffectsError";
  }
}

/**
 * Dispatch a Consort workflow with the request the state already recorded the hash of (in the
 * same write as the step that asked for it), so the dispatch costs no second state write.
 */
async function dispatchRecorded(deps: EngineDeps, run: EffectRun, effect: Effect): Promise<void> {
  const dispatched = workflowRequestOf(effect, run.state.branch, run.snapshot);
  if (!dispatched) return;
  await dispatchNow(deps, dispatched.workflow, dispatched.request);
}

/** Dispatch `workflow` on the repository's default branch with `request`, now. */
async function dispatchNow(deps: EngineDeps, workflow: WorkflowKind, request: unknown): Promise<void> {
  const { octokit, repo, services } = deps;
  await dispatchWorkflow({
    octokit,
    owner: repo.owner,
    repo: repo.repo,
    defaultBranch: repo.defaultBranch,
    workflow,
    request,
    now: services.clock(),
  });
}

/**
 * The checks of the gates a review was just refused for, on the PR's head, saying why under their
 * approvals (the rest of each check as the snapshot decides), so a reviewer who looks at the
 * check, not only at the comment, learns why the gate still waits.
 */
export async function showRefusedApprovals(
  deps: EngineDeps,
  {
    snapshot,
    config,
    headSha,
    refused,
  }: { snapshot: TrackSnapshot; config: ConsortConfig; headSha: string; refused: Partial<Record<GateName, string[]>> },
): Promise<void> {
  const { octokit, repo, services } = deps;
  const report = trackReport({ repository: repo.fullName, snapshot, headSha, config, refusedApprovals: refused });
  const names = new Set<string>(GATE_NAMES.filter((gate) => refused[gate]?.length).map(gateCheckName));
  const runs = renderCheckRuns(report).filter((run) => names.has(run.name));
  await writeCheckRuns(octokit, { owner: repo.owner, repo: repo.repo, appId: services.appId, headSha }, runs);
}

/** Bring the track's ONE sticky comment on its open PR (if any) up to date. */
export async function updateStickyComment(
  deps: EngineDeps,
  {
    trackId,
    branch,
    snapshot,
    config,
    notes = [],
  }: { trackId: string; branch: string; snapshot: TrackSnapshot; config: ConsortConfig; notes?: string[] },
): Promise<void> {
  const { octokit, repo, services } = deps;
  const pull = await openPullRequestFor(deps, branch);
  if (!pull) return;
  const report = trackReport({
    repository: repo.fullName,
    snapshot,
    headSha: pull.headSha,
    config,
    notes,
    pullNumber: pull.number,
  });
  await upsertStickyComment(
    octokit,
    { owner: repo.owner, repo: repo.repo, issueNumber: pull.number, trackId, appId: services.appId },
    renderComment(report),
    services.stickyComments,
  );
}

/** An effect that failed in this delivery, with the provider's or GitHub's message. */
interface FailedEffect {
  effect: Effect;
  message: string;
}

/** Every problem note about a database branch starts so; a later success clears them. */
const databaseProblemPrefix = (branch: string) => `Database branch \`${branch}\` `;

/** What a person reads about a failed effect: what failed, why, and what to do. */
function failureNote({ effect, message }: FailedEffect): string[] {
  switch (effect.type) {
    case "forkDatabase":
      return [
        `${databaseProblemPrefix(effect.branch)}was not created from \`${effect.parent}\`: ${message}. It does not exist yet. Once the database provider is reachable, someone with write access presses Retry on consort/discipline.`,
      ];
    case "deleteDatabase":
      return [
        `${databaseProblemPrefix(effect.branch)}was not deleted: ${message}. It still exists. Once the database provider is reachable, someone with write access presses Retry on consort/discipline.`,
      ];
    case "dispatchCycle":
    case "promoteDatabase":
      return [
        `The ${effect.type === "promoteDatabase" ? "promote" : effect.step} workflow (${effect.dispatchId}) was not dispatched: ${message}. Nothing is running. Once GitHub accepts dispatches, someone with write access presses Re-run cycle on ${checkOfDispatch(effect)}.`,
      ];
    case "dispatchAgent":
      return [`The ${effect.role} agent was not dispatched: ${message}.`];
    default:
      return [];
  }
}

function checkOfDispatch(effect: Effect): CheckName {
  if (effect.type === "promoteDatabase") return "consort/promote";
  if (effect.type === "dispatchCycle" && effect.step === "release") return "consort/deploy";
  return "consort/build";
}

/** Add this delivery's problems to the track's state and drop those a success made untrue. */
async function reviseProblems(deps: EngineDeps, trackId: string, add: string[], drop: string[]): Promise<void> {
  await stateStoreFor(deps).update(trackId, `${deps.deliveryId}:problems`, (state) => {
    if (!state) return undefined;
    const snapshot = restoreSnapshot(state.snapshot);
    const kept = snapshot.context.lastProblem.filter((p) => !drop.includes(p) && !add.includes(p));
    const lastProblem = [...kept, ...add];
    if (
      lastProblem.length === snapshot.context.lastProblem.length &&
      lastProblem.every((p, i) => p === snapshot.context.lastProblem[i])
    )
      return undefined;
    return { ...state, snapshot: { ...snapshot, context: { ...snapshot.context, lastProblem } } };
  });
}

/**
 * The seven checks of a track on `headSha`, with the schema diff computed on the track's database
 * branch, and any effect that failed (or a database branch that is missing) failing the check it
 * belongs to, with the button that retries it.
 */
async function trackCheckRuns(
  deps: EngineDeps,
  run: EffectRun & { headSha: string; failed: FailedEffect[]; database: () => Promise<BranchProvider> },
): Promise<RenderedCheckRun[]> {
  const ctx = run.snapshot.context;
  const inspected = await inspectDatabase(run.snapshot, run.database, placementOf(run.config));
  const report = trackReport({
    repository: deps.repo.fullName,
    snapshot: run.snapshot,
    headSha: run.headSha,
    config: run.config,
    schema: inspected.schema,
    ...(run.notes ? { notes: run.notes } : {}),
  });
  const rendered = renderCheckRuns(report);
  const header = `Track \`${ctx.trackId}\` on \`${ctx.branch}\` at ${run.headSha.slice(0, 7)}.`;
  const failing = (name: CheckName, title: string, notes: string[], action: CheckAction): RenderedCheckRun => ({
    name,
    status: "completed",
    conclusion: "failure",
    output: { title, summary: [header, ...notes.map((n) => `- ${n}`)].join("\n\n") },
    actions: [action],
  });
  const overrides = new Map<CheckName, RenderedCheckRun>();
  const databaseNotes = run.failed
    .filter((f) => f.effect.type === "forkDatabase" || f.effect.type === "deleteDatabase")
    .flatMap(failureNote);
  if (databaseNotes.length === 0 && inspected.missing) databaseNotes.push(inspected.missing);
  if (databaseNotes.length > 0)
    overrides.set(
      "consort/discipline",
      failing("consort/discipline", "Database branch step failed", databaseNotes, BUTTONS.retryDatabase),
    );
  for (const f of run.failed.filter((f) => f.effect.type === "dispatchCycle" || f.effect.type === "promoteDatabase")) {
    const name = checkOfDispatch(f.effect);
    overrides.set(name, failing(name, "Workflow dispatch failed", failureNote(f), BUTTONS.rerunCycle));
  }
  return rendered.map((r) => overrides.get(r.name) ?? r);
}

/**
 * `consort/schema`: the track's database branch against its parent's, from the catalogs, with the
 * lint that counts the parent's rows a change would break, on every check update of a live
 * track. A branch that does not exist, or a comparison that fails, is a failed check with the
 * reason (and `missing` says so for consort/discipline), never a pass and never a wait. Where the
 * jobs cannot see the app's branches (src/contracts/placement.ts), the app's branch proves
 * nothing: the check shows the diff the release job computed on the databases it built, and waits
 * for it until then.
 */
async function inspectDatabase(
  snapshot: TrackSnapshot,
  database: () => Promise<BranchProvider>,
  placement: Placement,
): Promise<{ schema: SchemaView; missing?: string }> {
  const ctx = snapshot.context;
  const released = ctx.deployEvidence?.evidence.schema;
  if (snapshot.stage === "done")
    return {
      schema: placement.shared
        ? {
            state: "ready",
            reason: `The track is merged: \`${ctx.parentDatabaseBranch}\` is migrated and the track's database branch is deleted.`,
          }
        : {
            state: "ready",
            reason: `The track is merged; ${placement.promote}. The diff below is the one the release job computed on the databases it rebuilt.`,
            ...(released ? { diffMarkdown: released.diffMarkdown, breaking: released.breaking } : {}),
          },
    };
  if (snapshot.stage === "abandoned")
    return {
      schema: { state: "failed", reason: `The track was abandoned: ${ctx.ended?.reason ?? "no reason given"}.` },
    };
  if (ctx.migrationConflicts?.length)
    return {
      schema: {
        state: "failed",
        reason: `The track's migrations conflict with ${ctx.baseBranch}'s, merged in at ${ctx.head.slice(0, 7)}:\n\n${ctx.migrationConflicts.map((c) => `- ${c}`).join("\n")}`,
      },
    };
  if (!placement.shared) {
    if (released?.computedOn === "rebuilt")
      return {
        schema: {
          state: "ready",
          diffMarkdown: released.diffMarkdown,
          breaking: released.breaking,
          reason: `${released.note} The release ran on ${ctx.deployEvidence!.commit.slice(0, 7)}${ctx.deployEvidence!.evidence.runUrl ? ` (${ctx.deployEvidence!.evidence.runUrl})` : ""}.`,
        },
      };
    return {
      schema: {
        state: "pending",
        reason: `Not computed yet. The jobs run apart from the app's branches (the \`${placement.provider}\` provider on ${placement.runner} runners), so nobody migrates \`${ctx.databaseBranch}\` on the app's server and a diff of it would prove nothing. The release job rebuilds the parent and the track and computes this diff; it shows here once the release has run.`,
      },
    };
  }
  const couldNot = `The schema diff of \`${ctx.databaseBranch}\` against \`${ctx.parentDatabaseBranch}\` could not be computed`;
  try {
    const provider = await database();
    if (!(await provider.getBranch(ctx.databaseBranch))) {
      const missing = `${databaseProblemPrefix(ctx.databaseBranch)}does not exist: it was never created or was deleted. Someone with write access presses Retry on consort/discipline to create it from \`${ctx.parentDatabaseBranch}\`.`;
      return {
        schema: { state: "failed", reason: `${couldNot}: the branch does not exist (see consort/discipline).` },
        missing,
      };
    }
    const comparison = await compareBranches(provider, ctx.databaseBranch, ctx.parentDatabaseBranch);
    const breaking = breakingFindings(comparison);
    const before = ctx.deployEvidence
      ? undefined
      : `Compared as the branch stands: the track's migrations are applied to \`${ctx.databaseBranch}\` by the release cycle, and this check is computed again on every update.`;
    return {
      schema: { state: "ready", diffMarkdown: comparison.markdown, breaking, ...(before ? { reason: before } : {}) },
    };
  } catch (error) {
    return {
      schema: {
        state: "failed",
        reason: `${couldNot}: ${(error as Error).message}. Consort fails closed; the check is computed again on the next update of the track.`,
      },
    };
  }
}
