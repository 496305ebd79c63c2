import { createHash } from "node:crypto";
import type { GitHubClient, RepoRef } from "./client.js";

/** The workflows the app dispatches, by file name and by the path a run reports (docs/ARCHITECTURE.md, Cycles). */
export const WORKFLOWS = {
  cycle: { file: "consort-cycle.yml", path: ".github/workflows/consort-cycle.yml" },
  agent: { file: "consort-agent.yml", path: ".github/workflows/consort-agent.yml" },
  /** The release: a verified preview deploy on the track's database branch (the action's deploy step). */
  deploy: { file: "consort-deploy.yml", path: ".github/workflows/consort-deploy.yml" },
  /** After a merge: migrate the parent's database branch (snapshot kept until it succeeds; the action's promote step). */
  promote: { file: "consort-promote.yml", path: ".github/workflows/consort-promote.yml" },
} as const;
export type WorkflowKind = keyof typeof WORKFLOWS;

/** The ONE input every Consort workflow takes: the whole request as JSON (input count is capped). */
const WORKFLOW_INPUT = "request";

/** GitHub refuses `workflow_dispatch` inputs whose payload passes this many characters. */
const DISPATCH_INPUT_LIMIT = 65_535;

/**
 * The hash that binds a result to the request it answers: sha256 of the request's JSON text, as
 * dispatched. The runners echo the parsed request in their result; the runners' schemas give it
 * the same fields in the same order, so the echo hashes alike only if it is the same request.
 */
export function requestDigest(request: unknown): string {
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

export interface DispatchedRun {
  workflow: WorkflowKind;
  /** ISO time of the dispatch: the start of the cycle's timeout. */
  dispatchedAt: string;
  /** requestDigest of the input sent: a result counts only if its request hashes to this. */
  requestSha256: string;
}

/**
 * The `run-name` every Consort workflow gives its runs (templates/consort-*.yml): the kind and the
 * request's dispatch id. The app finds a run by it, without `return_run_details` (which GitHub
 * Enterprise Server answers with 204 or 400) and without recording a run id, so a run that
 * reports before anything else was written is still matched.
 */
const RUN_NAME = /^consort (cycle|deploy|promote|agent) (\S+)$/;

/** The dispatch id a run's `run-name` (its `display_title`) names, or undefined for any other title. */
export function dispatchIdOfRunName(displayTitle: string | null | undefined): string | undefined {
  return RUN_NAME.exec(displayTitle ?? "")?.[2];
}

/**
 * Dispatch a Consort workflow AT THE DEFAULT BRANCH, so the job that runs is the trusted one and
 * not whatever a track wrote, with the target commit inside the one JSON input. The input is
 * checked against GitHub's limit before it is sent: a request that would be refused fails here,
 * with its size, and the effect's failure fails the check that waits for it.
 */
export async function dispatchWorkflow({
  octokit,
  owner,
  repo,
  defaultBranch,
  workflow,
  request,
  now,
}: RepoRef & {
  octokit: GitHubClient;
  defaultBranch: string;
  workflow: WorkflowKind;
  request: unknown;
  now: Date;
}): Promise<DispatchedRun> {
  const input = JSON.stringify(request);
  const size = dispatchInputSize({ [WORKFLOW_INPUT]: input });
  if (size > DISPATCH_INPUT_LIMIT)
    throw new Error(
      `the ${WORKFLOWS[workflow].path} request is ${size} characters, more than the ${DISPATCH_INPUT_LIMIT} GitHub accepts as workflow_dispatch inputs, so it was not sent`,
    );
  await octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
    owner,
    repo,
    workflow_id: WORKFLOWS[workflow].file,
    ref: defaultBranch,
    inputs: { [WORKFLOW_INPUT]: input },
  });
  return { workflow, dispatchedAt: now.toISOString(), requestSha256: requestDigest(request) };
}

/** The size GitHub counts for a dispatch's inputs: the characters of the inputs object as JSON. */
function dispatchInputSize(inputs: Record<string, string>): number {
  return JSON.stringify(inputs).length;
}
