import { describe, expect, test } from "vitest";
import { GitHubError, isLostRace } from "../../src/github/errors.js";

/** What a failed GitHub call means, from the status, GitHub's message and the documented headers. */

/** A failed request as Octokit throws it (a RequestError's status, response headers and body). */
function requestError(status: number, message: string, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { status, response: { status, url: "", headers, data: { message } } });
}

describe("GitHubError", () => {
  test.each([
    [409, "tracks/a.json does not match 0123456789abcdef0123456789abcdef01234567", {}, "lost-race"],
    [409, `refs/heads/consort/state is at ${"a".repeat(40)} but expected ${"b".repeat(40)}`, {}, "lost-race"],
    [422, `refs/heads/consort/state is at ${"a".repeat(40)} but expected ${"b".repeat(40)}`, {}, "lost-race"],
    [422, 'Invalid request.\n\n"sha" wasn\'t supplied.', {}, "lost-race"],
    [422, "Update is not a fast forward", {}, "lost-race"],
    [422, "Reference already exists", {}, "lost-race"],
    [409, "Repository rule violations found\n\nCannot update this protected ref.\n\n", {}, "refused"],
    [409, "Repository rule violations found\n\nPush cannot contain secrets.\n\n", {}, "refused"],
    [422, "Repository rule violations found\n\nCannot update this protected ref.\n\n", {}, "refused"],
    [404, "Not Found", {}, "not-found"],
    [403, "Resource not accessible by integration", {}, "forbidden"],
    [403, "API rate limit exceeded for installation ID 31.", { "x-ratelimit-remaining": "0" }, "rate-limited"],
    [403, "You have exceeded a secondary rate limit.", { "retry-after": "60" }, "rate-limited"],
    [429, "You have exceeded a secondary rate limit.", {}, "rate-limited"],
    [502, "Server Error", {}, "server-error"],
    [422, "path cannot start with a slash", {}, "other"],
  ] as const)("%i %j means %s", (status, message, headers, kind) => {
    const error = GitHubError.from(requestError(status, message, headers));
    expect([error.kind, error.status, error.reason]).toEqual([kind, status, message]);
    expect(isLostRace(requestError(status, message, headers))).toBe(kind === "lost-race");
  });

  test("a network failure has no status and keeps its text", () => {
    const error = GitHubError.from(new TypeError("fetch failed"));
    expect([error.kind, error.status, error.reason]).toEqual(["other", undefined, "fetch failed"]);
  });

  test("describes a refusal in GitHub's words, saying what refused it", () => {
    expect(GitHubError.from(requestError(409, "Repository rule violations found")).describe()).toBe(
      "GitHub refused it (409: Repository rule violations found): a branch protection rule, a ruleset or push protection blocks the write",
    );
  });
});
