import type { TrackEvent, TrackSnapshot } from "../orchestrator/index.js";
import type { TrackState } from "../state/index.js";

/** A dispatched run that has not reported yet. */
export interface PendingRun {
  dispatchId: string;
  /** Known only once a run reported (runs are found by the dispatch id in their run-name). */
  runId: number | null;
  dispatchedAt: string;
}

/**
 * The timeout rule: a run dispatched longer ago than the configured limit that has not reported
 * is over. Nothing waits in memory for it; every event on the track and every `consort reconcile`
 * asks this, so a lost run ends as a failing check with a re-run button wherever it is noticed.
 */
export function isOverdue(run: PendingRun, now: Date, timeoutMinutes: number): boolean {
  const dispatched = Date.parse(run.dispatchedAt);
  // A record whose time cannot be read is treated as overdue: fail closed rather than wait forever.
  if (Number.isNaN(dispatched)) return true;
  return now.getTime() - dispatched > timeoutMinutes * 60_000;
}

function overdueMessage(run: PendingRun, timeoutMinutes: number): string {
  return (
    `The cycle ${run.dispatchId}${run.runId ? ` (run ${run.runId})` : ""}, dispatched at ${run.dispatchedAt}, has not reported a result within ${timeoutMinutes} minutes ` +
    '(cycle.timeoutMinutes in .github/consort.yml). Its result will not be waited for: press "Re-run cycle" to dispatch it again.'
  );
}

/**
 * The event that ends a pending cycle which never reported: an `error` outcome (nothing advances,
 * the build check fails with the re-run button). Undefined while the cycle still has time.
 */
export function overdueEvent(
  snapshot: TrackSnapshot,
  state: TrackState,
  now: Date,
  timeoutMinutes: number,
): TrackEvent | undefined {
  const pending = snapshot.context.pendingDispatch;
  if (!pending) return undefined;
  const cycle = snapshot.context.cycles.find((c) => c.dispatchId === pending.dispatchId);
  const recorded = state.cycles.find((c) => c.dispatchId === pending.dispatchId);
  const run = {
    dispatchId: pending.dispatchId,
    runId: recorded?.runId ?? null,
    dispatchedAt: cycle?.dispatchedAt ?? recorded?.dispatchedAt ?? "",
  };
  if (!isOverdue(run, now, timeoutMinutes)) return undefined;
  const reasons = [overdueMessage(run, timeoutMinutes)];
  const report = { at: now.toISOString(), dispatchId: pending.dispatchId, outcome: "error" as const, reasons };
  if (pending.step === "promote") return { type: "promotion.reported", ...report };
  const ran = { ...report, runId: run.runId ?? 0, commit: pending.commit };
  const summary = reasons[0]!;
  if (pending.step === "release") {
    const evidence = { summary, databaseBranch: snapshot.context.databaseBranch, checks: [] };
    return { type: "deploy.reported", ...ran, evidence };
  }
  return { type: "cycle.reported", ...ran, step: pending.step, evidence: { summary } };
}
