import { MERGE_QUEUE_BRANCH_PREFIX, STATE_BRANCH } from "../contracts/branches.js";
import { globMatcher } from "../roles/globs.js";
import type { ConsortConfig } from "./consort-config.js";

/**
 * What a git branch is to Consort, the one place that says so: a feature's track (the whole lane),
 * an experiment (its own database branch, no lane, never merges), a maintenance branch (dependency
 * bumps: the default branch's frozen suite, no design lane), or none of these (the default branch,
 * the state branch, a merge queue's branches), which Consort never tracks.
 */
export type BranchKind =
  | { kind: "track" }
  | { kind: "experiment" }
  | { kind: "maintenance" }
  | { kind: "untracked"; why: "default branch" | "state branch" | "merge queue" };

/**
 * Why Consort never acts on `branch`, whatever the configuration says; undefined for a branch the
 * configuration classifies. Asked before the configuration is read, so trunk's pushes cost no read.
 */
export function untrackedByName(
  branch: string,
  defaultBranch: string,
): Extract<BranchKind, { kind: "untracked" }> | undefined {
  if (branch === defaultBranch) return { kind: "untracked", why: "default branch" };
  if (branch === STATE_BRANCH) return { kind: "untracked", why: "state branch" };
  if (branch.startsWith(MERGE_QUEUE_BRANCH_PREFIX)) return { kind: "untracked", why: "merge queue" };
  return undefined;
}

/** What every Consort check of an experiment says, and the merge queue when one is queued. */
export const NEVER_MERGES = "an experiment never merges: carry what it taught you into a track";

/** The kind of `branch` in a repository whose default branch is `defaultBranch`, under `config` (read from the default branch). */
export function branchKindOf(
  branch: string,
  defaultBranch: string,
  config: Pick<ConsortConfig, "experiments" | "maintenance">,
): BranchKind {
  const untracked = untrackedByName(branch, defaultBranch);
  if (untracked) return untracked;
  if (branch.startsWith(config.experiments.prefix)) return { kind: "experiment" };
  if (globMatcher(config.maintenance.branches)(branch)) return { kind: "maintenance" };
  return { kind: "track" };
}

/**
 * Whether a branch of this kind moves along a lane kept in a track file on consort/state: a
 * feature's track, and a maintenance branch (the same file, `lane: "maintenance"` in its snapshot,
 * so reviews, cycle reports and merges reach it by the same paths). Experiments keep none.
 */
export function movesAlongALane(kind: BranchKind["kind"] | undefined): kind is "track" | "maintenance" {
  return kind === "track" || kind === "maintenance";
}

/** The lane a new track of this kind starts on (undefined: a feature's whole lane). */
export function laneOf(kind: "track" | "maintenance"): "maintenance" | undefined {
  return kind === "maintenance" ? "maintenance" : undefined;
}
