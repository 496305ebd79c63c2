import { generateKeyPairSync } from "node:crypto";
import nock from "nock";
import { Probot, ProbotOctokit } from "probot";
import { checkRequest, documentedStatuses, type MatchedOperation } from "./github-api.js";

const GITHUB_API = "https://api.github.com";

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  operationId: string | undefined;
  /** The request's headers, lower-cased names (e.g. if-none-match for a conditional read). */
  headers: Record<string, string>;
}

type Reply = [status: number, body?: unknown, headers?: Record<string, string>];
type Responder = Reply | ((request: RecordedRequest) => Reply);

interface Expectation {
  method: string;
  path: string | RegExp;
  responder: Responder;
  times: number;
  used: number;
  label: string;
}

/**
 * A GitHub API double built on nock. Every request the code under test makes is checked against
 * GitHub's REST description: an unknown endpoint, a missing required parameter or body field, or
 * a wrong type is a violation, and so is any request no expectation answers. `verify()` (called
 * by the test, or `afterEach`) fails on any violation and on any expectation left unused.
 */
export class GitHubMock {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  private readonly expectations: Expectation[] = [];
  private readonly scope: nock.Scope;
  private readonly onNoMatch = (req: { method?: string; path?: string; options?: { host?: string } }) => {
    const host = req.options?.host ?? "";
    if (host && !host.includes("api.github.com")) return;
    this.violations.push(`${req.method ?? "?"} ${req.path ?? "?"}: no mock answers this request`);
  };

  constructor(readonly baseUrl: string = GITHUB_API) {
    this.scope = nock(baseUrl).persist();
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      const answer = (uri: string, body: nock.Body, headers: Record<string, string | string[]>) =>
        this.answer(method, uri, body, headers);
      this.scope
        .intercept(() => true, method)
        .reply(function (uri, body) {
          return answer(uri, body, this.req.headers);
        });
    }
    nock.emitter.on("no match", this.onNoMatch);
  }

  /**
   * Expect `method path` (a concrete path such as `/repos/o/r/check-runs`, or a RegExp) to be
   * called `times` times (default once, `Infinity` for any number) and answer with `responder`.
   */
  on(method: string, path: string | RegExp, responder: Responder, times = 1): this {
    const label = `${method.toUpperCase()} ${String(path)}`;
    if (typeof path === "string") {
      const { violations, operation } = checkRequest(method, path.split("?")[0]!, undefined);
      if (!operation) throw new Error(`mock for ${label}: ${violations.join("; ")}`);
      if (Array.isArray(responder)) this.checkStatus(operation, responder[0], label);
    }
    this.expectations.push({ method: method.toUpperCase(), path, responder, times, used: 0, label });
    return this;
  }

  private checkStatus(operation: MatchedOperation, status: number, label: string): void {
    const statuses = documentedStatuses(operation);
    if (!statuses.includes(String(status)) && !statuses.includes("default") && status < 400) {
      throw new Error(
        `mock for ${label}: GitHub documents ${statuses.join(", ")} for ${operation.operationId}, not ${status}`,
      );
    }
  }

  private answer(
    method: string,
    uri: string,
    rawBody: unknown,
    headers: Record<string, string | string[]> = {},
  ): Reply {
    const url = new URL(uri, this.baseUrl);
    const body = parseBody(rawBody);
    const { operation, violations } = checkRequest(method, uri, body);
    this.violations.push(...violations);
    const recorded: RecordedRequest = {
      method: method.toUpperCase(),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body,
      operationId: operation?.operationId,
      headers: Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [
          name.toLowerCase(),
          Array.isArray(value) ? value.join(", ") : value,
        ]),
      ),
    };
    this.requests.push(recorded);
    // GitHub's documented limits, answered as GitHub answers them: what it would refuse is refused here.
    const refused = refusedByGitHub(recorded.method, url.pathname, body);
    if (refused) {
      this.violations.push(`${recorded.method} ${url.pathname}: GitHub would refuse this request: ${refused}`);
      return [422, { message: `Validation Failed: ${refused}`, documentation_url: "https://docs.github.com/rest" }];
    }
    const expectation = this.expectations.find(
      (e) =>
        e.method === recorded.method &&
        e.used < e.times &&
        (typeof e.path === "string"
          ? e.path === url.pathname + url.search || e.path === url.pathname
          : e.path.test(url.pathname)),
    );
    if (!expectation) {
      this.violations.push(`${recorded.method} ${url.pathname}${url.search}: no mock answers this request`);
      return [599, { message: "unmocked request (see GitHubMock violations)" }];
    }
    expectation.used += 1;
    const reply = typeof expectation.responder === "function" ? expectation.responder(recorded) : expectation.responder;
    return reply;
  }

  /**
   * Answer a request that reaches the double other than through nock: the soak serves the double
   * over HTTP to app processes of their own (test/queue/support/soak.ts). Checked and recorded alike.
   */
  handle(method: string, uri: string, rawBody: unknown, headers: Record<string, string | string[]> = {}): Reply {
    return this.answer(method, uri, rawBody, headers);
  }

  /** The recorded requests with this method and path. */
  calls(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter(
      (r) => r.method === method.toUpperCase() && (typeof path === "string" ? r.path === path : path.test(r.path)),
    );
  }

  /** Throws listing every contract violation and every expectation that was not used up. */
  verify(): void {
    const unused = this.expectations.filter((e) => e.times !== Infinity && e.used < e.times);
    const problems = [
      ...this.violations,
      ...unused.map((e) => `${e.label}: expected ${e.times} call(s), got ${e.used}`),
    ];
    if (problems.length > 0) throw new Error(`GitHub mock found problems:\n  ${problems.join("\n  ")}`);
  }

  dispose(): void {
    nock.emitter.removeListener("no match", this.onNoMatch);
    nock.cleanAll();
  }
}

/**
 * A contents read inlines a file of up to 1 MB; a larger one (up to 100 MB) comes with
 * `encoding: "none"` and an empty `content`, to be read as raw or through its blob (GitHub's
 * "Get repository content": "Between 1-100 MB: only the raw or object custom media types").
 */
export const CONTENTS_INLINE_BYTES = 1_000_000;

/** The `content` and `encoding` of a contents read of a file holding `bytes`, as GitHub gives them. */
export function contentsBody(bytes: Buffer): { content: string; encoding: "base64" | "none" } {
  return bytes.length > CONTENTS_INLINE_BYTES
    ? { content: "", encoding: "none" }
    : { content: bytes.toString("base64"), encoding: "base64" };
}

/** GitHub counts check-run output and comment bodies in UTF-8 bytes. */
export const CHECK_OUTPUT_BYTES = 65_535;
export const COMMENT_BYTES = 65_536;
const ANNOTATIONS_PER_REQUEST = 50;
const CHECK_ACTIONS_MAX = 3;
const DISPATCH_INPUT_CHARACTERS = 65_535;

/**
 * What GitHub refuses with 422 whatever the mock would answer: check-run summaries and texts over
 * 65,535 UTF-8 bytes, more than 50 annotations or 3 actions in one request, comments over 65,536
 * bytes, workflow_dispatch inputs over 65,535 characters (or 25 inputs). Undefined when accepted.
 */
export function refusedByGitHub(method: string, path: string, body: unknown): string | undefined {
  const b = (body ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const bytes = (v: unknown) => (typeof v === "string" ? Buffer.byteLength(v, "utf8") : 0);
  if (/\/check-runs(\/\d+)?$/.test(path) && (method === "POST" || method === "PATCH")) {
    for (const field of ["summary", "text"])
      if (bytes(b.output?.[field]) > CHECK_OUTPUT_BYTES)
        return `output.${field} is ${bytes(b.output?.[field])} bytes; the maximum is ${CHECK_OUTPUT_BYTES}`;
    if (Array.isArray(b.output?.annotations) && b.output.annotations.length > ANNOTATIONS_PER_REQUEST)
      return `${b.output.annotations.length} annotations; at most ${ANNOTATIONS_PER_REQUEST} per request`;
    if (Array.isArray(b.actions) && b.actions.length > CHECK_ACTIONS_MAX)
      return `${b.actions.length} actions; at most ${CHECK_ACTIONS_MAX}`;
  }
  if (/\/issues\/(\d+\/comments|comments\/\d+)$/.test(path) && (method === "POST" || method === "PATCH")) {
    if (bytes(b.body) > COMMENT_BYTES) return `body is ${bytes(b.body)} bytes; the maximum is ${COMMENT_BYTES}`;
  }
  if (/\/actions\/workflows\/[^/]+\/dispatches$/.test(path) && method === "POST" && b.inputs) {
    if (Object.keys(b.inputs).length > 25) return `${Object.keys(b.inputs).length} inputs; at most 25`;
    const size = JSON.stringify(b.inputs).length;
    if (size > DISPATCH_INPUT_CHARACTERS)
      return `inputs are ${size} characters; the maximum is ${DISPATCH_INPUT_CHARACTERS}`;
  }
  return undefined;
}

function parseBody(raw: unknown): unknown {
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw === "string") {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

let keyPair: string | undefined;
/** A real RSA private key (made once per worker) so Probot can sign app JWTs in tests. */
export function testPrivateKey(): string {
  keyPair ??= generateKeyPairSync("rsa", { modulusLength: 2048 })
    .privateKey.export({ type: "pkcs1", format: "pem" })
    .toString();
  return keyPair;
}

export const TEST_APP_ID = 123456;
export const TEST_WEBHOOK_SECRET = "test-webhook-secret";

/** A Probot instance wired for tests: no retries, no throttling (they would hide or slow failures). */
export function createTestProbot(): Probot {
  return new Probot({
    appId: TEST_APP_ID,
    privateKey: testPrivateKey(),
    secret: TEST_WEBHOOK_SECRET,
    logLevel: "fatal",
    Octokit: ProbotOctokit.defaults((options: Record<string, unknown>) => ({
      ...options,
      retry: { enabled: false },
      throttle: { enabled: false },
    })),
  });
}

/** Expect the installation token exchange Probot makes before its first API call for an event. */
export function mockInstallationToken(github: GitHubMock, installationId: number, times = 1): GitHubMock {
  return github.on(
    "POST",
    `/app/installations/${installationId}/access_tokens`,
    [201, { token: "ghs_test", expires_at: "2099-01-01T00:00:00Z", permissions: {}, repository_selection: "all" }],
    times,
  );
}
