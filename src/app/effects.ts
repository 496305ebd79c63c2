import type { ConsortConfig } from "../config/consort-config.js";
import { AgentRequest } from "../cycle/agent-turn.js";
import { CycleRequest } from "../cycle/request.js";
import { DeployRequest, PromoteRequest } from "../deploy/schemas.js";
import { hashFrozenText } from "../gates/freeze.js";
import type { DispatchCycleEffect, Effect, TrackSnapshot } from "../orchestrator/types.js";
import type { TrackState } from "../state/index.js";
import type { BranchProvider } from "../substrate/provider.js";
import { renderCheckRuns, renderComment, upsertStickyComment, writeCheckRuns, type SchemaView } from "../report/index.js";
import { compareBranches } from "../substrate/schema/index.js";
import { dispatchWorkflow } from "./dispatch.js";
import { recordRunId } from "./projection.js";
import { openPullRequestFor } from "./pull-request.js";
import { trackReport } from "./report-view.js";
import { stateStoreFor, type EngineDeps } from "./track.js";

export interface EffectRun {
  trackId: string;
  state: TrackState;
  snapshot: TrackSnapshot;
  effects: Effect[];
  config: ConsortConfig;
  /** Reasons the machine refused the event, shown in the sticky comment. */
  rejection?: string[];
}

/**
 * Execute a transition's effects, in order: database branches, dispatches (recording each run id
 * on `consort/state`), check runs (written only on change), then the ONE sticky comment. Every
 * effect is attempted; any that failed are rethrown together so the delivery shows as failed and
 * `consort reconcile` repairs what is missing.
 */
export async function runEffects(deps: EngineDeps, run: EffectRun): Promise<void> {
  const { octokit, repo, services } = deps;
  const failures: string[] = [];
  const comments: string[] = [];
  let provider: BranchProvider | undefined;
  const database = async () => (provider ??= await services.openProvider(run.config.database));
  try {
    for (const effect of run.effects) {
      try {
        switch (effect.type) {
          case "forkDatabase":
            await (await database()).createBranch(effect.branch, { from: effect.parent });
            break;
          case "deleteDatabase":
            await (await database()).deleteBranch(effect.branch);
            break;
          case "dispatchCycle":
            if (effect.step === "release") await dispatchAndRecord(deps, run.trackId, effect.dispatchId, "deploy", deployRequest(run.state.branch, effect, run.snapshot));
            else await dispatchAndRecord(deps, run.trackId, effect.dispatchId, "cycle", cycleRequest(run.state.branch, effect, run.snapshot));
            break;
          case "promoteDatabase":
            await dispatchAndRecord(
              deps,
              run.trackId,
              effect.dispatchId,
              "promote",
              PromoteRequest.parse({ version: 1, dispatchId: effect.dispatchId, track: run.state.branch, commit: effect.commit, database: { parent: effect.parent, track: effect.branch } }),
            );
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
              await dispatchWorkflow({ octokit, owner: repo.owner, repo: repo.repo, defaultBranch: repo.defaultBranch, workflow: "agent", request, now: services.clock() });
            }
            break;
          case "updateChecks": {
            // The report renders all seven checks from the snapshot; the machine's check states agree with it by construction.
            const schema = await schemaView(run.snapshot, database);
            const report = trackReport({ repository: repo.fullName, snapshot: run.snapshot, headSha: effect.commit, config: run.config, schema });
            await writeCheckRuns(octokit, { owner: repo.owner, repo: repo.repo, appId: services.appId, headSha: effect.commit }, renderCheckRuns(report));
            break;
          }
          case "comment":
            comments.push(effect.body);
            break;
        }
      } catch (error) {
        deps.log.error({ trackId: run.trackId, effect: effect.type }, `effect failed: ${(error as Error).message}`);
        failures.push(`${effect.type}: ${(error as Error).message}`);
      }
    }
    try {
      await updateStickyComment(deps, { trackId: run.trackId, branch: run.state.branch, snapshot: run.snapshot, config: run.config, notes: [...(run.rejection ?? []).map((r) => `Refused: ${r}`), ...comments] });
    } catch (error) {
      failures.push(`sticky comment: ${(error as Error).message}`);
    }
  } finally {
    await provider?.close().catch(() => {});
  }
  if (failures.length > 0) throw new Error(`Consort could not finish every effect for track ${run.trackId}:\n${failures.join("\n")}`);
}

/** Dispatch a workflow, then record the run id GitHub returned on the track's state. */
async function dispatchAndRecord(deps: EngineDeps, trackId: string, dispatchId: string, workflow: "cycle" | "deploy" | "promote", request: unknown): Promise<void> {
  const { octokit, repo, services } = deps;
  const dispatched = await dispatchWorkflow({ octokit, owner: repo.owner, repo: repo.repo, defaultBranch: repo.defaultBranch, workflow, request, now: services.clock() });
  await stateStoreFor(deps).update(trackId, `${deps.deliveryId}:run:${dispatchId}`, (state) => (state ? recordRunId(state, dispatchId, dispatched.runId) : undefined));
}

/** The one JSON input of the release (a verified preview deploy), validated by the deploy runner's schema. */
export function deployRequest(branch: string, effect: DispatchCycleEffect, snapshot: TrackSnapshot): DeployRequest {
  const cycle = cycleRequest(branch, { ...effect, step: "refactor" }, snapshot);
  return DeployRequest.parse({
    version: 1,
    dispatchId: effect.dispatchId,
    track: branch,
    commit: effect.commit,
    database: { branch: effect.databaseBranch, parent: snapshot.context.parentDatabaseBranch },
    tests: [...cycle.tests.earlierGreen, ...cycle.tests.inTurn],
    frozenTestFiles: cycle.frozenTestFiles,
  });
}

/** The one JSON input of a cycle, validated by the cycle runner's own schema before it leaves. */
export function cycleRequest(branch: string, effect: DispatchCycleEffect, snapshot: TrackSnapshot): CycleRequest {
  const test = (t: { id: string; file: string; title: string }) => ({ id: t.id, file: t.file, title: t.title });
  // A RED step may only add to a frozen test file, so the runner needs the frozen text, not just its hash.
  const frozenText = new Map<string, string>();
  for (const frozen of Object.values(snapshot.context.frozenTests)) frozenText.set(frozen.file, frozen.text);
  return CycleRequest.parse({
    version: 1,
    dispatchId: effect.dispatchId,
    track: branch,
    step: effect.step,
    commit: effect.commit,
    tests: { inTurn: effect.tests.map(test), earlierGreen: effect.greenTests.map(test) },
    frozenTestFiles: Object.entries(effect.frozen)
      .filter(([path]) => !path.startsWith(".consort/"))
      .map(([path, sha256]) => {
        const text = frozenText.get(path);
        return text !== undefined && hashFrozenText(text) === sha256 ? { path, sha256, text } : { path, sha256 };
      }),
    database: { branch: effect.databaseBranch },
    // The trunk the track forked from: a refactor counts only the track's own test changes since the merge base.
    base: { branch: snapshot.context.baseBranch },
  });
}

/** Bring the track's ONE sticky comment on its open PR (if any) up to date. */
export async function updateStickyComment(
  deps: EngineDeps,
  { trackId, branch, snapshot, config, notes = [] }: { trackId: string; branch: string; snapshot: TrackSnapshot; config: ConsortConfig; notes?: string[] },
): Promise<void> {
  const { octokit, repo, services } = deps;
  const pull = await openPullRequestFor({ octokit, owner: repo.owner, repo: repo.repo, branch });
  if (!pull) return;
  const report = trackReport({ repository: repo.fullName, snapshot, headSha: pull.headSha, config, notes });
  await upsertStickyComment(octokit, { owner: repo.owner, repo: repo.repo, issueNumber: pull.number, trackId, appId: services.appId }, renderComment(report));
}

/**
 * `consort/schema`: the track's database branch against its parent's, from the catalogs, with the
 * lint that counts the parent's rows a change would break, on every check update of a live
 * track. A branch that does not exist, or a comparison that fails, is a failed check with the
 * reason, never a pass and never a wait (branch protection requires the check to complete).
 */
export async function schemaView(snapshot: TrackSnapshot, database: () => Promise<BranchProvider>): Promise<SchemaView> {
  const ctx = snapshot.context;
  if (snapshot.stage === "done") return { state: "ready", reason: `The track is merged: \`${ctx.parentDatabaseBranch}\` is migrated and the track's database branch is deleted.` };
  if (snapshot.stage === "abandoned") return { state: "failed", reason: `The track was abandoned: ${ctx.ended?.reason ?? "no reason given"}.` };
  const couldNot = `The schema diff of \`${ctx.databaseBranch}\` against \`${ctx.parentDatabaseBranch}\` could not be computed`;
  try {
    const provider = await database();
    if (!(await provider.getBranch(ctx.databaseBranch))) return { state: "failed", reason: `${couldNot}: the database branch \`${ctx.databaseBranch}\` does not exist.` };
    const comparison = await compareBranches(provider, ctx.databaseBranch, ctx.parentDatabaseBranch);
    const breaking = comparison.lint.findings.filter((f) => f.rows === null || f.rows > 0).map((f) => (f.rows === null ? `${f.message} (could not count: ${f.reason ?? "unknown"})` : f.message));
    const before = ctx.deployEvidence ? undefined : `Compared as the branch stands: the track's migrations are applied to \`${ctx.databaseBranch}\` by the release cycle, and this check is computed again on every update.`;
    return { state: "ready", diffMarkdown: comparison.markdown, breaking, ...(before ? { reason: before } : {}) };
  } catch (error) {
    return { state: "failed", reason: `${couldNot}: ${(error as Error).message}. Consort fails closed; the check is computed again on the next update of the track.` };
  }
}
