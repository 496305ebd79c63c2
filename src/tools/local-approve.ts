import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import type { GateName } from "../contracts/gates.js";
import { transition, type TrackSnapshot } from "../orchestrator/index.js";
import { ToolError } from "./errors.js";
import { loadLane, writeLane, type LocalApproval } from "./local-lane.js";
import { replayTrack } from "./replay.js";

/**
 * A person at the terminal approves a gate of the local lane, for rehearsal. The same refusals as
 * a review on GitHub where the checkout can tell them: the gate must be the one waiting, and the
 * approver (git config user.email) may not be an author or committer of the gate's commits. The
 * approval is recorded in the lane only: the app never sees it. Whether a person is at the
 * terminal is the CLI's to check (`consort approve`); no tool offers this.
 */
export interface LocalApproved {
  snapshot: TrackSnapshot;
  approval: LocalApproval;
  lane: string;
  /** The gate's commits the approver was checked against. */
  commits: number;
}

export async function approveLocally(
  repoPath: string,
  config: ConsortConfig,
  gate: GateName,
  { at }: { at: string },
): Promise<LocalApproved> {
  const replayed = await replayTrack(repoPath, config, at);
  if (!replayed.lane)
    throw new ToolError(
      `Track "${replayed.trackId}" follows the app's verified state (consort/state), not a local lane.`,
      "Approve the gate on GitHub with a pull-request review.",
      "NOT_LOCAL",
    );
  const { snapshot } = replayed;
  if (snapshot.stage !== `${gate}-gate`)
    throw new ToolError(
      `The ${gate} gate is not waiting: the track is at ${snapshot.stage}${snapshot.context.rejectedHead ? `, and the branch holds refused commit ${snapshot.context.rejectedHead.sha.slice(0, 7)}` : ""}.`,
      "Run `consort next` to see whose turn it is.",
      "GATE_NOT_WAITING",
    );
  const git = simpleGit(repoPath);
  const approver = (await git.raw(["config", "user.email"]).catch(() => "")).trim();
  if (!approver)
    throw new ToolError(
      "git config user.email is not set, so Consort cannot tell whether you wrote the gate's commits.",
      'Set it (git config user.email "you@example.com") and run `consort approve` again.',
      "NO_APPROVER",
    );
  const head = snapshot.context.head;
  // The gate's commits: those since the lane's previous approval (on this line), else since the merge base.
  const previous = replayed.lane.approvals.at(-1)?.commit;
  const onLine =
    previous !== undefined &&
    (await git
      .raw(["merge-base", "--is-ancestor", previous, head])
      .then(() => true)
      .catch(() => false));
  const from = onLine ? previous : replayed.base;
  const log = await git.raw(["log", "--format=%H%x00%ae%x00%ce", `${from}..${head}`]);
  const commits = log.split("\n").filter(Boolean);
  const own = commits
    .map((line) => line.split("\0"))
    .filter(([, author = "", committer = ""]) =>
      [author, committer].some((email) => email.toLowerCase() === approver.toLowerCase()),
    )
    .map(([sha = ""]) => sha.slice(0, 7));
  if (own.length > 0)
    throw new ToolError(
      `You (${approver}) wrote or committed ${own.join(", ")}, among the ${gate} gate's commits: a gate is approved by a person who did not make its steps.`,
      "Ask someone who did not author the gate's commits to run `consort approve` at their terminal, as GitHub would ask for their review.",
      "AUTHOR_APPROVES",
    );
  const manifestHash = snapshot.context.gates[gate].pendingHash;
  if (!manifestHash)
    throw new ToolError(
      `The ${gate} gate has nothing to approve: the track is at ${snapshot.stage}.`,
      "Run `consort next`.",
      "GATE_NOT_WAITING",
    );
  const result = transition(
    snapshot,
    { type: "gate.approved", at, gate, manifestHash, approver, reviewId: 0, commit: head },
    config,
  );
  if (result.rejection)
    throw new ToolError(
      `The ${gate} gate was not approved: ${result.rejection.reasons.join("; ")}.`,
      "Run `consort next`.",
      "NOT_APPROVED",
    );
  const approval: LocalApproval = { gate, by: approver, at, commit: head };
  // Only over the lane this approval was decided on: another consort command may have moved it.
  const current = await loadLane(repoPath, replayed.trackId);
  const same = current.file !== undefined && JSON.stringify(current.file.snapshot) === JSON.stringify(snapshot);
  const { path, written } = same
    ? await writeLane(
        repoPath,
        {
          trackId: replayed.trackId,
          base: replayed.base,
          snapshot: result.snapshot,
          approvals: [...replayed.lane.approvals, approval],
          refusals: replayed.refusals,
          runs: replayed.lane.runs,
        },
        current.text,
      )
    : { path: replayed.lane.path, written: false };
  if (!written)
    throw new ToolError(
      `The local lane ${path} changed while the ${gate} gate was being approved (another consort command wrote it), so nothing was approved.`,
      "Run `consort approve` again.",
      "LANE_MOVED",
    );
  return { snapshot: result.snapshot, approval, lane: path, commits: commits.length };
}
