import { githubMessage, httpStatus } from "./client.js";

/**
 * What a failed GitHub call means, read from its status, GitHub's own message and the documented
 * headers, so a caller decides by meaning: a lost compare-and-swap is re-read and re-applied at
 * once; a refusal, a lost repository and a forbidden call fail the track's checks with GitHub's
 * reason and are not retried; rate limits and server errors are waited out (src/github/throttle.ts
 * and @octokit/plugin-retry) and then fail.
 */
export type GitHubErrorKind =
  /** Another write got there first: a stale blob sha, a branch that moved, a ref made or gone meanwhile. */
  | "lost-race"
  /** Branch protection, a ruleset or push protection refused the write (409 or 422 with GitHub's reason). */
  | "refused"
  /** 404: the repository, branch or object is gone, or the app lost access to it. */
  | "not-found"
  /** 403 that is not a rate limit: the app lacks a permission. */
  | "forbidden"
  /** 403 or 429 with GitHub's rate-limit headers or message. */
  | "rate-limited"
  /** 5xx: GitHub failed; worth another try later. */
  | "server-error"
  /** Any other answer (400, 410, 422 on a bad request, a network failure). */
  | "other";

/**
 * The answers GitHub gives to a compare-and-swap that lost: on the Contents API a stale blob sha
 * (409 "does not match"), a file that appeared (422 "\"sha\" wasn't supplied") or the branch moving
 * under the write ("is at X but expected Y", seen as 409 and as 422); on a ref update a
 * non-fast-forward or a ref made or deleted meanwhile (422).
 */
const LOST_RACE =
  /does not match [0-9a-f]{7,40}|is at [0-9a-f]{7,40} but expected [0-9a-f]{7,40}|"?sha"? wasn't supplied|not a fast[- ]?forward|reference (does not exist|already exists)/i;

/** A 403 or 429 that is GitHub's primary or secondary rate limit, by its documented headers or message. */
function isRateLimit(status: number, message: string, headers: Record<string, string | undefined>): boolean {
  if (status === 429) return true;
  return (
    status === 403 &&
    (headers["x-ratelimit-remaining"] === "0" || headers["retry-after"] !== undefined || /rate limit/i.test(message))
  );
}

function kindOf(status: number | undefined, message: string, headers: Record<string, string | undefined>) {
  if (status === undefined) return "other";
  if ((status === 409 || status === 422) && LOST_RACE.test(message)) return "lost-race";
  // Every other 409 on a write is a refusal (protection, rulesets, push protection); so is a 422 naming a rule.
  if (status === 409 || (status === 422 && /rule|protect|secret|push/i.test(message))) return "refused";
  if (status === 404) return "not-found";
  if (isRateLimit(status, message, headers)) return "rate-limited";
  if (status === 403) return "forbidden";
  if (status >= 500) return "server-error";
  return "other";
}

function headersOf(error: unknown): Record<string, string | undefined> {
  const headers = (error as { response?: { headers?: unknown } } | null)?.response?.headers;
  return typeof headers === "object" && headers !== null ? (headers as Record<string, string | undefined>) : {};
}

/** A failed GitHub call: its HTTP status, GitHub's own message, and what that means. */
export class GitHubError extends Error {
  readonly kind: GitHubErrorKind;
  readonly status: number | undefined;
  /** GitHub's `message` (the reason to show people), else the error's text. */
  readonly reason: string;

  constructor(
    status: number | undefined,
    reason: string,
    headers: Record<string, string | undefined> = {},
    cause?: unknown,
  ) {
    super(status === undefined ? reason : `${status} ${reason}`, { cause });
    this.name = "GitHubError";
    this.status = status;
    this.reason = reason;
    this.kind = kindOf(status, reason, headers);
  }

  /** What happened, in GitHub's words, for a check's text: "GitHub refused it (409 …): …". */
  describe(): string {
    const answer = this.status === undefined ? this.reason : `${this.status}: ${this.reason}`;
    switch (this.kind) {
      case "refused":
        return `GitHub refused it (${answer}): a branch protection rule, a ruleset or push protection blocks the write`;
      case "not-found":
        return `GitHub answered ${answer}: the app lost access to the repository, or what it wrote to is gone`;
      case "forbidden":
        return `GitHub answered ${answer}: the app's installation lacks a permission this needs`;
      case "rate-limited":
        return `GitHub's rate limit refused it (${answer}) after the documented waits`;
      case "server-error":
        return `GitHub failed (${answer}) after retries`;
      default:
        return `GitHub answered ${answer}`;
    }
  }

  /** Read any thrown value (an Octokit RequestError, a network error) as a GitHubError. */
  static from(error: unknown): GitHubError {
    if (error instanceof GitHubError) return error;
    return new GitHubError(httpStatus(error), githubMessage(error), headersOf(error), error);
  }
}

/** Whether `error` is a compare-and-swap another writer won: re-read and re-apply, at once. */
export function isLostRace(error: unknown): boolean {
  return GitHubError.from(error).kind === "lost-race";
}
