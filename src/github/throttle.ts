import { ProbotOctokit } from "probot";

/**
 * How Consort's GitHub calls wait out GitHub's rate limits. Probot's own throttling options
 * (probot/lib/octokit/get-octokit-throttle-options.js) only log a secondary rate limit and give
 * up, so a step that hits one would lose its writes. Here a secondary limit (403 or 429 "You have
 * exceeded a secondary rate limit") is retried after GitHub's `Retry-After` (60 s when it sends
 * none), and a primary one after `x-ratelimit-reset`, as @octokit/plugin-throttling computes them,
 * a bounded number of times; after that the call fails and the effect's failure reaches its check.
 */

/** Retries of one request after a secondary rate limit: GitHub asks to wait longer each time. */
export const SECONDARY_LIMIT_RETRIES = 3;
/** Retries of one request after the primary (hourly) rate limit ran out. */
const PRIMARY_LIMIT_RETRIES = 2;
/** A primary-limit reset further away than this is not waited for: the delivery fails with the reason. */
export const LONGEST_PRIMARY_WAIT_S = 15 * 60;

interface LimitedRequest {
  method: string;
  url: string;
}
interface LogsWarnings {
  log: { warn(message: string): void };
}

/** Whether to retry a request GitHub refused with a secondary rate limit (the plugin waits `retryAfter` seconds). */
function onSecondaryRateLimit(
  retryAfter: number,
  request: LimitedRequest,
  octokit: LogsWarnings,
  retryCount: number,
): boolean {
  const retry = retryCount < SECONDARY_LIMIT_RETRIES;
  octokit.log.warn(
    `GitHub's secondary rate limit refused ${request.method} ${request.url}: ${
      retry
        ? `retrying in ${retryAfter} s (retry ${retryCount + 1} of ${SECONDARY_LIMIT_RETRIES})`
        : `giving up after ${SECONDARY_LIMIT_RETRIES} retries`
    }`,
  );
  return retry;
}

/** Whether to retry a request refused because the installation's hourly quota ran out. */
export function onRateLimit(
  retryAfter: number,
  request: LimitedRequest,
  octokit: LogsWarnings,
  retryCount: number,
): boolean {
  const retry = retryCount < PRIMARY_LIMIT_RETRIES && retryAfter <= LONGEST_PRIMARY_WAIT_S;
  octokit.log.warn(
    `GitHub's rate limit refused ${request.method} ${request.url}: ${
      retry
        ? `retrying in ${retryAfter} s, after the quota resets`
        : `not retried (the quota resets in ${retryAfter} s)`
    }`,
  );
  return retry;
}

/**
 * The statuses @octokit/plugin-retry (bundled by Probot) must not re-send: its own list (400, 401,
 * 403, 404, 410, 422, 451) plus 409. A 409 is a lost compare-and-swap, which only a re-read can
 * win, or a protection refusal, which no retry changes; re-sent, one stale write cost 4 calls and
 * 14 s. 5xx stay retried with the plugin's backoff; rate limits are plugin-throttling's (above).
 */
const DO_NOT_RETRY = [400, 401, 403, 404, 409, 410, 422, 451];

/**
 * The Octokit the app runs with: Probot's, whose installation clients retry rate limits as above
 * and never re-send a 409.
 * Probot merges its own throttle options into each client before this class's defaults run, so
 * these handlers replace Probot's; options a caller passes (a test's `retryAfterBaseValue`) are kept.
 * Typed as Probot's class (what `run` takes), since the inferred type names probot's internal paths.
 */
export const ConsortOctokit: typeof ProbotOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  throttle: { ...(options.throttle as object | undefined), onSecondaryRateLimit, onRateLimit },
  retry: { ...(options.retry as object | undefined), doNotRetry: DO_NOT_RETRY },
}));
