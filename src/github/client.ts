import type { Octokit } from "@octokit/rest";

/**
 * The part of Octokit Consort uses. Both a Probot `context.octokit` and an `@octokit/rest`
 * instance (the CLI's) satisfy it, so domain code never depends on the framework.
 */
export type GitHubClient = Pick<Octokit, "rest" | "request" | "paginate">;

export interface RepoRef {
  owner: string;
  repo: string;
}

/** The repository an event is about, from its (signed) payload. */
export interface RepoContext extends RepoRef {
  fullName: string;
  defaultBranch: string;
}

/** The HTTP status of an Octokit request error, or undefined for anything else. */
export function httpStatus(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "status" in error) {
    const status = (error as { status: unknown }).status;
    return typeof status === "number" ? status : undefined;
  }
  return undefined;
}

/** GitHub's own message for a failed request (`{"message": …}`), else the error's text. */
export function githubMessage(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const data = (error as { response?: { data?: unknown } }).response?.data;
    if (typeof data === "object" && data !== null && typeof (data as { message?: unknown }).message === "string") {
      return (data as { message: string }).message;
    }
    if (error instanceof Error) return error.message;
  }
  return String(error);
}

/** Parse `owner/name`; throws naming the expected form. */
export function parseRepository(fullName: string): RepoRef {
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/.exec(fullName.trim());
  if (!match) throw new Error(`"${fullName}" is not a repository: use owner/name, e.g. acme/shop`);
  return { owner: match[1]!, repo: match[2]! };
}
