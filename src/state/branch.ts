import { httpStatus, type GitHubClient, type RepoRef } from "../github/client.js";
import { STATE_BRANCH } from "../contracts/branches.js";

/**
 * The state branch at installation (docs/ARCHITECTURE.md, State): made before any track needs it.
 * The store (store.ts) starts it on its first write where the repository had no commits yet.
 */

const README = `# ${STATE_BRANCH}

Consort's signed record of every track in this repository: one file per track under \`tracks/\`.
Only the Consort app writes here (\`consort protect\` makes that a rule); a file edited by anyone
else fails its signature and stops its track until a maintainer re-seals it.
`;

export type StateBranchOutcome = "created" | "exists" | "empty-repository";

/**
 * Create the state branch where it is missing: an orphan commit holding only a README, so the
 * branch shares no history with the code and the app's writes never touch a PR branch.
 */
export async function ensureStateBranch({
  octokit,
  owner,
  repo,
}: RepoRef & { octokit: GitHubClient }): Promise<StateBranchOutcome> {
  try {
    await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { owner, repo, ref: `heads/${STATE_BRANCH}` });
    return "exists";
  } catch (error) {
    // 409: the repository has no commits yet; the store creates the branch on its first write.
    if (httpStatus(error) === 409) return "empty-repository";
    if (httpStatus(error) !== 404) throw error;
  }
  const tree = await octokit.request("POST /repos/{owner}/{repo}/git/trees", {
    owner,
    repo,
    tree: [{ path: "README.md", mode: "100644", type: "blob", content: README }],
  });
  const commit = await octokit.request("POST /repos/{owner}/{repo}/git/commits", {
    owner,
    repo,
    message: "consort: start the state branch",
    tree: tree.data.sha,
    parents: [],
  });
  try {
    await octokit.request("POST /repos/{owner}/{repo}/git/refs", {
      owner,
      repo,
      ref: `refs/heads/${STATE_BRANCH}`,
      sha: commit.data.sha,
    });
  } catch (error) {
    // Another replica created it between our read and our write: the branch exists, which is the goal.
    if (httpStatus(error) === 422) return "exists";
    throw error;
  }
  return "created";
}
