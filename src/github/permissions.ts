import { PERMISSIONS, type Permission } from "../gates/permissions.js";
import { githubMessage, httpStatus, type GitHubClient } from "./client.js";

/**
 * A user's role on the repository, from `GET /repos/{o}/{r}/collaborators/{u}/permission`.
 * `permission` there is the legacy value (maintain reads as write), so `role_name` wins when it
 * names a known role. A user who is not a collaborator (404) has `none`.
 */
export async function collaboratorPermission(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  username: string,
): Promise<Permission> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
    const role = (PERMISSIONS as readonly string[]).includes(data.role_name)
      ? (data.role_name as Permission)
      : undefined;
    const legacy = (PERMISSIONS as readonly string[]).includes(data.permission)
      ? (data.permission as Permission)
      : "none";
    return role ?? legacy;
  } catch (error) {
    if (httpStatus(error) === 404) return "none";
    throw new Error(`Could not read ${username}'s permission on ${owner}/${repo}: ${githubMessage(error)}`, {
      cause: error,
    });
  }
}

/**
 * Whether `username` is an active member of the team `org/slug`
 * (`GET /orgs/{org}/teams/{team_slug}/memberships/{username}`; 404 means not a member).
 */
export async function isTeamMember(
  octokit: GitHubClient,
  org: string,
  teamSlug: string,
  username: string,
): Promise<boolean> {
  try {
    const { data } = await octokit.rest.teams.getMembershipForUserInOrg({ org, team_slug: teamSlug, username });
    return data.state === "active";
  } catch (error) {
    if (httpStatus(error) === 404) return false;
    throw new Error(`Could not read ${username}'s membership of @${org}/${teamSlug}: ${githubMessage(error)}`, {
      cause: error,
    });
  }
}
