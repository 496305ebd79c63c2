import type { Octokit } from "@octokit/rest";

/**
 * The authenticated GitHub client every app service takes: a Probot installation client in the
 * app, an `@octokit/rest` client in `consort reconcile`.
 */
export type GitHub = Pick<Octokit, "rest" | "request" | "paginate">;

/** The minimal logger handlers get (Probot's pino logger satisfies it). */
export interface Log {
  info(message: string): void;
  info(fields: object, message: string): void;
  warn(message: string): void;
  warn(fields: object, message: string): void;
  error(message: string): void;
  error(fields: object, message: string): void;
  debug(message: string): void;
  debug(fields: object, message: string): void;
}

export interface RepoRef {
  owner: string;
  repo: string;
}

/** An HTTP error from Octokit carries the response status. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}
