import { createHash } from "node:crypto";
import { z } from "zod";
import type { GitHub, RepoRef } from "./github.js";

/** The workflows the app dispatches, by file name and by the path a run reports (design §6). */
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
export const WORKFLOW_INPUT = "request";

/** GitHub refuses `workflow_dispatch` inputs whose payload passes this many characters. */
export const DISPATCH_INPUT_LIMIT = 65_535;

/**
 * The hash that binds a result to the request it answers: sha256 of the request's JSON text, as
 * dispatched. The runners echo the parsed request in their result; the runners' schemas give it
 * the same fields in the same order, so the echo hashes alike only if it is the same request.
 */
export function requestDigest(request: unknown): string {
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

const DispatchResponse = z.object({
  workflow_run_id: z.number().int().positive(),
  run_url: z.string(),
  html_url: z.string(),
});

export interface DispatchedRun {
  workflow: WorkflowKind;
  runId: number;
  htmlUrl: string;
  /** ISO time of the dispatch: the start of the cycle's timeout. */
  dispatchedAt: string;
  /** requestDigest of the input sent: a result counts only if its request hashes to this. */
  requestSha256: string;
}

/**
 * Dispatch a Consort workflow AT THE DEFAULT BRANCH, so the job that runs is the trusted one and
 * not whatever a track wrote, with the target commit inside the one JSON input. GitHub answers
 * with the run id (`return_run_details`), which is recorded so only this run's result is trusted.
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
  octokit: GitHub;
  defaultBranch: string;
  workflow: WorkflowKind;
  request: unknown;
  now: Date;
}): Promise<DispatchedRun> {
  const input = JSON.stringify(request);
  const size = JSON.stringify({ [WORKFLOW_INPUT]: input }).length;
  if (size > DISPATCH_INPUT_LIMIT)
    throw new Error(
      `the ${WORKFLOWS[workflow].path} request is ${size} characters, more than the ${DISPATCH_INPUT_LIMIT} GitHub accepts as workflow_dispatch inputs, so it was not sent`,
    );
  const response = await octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
    owner,
    repo,
    workflow_id: WORKFLOWS[workflow].file,
    ref: defaultBranch,
    inputs: { [WORKFLOW_INPUT]: input },
    return_run_details: true,
  });
  const details = DispatchResponse.safeParse(response.data);
  if (!details.success) {
    // Without a run id the result could never be trusted: fail now rather than wait for a timeout.
    throw new Error(
      `dispatching ${WORKFLOWS[workflow].path} on ${owner}/${repo}@${defaultBranch} returned no run id (status ${response.status}); ` +
        "GitHub must support return_run_details for Consort to trust the run's result",
    );
  }
  return {
    workflow,
    runId: details.data.workflow_run_id,
    htmlUrl: details.data.html_url,
    dispatchedAt: now.toISOString(),
    requestSha256: requestDigest(request),
  };
}
