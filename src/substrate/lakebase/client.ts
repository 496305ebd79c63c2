import { z } from "zod";
import { SubstrateError } from "../provider.js";

/**
 * A small client of the Databricks Postgres (Lakebase) REST API, exactly as in
 * shared/reference/lakebase-api.md: bearer auth (a token, or OAuth M2M), 429/500/503 retried with
 * backoff honouring Retry-After, long-running operations polled with backoff until a deadline,
 * and every error_code turned into a message that says what to do.
 */

export type LakebaseAuth = { token: string } | { clientId: string; clientSecret: string };

export interface LakebaseClientOptions {
  /** Workspace host, e.g. `dbc-1234.cloud.databricks.com` (a scheme is tolerated). */
  host: string;
  auth: LakebaseAuth;
  /** How long to wait for one long-running operation (or an endpoint's host) before giving up. */
  operationTimeoutMs?: number;
  /** Retries of one request answered 429, 500 or 503. */
  maxRetries?: number;
  onProgress?: (message: string) => void;
  /** Injectable for tests: waiting and the clock. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  fetch?: typeof fetch;
}

const LakebaseErrorBody = z.object({
  error_code: z.string().optional(),
  message: z.string().optional(),
  details: z.array(z.unknown()).optional(),
});

const Operation = z.object({
  name: z.string().min(1),
  done: z.boolean().optional(),
  metadata: z.unknown().optional(),
  error: z
    .object({
      error_code: z.string().optional(),
      code: z.union([z.string(), z.number()]).optional(),
      message: z.string().optional(),
    })
    .passthrough()
    .optional(),
  response: z.unknown().optional(),
});
type Operation = z.infer<typeof Operation>;

/** What to do about each error_code the service answers (reference: Errors). */
const HINTS: Record<string, string> = {
  INVALID_PARAMETER_VALUE:
    "check the branch id (1–63 lowercase letters, digits, hyphens) and database.lakebase settings",
  BAD_REQUEST: "check the branch id and database.lakebase settings in .github/consort.yml",
  INVALID_STATE: "the branch is busy (still starting, resetting or archived): wait a minute and run the command again",
  UNAUTHENTICATED: "set a valid token in DATABRICKS_TOKEN (or the OAuth client id and secret) for this workspace",
  PERMISSION_DENIED: "give the identity CAN_MANAGE on the Lakebase project, or use one that has it",
  NOT_FOUND: "check database.lakebase.host and project, and the branch id (`consort db list`)",
  RESOURCE_DOES_NOT_EXIST: "check database.lakebase.host and project, and the branch id (`consort db list`)",
  ALREADY_EXISTS: "the branch already exists: reuse it, or delete it first with `consort db delete`",
  RESOURCE_ALREADY_EXISTS: "the branch already exists: reuse it, or delete it first with `consort db delete`",
  ABORTED: "a concurrent change to the same branch conflicted: run the command again",
  RESOURCE_EXHAUSTED:
    "the project is at a limit (about 10 unarchived branches): delete throwaway branches (`consort db list`) or wait for cycles to finish",
  REQUEST_LIMIT_EXCEEDED: "Lakebase is rate limiting this identity: wait a minute and run the command again",
  INTERNAL_ERROR: "Lakebase failed internally: run the command again; if it persists, check the Databricks status page",
  TEMPORARILY_UNAVAILABLE: "Lakebase is temporarily unavailable: run the command again in a few minutes",
};

/** Messages the live service sends, with the specific thing to do. */
const MESSAGE_HINTS: Array<[RegExp, string]> = [
  [/expiration time exceeds the maximum/i, "use a ttl of at most 30 days"],
  [
    /expiration date cannot have child branches/i,
    "fork from a branch without an expiry (a track), not from a throwaway branch",
  ],
  [/branch id not found/i, "the branch does not exist: create it with `consort db create`"],
];

export class LakebaseError extends SubstrateError {
  constructor(
    message: string,
    hint: string,
    code: string,
    readonly status?: number,
  ) {
    super(message, hint, code);
    this.name = "LakebaseError";
  }
}

function lakebaseError(status: number | undefined, body: unknown, action: string): LakebaseError {
  const parsed = LakebaseErrorBody.safeParse(body);
  const errorCode = (parsed.success && parsed.data.error_code) || (status ? `HTTP_${status}` : "LAKEBASE_ERROR");
  const message =
    (parsed.success && parsed.data.message) || (typeof body === "string" && body ? body.slice(0, 300) : "no message");
  const hint =
    MESSAGE_HINTS.find(([re]) => re.test(message))?.[1] ??
    HINTS[errorCode] ??
    "see the service's message; run the command again once it is fixed";
  const what = [status ? `HTTP ${status}` : undefined, errorCode].filter(Boolean).join(", ");
  return new LakebaseError(`Lakebase ${action} failed (${what}): ${message}`, hint, errorCode, status);
}

const RETRIED = new Set([429, 500, 503]);

/** Seconds or an HTTP date, as Retry-After allows; undefined when absent or unreadable. */
function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

export class LakebaseClient {
  readonly base: string;
  private readonly origin: string;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly fetch: typeof fetch;
  readonly operationTimeoutMs: number;
  private readonly maxRetries: number;
  private oauth: { token: string; expiresAt: number } | undefined;

  constructor(private readonly options: LakebaseClientOptions) {
    const host = options.host.replace(/^https?:\/\//, "").replace(/\/+$/, "");
    this.origin = `https://${host}`;
    this.base = `${this.origin}/api/2.0/postgres/`;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? ((...args) => fetch(...args));
    this.operationTimeoutMs = options.operationTimeoutMs ?? 120_000;
    this.maxRetries = options.maxRetries ?? 6;
  }

  get clock(): { sleep: (ms: number) => Promise<void>; now: () => number } {
    return { sleep: this.sleep, now: this.now };
  }

  /** One call under /api/2.0/postgres/, retried on 429/500/503. Resolves to the parsed JSON body. */
  async request<T = unknown>(
    method: string,
    path: string,
    options: { query?: Record<string, string | undefined>; body?: unknown; action: string },
  ): Promise<T> {
    const url = new URL(path.replace(/^\/+/, ""), this.base);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    let delay = 1000;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${await this.token()}`,
            accept: "application/json",
            ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
          },
          ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        });
      } catch (error) {
        if (error instanceof SubstrateError) throw error;
        throw new LakebaseError(
          `Lakebase ${options.action} failed: cannot reach ${this.origin} (${(error as Error).message})`,
          "check database.lakebase.host and the network",
          "SERVER_UNREACHABLE",
        );
      }
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        // keep the text for the message
      }
      if (response.ok) return body as T;
      if (RETRIED.has(response.status) && attempt < this.maxRetries) {
        const wait = retryAfterMs(response.headers.get("retry-after"), this.now()) ?? delay;
        const code = LakebaseErrorBody.safeParse(body).data?.error_code ?? `HTTP ${response.status}`;
        this.options.onProgress?.(
          `Lakebase answered ${code} to ${options.action}; retrying in ${Math.round(wait / 1000)} s`,
        );
        await this.sleep(wait);
        delay = Math.min(delay * 2, 30_000);
        continue;
      }
      throw lakebaseError(response.status, body, options.action);
    }
  }

  /** Poll a long-running operation with backoff until it is done; its `response` on success. */
  async waitForOperation(operation: unknown, action: string): Promise<unknown> {
    const parsed = Operation.safeParse(operation);
    if (!parsed.success)
      throw new LakebaseError(
        `Lakebase ${action}: the answer is not an operation`,
        "report this: the API answered an unexpected shape",
        "BAD_RESPONSE",
      );
    let op = parsed.data;
    const deadline = this.now() + this.operationTimeoutMs;
    let delay = 500;
    while (!op.done) {
      if (this.now() >= deadline) {
        throw new LakebaseError(
          `Lakebase ${action} did not finish within ${Math.round(this.operationTimeoutMs / 1000)} s (operation ${op.name})`,
          "the service is slow: run the command again (it resumes), or raise database.lakebase.operationTimeoutSeconds",
          "OPERATION_TIMEOUT",
        );
      }
      this.options.onProgress?.(`waiting for Lakebase to finish ${action}`);
      await this.sleep(Math.min(delay, Math.max(0, deadline - this.now())));
      delay = Math.min(delay * 2, 10_000);
      // The operation's name is opaque: poll exactly the path it gives.
      op = Operation.parse(await this.request("GET", op.name, { action: `polling ${action}` }));
    }
    if (op.error) {
      const code = op.error.error_code ?? (typeof op.error.code === "string" ? op.error.code : undefined);
      throw lakebaseError(
        undefined,
        { error_code: code, message: op.error.message ?? JSON.stringify(op.error) },
        action,
      );
    }
    return op.response;
  }

  private async token(): Promise<string> {
    const auth = this.options.auth;
    if ("token" in auth) return auth.token;
    if (this.oauth && this.oauth.expiresAt > this.now() + 60_000) return this.oauth.token;
    const response = await this.fetch(`${this.origin}/oidc/v1/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${auth.clientId}:${auth.clientSecret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials&scope=all-apis",
    }).catch((error: unknown) => {
      throw new LakebaseError(
        `cannot reach ${this.origin} for an OAuth token (${(error as Error).message})`,
        "check database.lakebase.host and the network",
        "SERVER_UNREACHABLE",
      );
    });
    const body = (await response.json().catch(() => ({}))) as { access_token?: string; expires_in?: number };
    if (!response.ok || !body.access_token) {
      throw new LakebaseError(
        `the workspace refused the OAuth client credentials (HTTP ${response.status})`,
        "check DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET (a service principal's OAuth secret)",
        "UNAUTHENTICATED",
      );
    }
    this.oauth = { token: body.access_token, expiresAt: this.now() + (body.expires_in ?? 3600) * 1000 };
    return body.access_token;
  }
}
