import type { GitHubClient } from "../github/client.js";
import { collaboratorPermission } from "../github/permissions.js";

/** Only a repository admin may vouch for a state file that failed its signature. */
export class ResealDeniedError extends Error {
  constructor(
    readonly user: string,
    readonly permission: string,
  ) {
    super(
      `${user} may not re-seal Consort state: that needs admin permission on the repository (they have ${permission})`,
    );
    this.name = "ResealDeniedError";
  }
}

/** Throws ResealDeniedError unless `user` is an admin of the repository (asked of the API, never trusted from a payload). */
export async function assertCanReseal(octokit: GitHubClient, owner: string, repo: string, user: string): Promise<void> {
  const permission = await collaboratorPermission(octokit, owner, repo, user);
  if (permission !== "admin") throw new ResealDeniedError(user, permission);
}
