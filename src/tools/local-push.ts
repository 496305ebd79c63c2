import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { transition, type TrackSnapshot, type TransitionResult } from "../orchestrator/index.js";
import { gitSource } from "../push/git.js";
import { completedPush, pushEvent, verifiedPush } from "../push/read.js";
import { ToolError } from "./errors.js";

/**
 * The checkout's commits after the track's head, pushed through the app's own push reader (src/push,
 * read from local git instead of GitHub's API) and machine, one push per step as an agent pushes
 * each: merges, rebases and refusals are judged exactly as the app judges them. Nothing is pushed.
 */

interface LocalStep {
  sha: string;
  /** The machine's answer to the push that brought this commit. */
  result: TransitionResult;
  /**
   * A refused commit's own reasons: on top of a refused commit the machine says only that, so the
   * commit is also judged on the last accepted head, as its push after a reset would be.
   */
  reasons?: string[];
}

export interface LocalPushes {
  snapshot: TrackSnapshot;
  /** Oldest first; none when the checkout's HEAD is where the track stands. */
  steps: LocalStep[];
}

export async function localPushes(
  repoPath: string,
  start: TrackSnapshot,
  config: ConsortConfig,
  {
    at,
    defaultBranch,
    timeOf = () => undefined,
  }: { at: string; defaultBranch: string; timeOf?: (sha: string) => string | undefined },
): Promise<LocalPushes> {
  const git = simpleGit(repoPath);
  const head = (await git.revparse(["HEAD"])).trim();
  const known = start.context.rejectedHead?.sha ?? start.context.head;
  const exists = await git
    .raw(["cat-file", "-t", known])
    .then((type) => type.trim() === "commit")
    .catch(() => false);
  if (!exists)
    throw new ToolError(
      `The checkout does not contain the track's last commit ${known.slice(0, 12)}.`,
      "Fetch the track's branch (git fetch) so the local commits can be compared with what the track accepted.",
      "UNKNOWN_HEAD",
    );
  const source = gitSource(repoPath);
  let snapshot = start;
  const steps: LocalStep[] = [];
  for (const [before, after] of await pushesTo(repoPath, known, head)) {
    const read = await verifiedPush({ source, before, after, payload: undefined, defaultBranch, config });
    const push = await completedPush({ source, before, after, config, snapshot }, read);
    const event = pushEvent(snapshot, { before, after, ...push }, timeOf(after) ?? at);
    if (!event) continue;
    const result = transition(snapshot, event, config);
    const { context } = snapshot;
    const reasons = !result.rejection
      ? undefined
      : context.rejectedHead
        ? (transition(
            { ...snapshot, context: { ...context, rejectedHead: null } },
            { ...event, before: context.head },
            config,
          ).rejection?.reasons ?? [])
        : result.rejection.reasons;
    snapshot = result.snapshot;
    steps.push({ sha: after, result, ...(reasons ? { reasons } : {}) });
  }
  return { snapshot, steps };
}

/**
 * The pushes that bring the branch from `known` to `head`: one a commit of its first-parent line
 * when that line leads back to `known` (a merge of the default branch is one push), else one push
 * of the whole move (a rebase, or history rewritten), which the reader judges as the app would.
 */
async function pushesTo(repoPath: string, known: string, head: string): Promise<Array<[string, string]>> {
  if (known === head) return [];
  const git = simpleGit(repoPath);
  const line = (await git.raw(["rev-list", "--first-parent", "--reverse", `${known}..${head}`]))
    .split("\n")
    .filter(Boolean);
  const first = line[0];
  const parent = first ? (await git.raw(["rev-parse", `${first}^`]).catch(() => "")).trim() : "";
  if (parent !== known) return [[known, head]];
  return line.map((sha, i) => [i === 0 ? known : line[i - 1]!, sha]);
}
