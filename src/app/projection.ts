import type { TrackSnapshot } from "../orchestrator/types.js";
import type { CycleRecord, FrozenHashes, TrackState } from "../state/index.js";
import { GATE_NAMES } from "../gates/names.js";

/**
 * The state file repeats, in its own plain fields, what a person auditing `consort/state` looks
 * for (design §5): the frozen hashes and every cycle with its run id. They are derived from the
 * machine's snapshot after every transition; only the run ids are the app's own record (GitHub
 * tells the app a run id when it dispatches, the machine never sees it). The approvals that
 * counted are recorded once, in the snapshot's gates.
 */
export function projectState(current: TrackState, snapshot: TrackSnapshot): TrackState {
  return {
    ...current,
    snapshot,
    frozen: frozenOf(snapshot),
    cycles: cyclesOf(snapshot, current.cycles),
  };
}

function frozenOf(snapshot: TrackSnapshot): FrozenHashes {
  const frozen: FrozenHashes = { gates: {}, testFiles: {} };
  for (const gate of GATE_NAMES) {
    const record = snapshot.context.gates[gate];
    const last = record?.approvals.at(-1);
    if (record?.status === "approved" && record.approvedHash && last) {
      frozen.gates[gate] = { manifestHash: record.approvedHash, files: record.files, commit: last.commit, at: last.at };
    }
  }
  for (const test of Object.values(snapshot.context.frozenTests)) {
    frozen.testFiles[test.file] = {
      hash: test.hash,
      testId: test.test,
      commit: test.commit,
      at: snapshot.context.updatedAt,
    };
  }
  return frozen;
}

function cyclesOf(snapshot: TrackSnapshot, ledger: CycleRecord[]): CycleRecord[] {
  const recorded = new Map(ledger.map((c) => [c.dispatchId, c]));
  return snapshot.context.cycles.map((c) => {
    const requestSha256 = recorded.get(c.dispatchId)?.requestSha256;
    return {
      dispatchId: c.dispatchId,
      runId: recorded.get(c.dispatchId)?.runId ?? c.runId ?? null,
      ...(requestSha256 ? { requestSha256 } : {}),
      step: c.step,
      commit: c.commit,
      verdict: c.outcome,
      ...(c.evidence ? { evidence: c.evidence } : {}),
      dispatchedAt: c.dispatchedAt,
      completedAt: c.reportedAt,
    };
  });
}

/** Record the run id GitHub gave for a dispatch, and the hash of the request it was sent. */
export function recordRunId(
  state: TrackState,
  dispatchId: string,
  runId: number,
  requestSha256: string,
): TrackState | undefined {
  const cycle = state.cycles.find((c) => c.dispatchId === dispatchId);
  if (!cycle || (cycle.runId === runId && cycle.requestSha256 === requestSha256)) return undefined;
  return {
    ...state,
    cycles: state.cycles.map((c) => (c.dispatchId === dispatchId ? { ...c, runId, requestSha256 } : c)),
  };
}
