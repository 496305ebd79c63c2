import type { ConsortConfig } from "../config/consort-config.js";
import {
  boundReviews,
  gateApproval,
  reviewBindings,
  type ApprovalContext,
  type GateDecision,
  type GateReview,
} from "../gates/approval.js";
import type { GitHubClient, RepoContext } from "../github/client.js";
import { fetchCodeowners } from "../github/codeowners.js";
import { collectReviewerFacts, listCommitsUnderApproval, teamsThatMatter } from "../github/reviews.js";
import { gateManifestAt, GATE_NAMES, type GateName, type TrackSnapshot } from "../orchestrator/index.js";
import { fileAt } from "../push/github.js";

/**
 * Fetching what the approval rules (src/gates/approval.ts) decide on: the reviewers' permission
 * and teams, CODEOWNERS from the default branch, the PR's commit authors, and each gate's
 * manifest hash at the reviewed commits. Every fetch that fails throws: the gate then stays shut.
 */

/** The client and the repository the facts are read from (a delivery's engine inputs satisfy it). */
interface ApprovalReads {
  octokit: GitHubClient;
  repo: RepoContext;
}

/** Gates waiting for an approval, with the manifest hash the approval must be on. */
export function pendingGates(snapshot: TrackSnapshot): Array<{ gate: GateName; pendingHash: string }> {
  return GATE_NAMES.flatMap((gate) => {
    const record = snapshot.context.gates[gate];
    return (record.status === "pending" || record.status === "withdrawn") && record.pendingHash
      ? [{ gate, pendingHash: record.pendingHash }]
      : [];
  });
}

/**
 * How these reviews decide each gate waiting for an approval: the facts are fetched here, the
 * rules (src/gates/approval.ts) decide. Nothing is fetched when no gate waits. `given` is the
 * review a review event is about, with the commit its payload names (what its reviewer saw).
 */
export async function decideApprovals(
  deps: ApprovalReads,
  config: ConsortConfig,
  pullNumber: number,
  listed: GateReview[],
  snapshot: TrackSnapshot,
  given?: { reviewId: number; commit: string },
): Promise<GateDecision[]> {
  const gates = pendingGates(snapshot);
  if (gates.length === 0) return [];
  // Each review is judged on the commit it is bound to (src/gates/approval.ts), not where GitHub lists it now.
  const reviews = boundReviews(listed, reviewBindings(snapshot, given));
  const facts = await approvalFacts(deps, config, pullNumber, reviews, snapshot);
  return gates.map(({ gate, pendingHash }) =>
    gateApproval(reviews, {
      ...facts.common,
      gate,
      pendingHash,
      hashAtCommit: facts.hashAt(gate),
      // Who wrote or pushed the gate's steps, as Consort recorded them when it accepted each one.
      recordedAuthors: snapshot.context.gates[gate].authors,
    }),
  );
}

/** The facts the approval rules need, fetched once per delivery. */
async function approvalFacts(
  deps: ApprovalReads,
  config: ConsortConfig,
  pullNumber: number,
  reviews: GateReview[],
  snapshot: TrackSnapshot,
) {
  const { octokit, repo } = deps;
  const codeowners = config.approvers.codeowners
    ? await fetchCodeowners(octokit, repo.owner, repo.repo, repo.defaultBranch)
    : undefined;
  const teams = teamsThatMatter(config.approvers, repo.owner, codeowners?.rules);
  const reviewers = await collectReviewerFacts(octokit, repo, reviews, teams);
  const pullCommits = await listCommitsUnderApproval(octokit, repo, pullNumber);
  const gateHashes = new Map<GateName, Map<string, string>>();
  for (const gate of GATE_NAMES) {
    const record = snapshot.context.gates[gate];
    const hashes = new Map<string, string>();
    const commits = new Set(reviews.filter((r) => r.state === "APPROVED" && r.commitId).map((r) => r.commitId!));
    for (const commit of record.pendingHash && (record.status === "pending" || record.status === "withdrawn")
      ? commits
      : []) {
      // The texts at the reviewed commit of the files the gate froze; deploy and promote approve
      // evidence about the track's head instead, so gateManifestAt ties their review to it alone.
      const texts: Record<string, string | undefined> = {};
      if (gate === "design" || gate === "test-list")
        for (const path of Object.keys(record.files))
          texts[path] = (await fileAt({ octokit, owner: repo.owner, repo: repo.repo, path, ref: commit })) ?? undefined;
      const hash = gateManifestAt(snapshot.context, gate, commit, texts);
      if (hash !== undefined) hashes.set(commit, hash);
    }
    gateHashes.set(gate, hashes);
  }
  const common: Omit<ApprovalContext, "gate" | "pendingHash" | "hashAtCommit" | "recordedAuthors"> = {
    org: repo.owner,
    approvers: config.approvers,
    codeowners: codeowners?.rules,
    // Every commit of the PR is under approval: a reviewer who wrote any of them may not approve.
    // Not a merge of the default branch Consort verified: it brings only what that branch holds.
    commits: pullCommits.filter((c) => !(snapshot.context.updateMerges ?? []).includes(c.sha)),
    reviewers,
  };
  return { common, hashAt: (gate: GateName) => gateHashes.get(gate)! };
}
