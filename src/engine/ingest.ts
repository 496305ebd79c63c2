import type { z } from "zod";
import { formatZodError } from "../contracts/zod-error.js";
import { ArtifactError, artifactJson, downloadRunArtifact } from "../github/artifacts.js";
import { judgeResultCommit, judgeRunProvenance, type RecordedRun, type ReportedRun } from "./provenance.js";
import { stateStoreFor, type EngineDeps } from "./track.js";
import { dispatchIdOfRunName, requestDigest, type WorkflowKind } from "../github/dispatch.js";
import { CYCLE_RESULT_FILE, CycleResult } from "../contracts/cycle-result.js";
import { confinementLine, verifiedLine } from "../cycle/index.js";
import {
  DEPLOY_EVIDENCE_FILE,
  DeployEvidence as DeployEvidenceResult,
  PROMOTE_RESULT_FILE,
  PromoteResult,
} from "../contracts/deploy.js";
import type { CycleEvidence, DeployEvidence, TrackEvent, TrackSnapshot } from "../orchestrator/index.js";
import { TamperedStateError, TrackId, type CycleRecord, type TrackState } from "../state/index.js";

/**
 * Reading what a finished Consort run reported (its result artifact, parsed by the runner's own
 * schema) and turning it into the machine's event. Shared by the `workflow_run` handler and
 * `consort reconcile`, which finds runs whose webhook was lost: both go through `trustedReport`
 * and `reportedEvent`.
 */

/** A finished workflow run, as the `workflow_run` payload and the REST API both describe it. */
export interface WorkflowRunFacts {
  id: number | bigint;
  path: string;
  event: string;
  head_branch: string | null;
  head_repository?: { id: number | bigint } | null | undefined;
  conclusion: string | null;
  html_url: string;
  /** The run's `run-name`, which names the dispatch id (see dispatchIdOfRunName). */
  display_title?: string | null | undefined;
  actor?: { login: string } | null | undefined;
  triggering_actor?: { login: string } | null | undefined;
}

export function reportedRun(run: WorkflowRunFacts, repositoryId: number | bigint): ReportedRun {
  return {
    id: Number(run.id),
    path: run.path,
    event: run.event,
    headBranch: run.head_branch,
    headRepositoryId: run.head_repository ? Number(run.head_repository.id) : undefined,
    repositoryId: Number(repositoryId),
    conclusion: run.conclusion,
    htmlUrl: run.html_url,
    dispatchId: dispatchIdOfRunName(run.display_title),
    actor: run.actor?.login,
    triggeringActor: run.triggering_actor?.login,
  };
}

/**
 * A finished run's report, only when the run is trusted (docs/ARCHITECTURE.md, Cycles): one the app dispatched and
 * recorded, of the expected workflow on the default branch, reporting on the commit it asked about.
 * An untrusted run never answers its dispatch, so the run Consort dispatched still can.
 */
export async function trustedReport(
  deps: EngineDeps,
  run: ReportedRun,
  recorded: RecordedRun | undefined,
): Promise<{ trusted: true; report: Report } | { trusted: false; reason: string }> {
  const appLogin = recorded ? await deps.services.appLogin?.() : undefined;
  const provenance = judgeRunProvenance({ run, defaultBranch: deps.repo.defaultBranch, recorded, appLogin });
  if (!provenance.trusted) return provenance;
  const report = await readReport(deps, run, provenance.recorded);
  // Without the app's login the starter is unknown: a result for another request may be a
  // borrowed run's, so it does not end the dispatch (with it, it is the app's run, tampered).
  if (report.answersAnother && appLogin === undefined) return { trusted: false, reason: report.reasons[0]! };
  const mismatch = report.commit ? judgeResultCommit(provenance.recorded, report.commit) : undefined;
  if (mismatch && !mismatch.trusted) return mismatch;
  return { trusted: true, report };
}

/** What a finished run reported, in the machine's terms. */
export interface Report {
  outcome: "valid" | "invalid" | "error";
  reasons: string[];
  commit: string | undefined;
  result?: CycleResult;
  deploy?: DeployEvidenceResult;
  /** The result answers another dispatch or request than the one recorded for its run. */
  answersAnother?: true;
}

/**
 * The track and dispatch a run answers, from the dispatch id its `run-name` carries: the track is
 * the part before the `#` (dispatch ids are `<track>#<n>`), and only that track's state is read.
 */
export async function findDispatchedRun(
  deps: EngineDeps,
  run: ReportedRun,
): Promise<{ trackId: string; recorded: RecordedRun; state: TrackState } | undefined> {
  const dispatchId = run.dispatchId;
  const trackId = dispatchId?.slice(0, dispatchId.lastIndexOf("#"));
  if (!dispatchId || !trackId || !TrackId.safeParse(trackId).success) return undefined;
  let state;
  try {
    state = await stateStoreFor(deps).read(trackId);
  } catch (error) {
    // A tampered track cannot vouch for a run; its own events report the tampering.
    if (error instanceof TamperedStateError) return undefined;
    throw error;
  }
  const cycle = state?.cycles.find((c) => c.dispatchId === dispatchId);
  // A run id recorded for this dispatch (by the report of an earlier run) must be this run's.
  if (!state || !cycle || (cycle.runId !== null && cycle.runId !== run.id)) return undefined;
  return { trackId, state, recorded: recordedRunOf(cycle, run.id) };
}

/** What the state recorded about the run dispatched for `cycle`. */
export function recordedRunOf(cycle: CycleRecord, runId: number): RecordedRun {
  const workflow: WorkflowKind = cycle.step === "promote" ? "promote" : cycle.step === "release" ? "deploy" : "cycle";
  return { runId, workflow, commit: cycle.commit, dispatchId: cycle.dispatchId, requestSha256: cycle.requestSha256 };
}

/**
 * Read a trusted run's result. It counts only as what the run could not forge: a verdict of
 * `verified` (or `promoted`) from a run that did not conclude `success` is an error, and so is a
 * result that does not answer the very request dispatched as this run (its dispatch id and the
 * hash of its request). Only the one result file is unpacked, bounded.
 */
async function readReport(deps: EngineDeps, run: ReportedRun, recorded: RecordedRun): Promise<Report> {
  const { octokit, repo } = deps;
  const { workflow } = recorded;
  const file = {
    cycle: CYCLE_RESULT_FILE,
    deploy: DEPLOY_EVIDENCE_FILE,
    promote: PROMOTE_RESULT_FILE,
    agent: CYCLE_RESULT_FILE,
  }[workflow];
  let files;
  try {
    files = await downloadRunArtifact({ octokit, owner: repo.owner, repo: repo.repo, runId: run.id, files: [file] });
  } catch (error) {
    if (!(error instanceof ArtifactError)) throw error;
    return {
      outcome: "error",
      reasons: [`${error.message} (run conclusion: ${run.conclusion ?? "none"}, ${run.htmlUrl})`],
      commit: undefined,
    };
  }
  let raw: unknown;
  try {
    raw = artifactJson(files, file, run.id);
  } catch (error) {
    return { outcome: "error", reasons: [(error as Error).message], commit: undefined };
  }
  const malformed = (error: z.ZodError): Report => ({
    outcome: "error",
    reasons: [formatZodError(error, `run ${run.id}'s ${file} does not follow its schema`, { inline: true, limit: 5 })],
    commit: undefined,
  });
  const decided = (data: {
    verdict: string;
    reasons: string[];
    commit: string;
    request: { dispatchId?: string | undefined };
  }): Report => {
    const outcome = data.verdict === "verified" || data.verdict === "promoted" ? "valid" : "invalid";
    const forged = unforgeable(run, recorded, data.request, outcome);
    if (forged) return { outcome: "error", reasons: [forged.reason], commit: data.commit, ...forged.flag };
    return { outcome, reasons: data.reasons, commit: data.commit };
  };
  // A result that could not be bound to its run is no evidence either: only its reason is kept.
  if (workflow === "deploy") {
    const parsed = DeployEvidenceResult.safeParse(raw);
    if (!parsed.success) return malformed(parsed.error);
    const report = decided(parsed.data);
    return report.outcome === "error" ? report : { ...report, deploy: parsed.data };
  }
  if (workflow === "promote") {
    const parsed = PromoteResult.safeParse(raw);
    if (!parsed.success) return malformed(parsed.error);
    const report = decided(parsed.data);
    // A promotion that passed tells what it did (e.g. that no persistent parent was migrated), and
    // that its migrate command ran unconfined when it did (weaker evidence).
    const { notes, migrate, confinement } = parsed.data;
    const unconfined = migrate && !confinement?.confined ? [confinementLine(confinement)] : [];
    return report.outcome === "valid" ? { ...report, reasons: [...notes, ...unconfined] } : report;
  }
  const parsed = CycleResult.safeParse(raw);
  if (!parsed.success) return malformed(parsed.error);
  const report = decided(parsed.data);
  return report.outcome === "error" ? report : { ...report, result: parsed.data };
}

/** Why a parsed result cannot be trusted as this run's answer (flagged when it answers another request), or undefined when it can. */
function unforgeable(
  run: ReportedRun,
  recorded: RecordedRun,
  request: { dispatchId?: string | undefined },
  outcome: "valid" | "invalid",
): { reason: string; flag: { answersAnother?: true } } | undefined {
  const another = (reason: string) => ({ reason, flag: { answersAnother: true as const } });
  if (outcome === "valid" && run.conclusion !== "success")
    return {
      reason: `run ${run.id} concluded "${run.conclusion ?? "none"}", yet its result says it passed: only a run that succeeded can verify (${run.htmlUrl})`,
      flag: {},
    };
  if (request.dispatchId !== recorded.dispatchId)
    return another(
      `run ${run.id}'s result answers dispatch ${request.dispatchId ?? "(none)"}, but Consort dispatched ${recorded.dispatchId} as that run`,
    );
  if (!recorded.requestSha256)
    return {
      reason: `Consort kept no hash of the request dispatched as run ${run.id}, so its result cannot be bound to it: re-run the cycle`,
      flag: {},
    };
  const echoed = requestDigest(request);
  if (echoed !== recorded.requestSha256)
    return another(
      `run ${run.id}'s result answers another request than the one Consort dispatched (sha256 ${echoed.slice(0, 12)}, dispatched ${recorded.requestSha256.slice(0, 12)})`,
    );
  return undefined;
}

const OUTCOME_NAMES = {
  passed: "passed",
  "failed-assertion": "assertion-failure",
  "behaviour-missing": "behaviour-missing",
  "failed-error": "error",
  skipped: "skipped",
  missing: "missing",
} as const;

/** The machine event for a trusted run's report, or undefined when the track no longer waits for it. */
export function reportedEvent(
  snapshot: TrackSnapshot,
  recorded: RecordedRun,
  run: ReportedRun,
  report: Report,
  at: string,
): TrackEvent | undefined {
  const pending = snapshot.context.pendingDispatch;
  const { dispatchId } = recorded;
  if (!pending || pending.dispatchId !== dispatchId) return undefined;
  const commit = report.commit ?? recorded.commit;
  const summary = report.reasons[0] ?? (report.outcome === "valid" ? verifiedLine(report.result) : "refused");
  if (pending.step === "promote")
    return { type: "promotion.reported", at, dispatchId, outcome: report.outcome, reasons: report.reasons };
  if (pending.step === "release") {
    return {
      type: "deploy.reported",
      at,
      dispatchId,
      runId: run.id,
      commit,
      outcome: report.outcome,
      reasons: report.reasons,
      evidence: deployEvidence(report, summary, snapshot, run),
    };
  }
  const evidence: CycleEvidence = {
    summary,
    runUrl: run.htmlUrl,
    ...(report.result
      ? {
          tests: report.result.tests.map((t) => ({ id: t.id, title: t.title, result: OUTCOME_NAMES[t.outcome] })),
          ...(report.result.database.cycleBranch ? { databaseBranch: report.result.database.cycleBranch } : {}),
          ...notesOf(report.result),
          confined: report.result.confinement?.confined ?? false,
        }
      : {}),
  };
  return {
    type: "cycle.reported",
    at,
    dispatchId,
    runId: run.id,
    step: pending.step,
    commit,
    outcome: report.outcome,
    reasons: report.reasons,
    evidence,
  };
}

/** What the check says beside the verdict: an unconfined run first (weaker evidence), then the warnings. */
function notesOf(result: Pick<CycleResult, "confinement" | "warnings">): { notes?: string[] } {
  const notes = [...(result.confinement?.confined ? [] : [confinementLine(result.confinement)]), ...result.warnings];
  return notes.length > 0 ? { notes } : {};
}

/** The deploy gate's evidence, from the release run's deploy-evidence.json. */
function deployEvidence(report: Report, summary: string, snapshot: TrackSnapshot, run: ReportedRun): DeployEvidence {
  const d = report.deploy;
  if (!d) return { summary, databaseBranch: snapshot.context.databaseBranch, checks: [], runUrl: run.htmlUrl };
  const checks = [
    ...(d.deploy ? [{ name: `deploy: ${d.deploy.command}`, ok: d.deploy.exitCode === 0 }] : []),
    {
      name: d.verify.command ? `verify: ${d.verify.command}` : "verify",
      ok: d.verify.outcome === "passed",
      detail: d.verify.outcome,
    },
    ...(d.verify.cycle
      ? [
          {
            name: "replay of every migration and the whole suite",
            ok: d.verify.cycle.verdict === "verified",
            detail: `${d.verify.cycle.passed} of ${d.verify.cycle.total} passed`,
          },
        ]
      : []),
  ];
  return {
    summary,
    databaseBranch: d.database.branch,
    checks,
    runUrl: run.htmlUrl,
    ...notesOf(d),
    confined: d.confinement?.confined ?? false,
    ...(d.previewUrl ? { previewUrl: d.previewUrl } : {}),
    ...(d.schema ? { schema: d.schema } : {}),
  };
}
