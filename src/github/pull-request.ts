import type { GitHubClient, RepoContext } from "./client.js";

/**
 * The open pull request from `branch` into the repository's default branch, if any: the track's
 * one PR (a PR from the track into another branch is not where the track is read).
 */
export async function openPullRequestFor(
  { octokit, repo }: { octokit: GitHubClient; repo: RepoContext },
  branch: string,
): Promise<{ number: number; base: string; headSha: string } | undefined> {
  const { owner, defaultBranch: base } = repo;
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/pulls", {
    owner,
    repo: repo.repo,
    head: `${owner}:${branch}`,
    base,
    state: "open",
    per_page: 5,
  });
  const pull = data.find((p) => p.base.ref === base);
  return pull ? { number: pull.number, base: pull.base.ref, headSha: pull.head.sha } : undefined;
}
