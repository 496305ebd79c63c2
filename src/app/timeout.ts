/** A dispatched run that has not reported yet. */
export interface PendingRun {
  runId: number;
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

export function overdueMessage(run: PendingRun, timeoutMinutes: number): string {
  return (
    `The cycle run ${run.runId}, dispatched at ${run.dispatchedAt}, has not reported a result within ${timeoutMinutes} minutes ` +
    "(cycle.timeoutMinutes in .github/consort.yml). Its result will not be waited for: press \"Re-run cycle\" to dispatch it again."
  );
}
