import { effectiveFrozenTests, type TrackSnapshot } from "../orchestrator/index.js";
import type { CycleRecord, FrozenHashes, TrackState } from "../state/index.js";
import { GATE_NAMES } from "../contracts/gates.js";

/**
 * The state file repeats, in its own plain fields, what a person auditing `consort/state` looks
 * for (docs/ARCHITECTURE.md, State): the frozen hashes and every cycle with its run id. They are derived from the
 * machine's snapshot after every transition; only the hashes of the requests dispatched are the app's own
 * record (the machine never sees a request). The approvals that
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
  // One entry per file: the text its latest verified RED froze (a helper is frozen by every RED).
  for (const test of Object.values(effectiveFrozenTests(snapshot.context))) {
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
    // A cycle ended without a run (overdue) reports run 0: no run id.
    const runId = recorded.get(c.dispatchId)?.runId ?? c.runId ?? null;
    return {
      dispatchId: c.dispatchId,
      runId: runId !== null && runId > 0 ? runId : null,
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
