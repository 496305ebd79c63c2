/**
 * The authenticated GitHub client every app service takes: a Probot installation client in the
 * app, an installation-authenticated Octokit in `consort reconcile` (src/github/client.ts).
 */
export type { GitHubClient as GitHub, RepoContext, RepoRef } from "../github/client.js";
export { httpStatus } from "../github/client.js";

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
