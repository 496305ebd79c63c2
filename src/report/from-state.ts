import type { GateDecision } from "../gates/approval.js";
import type { TamperedStateError } from "../state/errors.js";
import type { ApprovalRecord, FrozenHashes } from "../state/schema.js";
import { GATE_NAMES } from "../state/schema.js";
import type { ApprovalView, FrozenView, GateView, TamperedView } from "./view.js";

/** Glue from the state file and the approval decision to the report's view types. */

/** The approvals of a state file, with links to their reviews when the PR is known. */
export function approvalViews(
  records: ApprovalRecord[],
  link?: { serverUrl?: string; repository: string; pullNumber: number },
): ApprovalView[] {
  return records.map((a) => ({
    gate: a.gate,
    user: a.user,
    at: a.at,
    commit: a.commit,
    hash: a.hash,
    ...(link
      ? {
          reviewUrl: `${link.serverUrl ?? "https://github.com"}/${link.repository}/pull/${link.pullNumber}#pullrequestreview-${a.reviewId}`,
        }
      : {}),
  }));
}

/** The frozen gate manifests of a state file, files sorted by path. */
export function frozenViews(frozen: FrozenHashes): FrozenView[] {
  return GATE_NAMES.flatMap((gate) => {
    const manifest = frozen.gates[gate];
    if (!manifest) return [];
    const files = Object.entries(manifest.files)
      .map(([path, hash]) => ({ path, hash }))
      .sort((a, b) => a.path.localeCompare(b.path));
    return [{ gate, manifestHash: manifest.manifestHash, commit: manifest.commit, files }];
  });
}

/**
 * A gate's view from the approval decision at the current frozen hash. `currentHash` is the
 * gate's manifest hash at the head commit; an approval counts only when it is the pending one.
 */
export function gateViewOf(decision: GateDecision, currentHash: string | undefined): GateView {
  if (!decision.pendingHash || !currentHash) return { state: "not-reached", reason: decision.summary };
  if (decision.approved)
    return {
      state: "approved",
      approvedHash: decision.pendingHash,
      currentHash,
      by: decision.approvals.map((a) => a.user),
    };
  const rejected = decision.decisions
    .filter((d) => !d.counts && d.user !== null)
    .map((d) => ({ user: d.user!, reasons: d.reasons }));
  return {
    state: "waiting",
    pendingHash: decision.pendingHash,
    reason: decision.summary,
    ...(rejected.length ? { rejected } : {}),
  };
}

/** What the checks say about a tampered state file. */
export function tamperedViewOf(
  error: TamperedStateError,
  where: { repository: string; branch: string; headSha: string },
): TamperedView {
  return {
    ...where,
    trackId: error.trackId,
    path: error.path,
    problems: error.problems,
    ...(error.commit ? { stateCommit: error.commit } : {}),
  };
}
