import type { GitHub, RepoRef } from "./github.js";

/** The open pull request whose head is `branch` in this repository, if any. */
export async function openPullRequestFor({
  octokit,
  owner,
  repo,
  branch,
}: RepoRef & { octokit: GitHub; branch: string }): Promise<
  { number: number; base: string; headSha: string } | undefined
> {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/pulls", {
    owner,
    repo,
    head: `${owner}:${branch}`,
    state: "open",
    per_page: 5,
  });
  const pull = data[0];
  return pull ? { number: pull.number, base: pull.base.ref, headSha: pull.head.sha } : undefined;
}
