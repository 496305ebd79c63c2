import { parseCodeowners, type CodeownersRule } from "../gates/codeowners.js";
import { githubMessage, httpStatus, type GitHubClient } from "./client.js";

/** Where GitHub looks for the file, in its order: the first one found is used. */
const CODEOWNERS_PATHS = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"] as const;

export interface CodeownersFile {
  path: string;
  rules: CodeownersRule[];
}

/** Read CODEOWNERS from `ref` (pass the DEFAULT branch: a track must not pick its own approvers). */
export async function fetchCodeowners(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  ref: string,
): Promise<CodeownersFile | undefined> {
  for (const path of CODEOWNERS_PATHS) {
    try {
      const { data } = await octokit.rest.repos.getContent({ owner, repo, path, ref });
      if (Array.isArray(data) || data.type !== "file" || !("content" in data)) continue;
      return { path, rules: parseCodeowners(Buffer.from(data.content, "base64").toString("utf8")) };
    } catch (error) {
      if (httpStatus(error) === 404) continue;
      throw new Error(`Could not read ${path} on ${ref} of ${owner}/${repo}: ${githubMessage(error)}`, {
        cause: error,
      });
    }
  }
  return undefined;
}
