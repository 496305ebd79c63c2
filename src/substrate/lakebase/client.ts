import { z } from "zod";
import { SubstrateError } from "../provider.js";
import { consortCommand } from "../../contracts/command.js";

/**
 * A small client of the Databricks Postgres (Lakebase) REST API, exactly as in
 * shared/reference/lakebase-api.md: bearer auth (a token, or OAuth M2M), retries decided by what
 * an answer means (see `retryable`) with Retry-After or jittered backoff up to a deadline,
 * long-running operations polled soon and then about once a second (see `pollDelay`), and every
 * error_code turned into a message that says what to do.
 */

export type LakebaseAuth = { token: string } | { clientId: string; clientSecret: string };

export interface LakebaseClientOptions {
  /**
   * Workspace host, e.g. `dbc-1234.cloud.databricks.com`, or a URL with scheme and port
   * (`http://127.0.0.1:8080`, a proxy or a private endpoint).
   */
  host: string;
  auth: LakebaseAuth;
  /** The environment variables the credentials came from, named in the hint of a 401. */
  authEnv?: string;
  /** How long to wait for one long-running operation (or an endpoint's host) before giving up. */
  operationTimeoutMs?: number;
  /** How long one request is retried (rate limits, 500/503, dropped connections) before giving up. */
  retryDeadlineMs?: number;
  /** Injectable for tests: the jitter of retry backoff, in [0, 1). */
  random?: () => number;
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
  NOT_FOUND: `check database.lakebase.host and project, and the branch id (\`${consortCommand("db list")}\`)`,
  RESOURCE_DOES_NOT_EXIST: `check database.lakebase.host and project, and the branch id (\`${consortCommand("db list")}\`)`,
  ALREADY_EXISTS: `the branch already exists: reuse it, or delete it first with \`${consortCommand("db delete")}\``,
  RESOURCE_ALREADY_EXISTS: `the branch already exists: reuse it, or delete it first with \`${consortCommand("db delete")}\``,
  ABORTED: "a concurrent change to the same branch conflicted: run the command again",
  RESOURCE_EXHAUSTED: `the project is at a limit (about 10 unarchived branches): delete throwaway branches (\`${consortCommand("db list")}\`) or wait for cycles to finish`,
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
  [/branch id not found/i, `the branch does not exist: create it with \`${consortCommand("db create")}\``],
];

export class LakebaseError extends SubstrateError {
  constructor(
    message: string,
    hint: string,
    code: string,
    readonly status?: number,
    /** True when the request may have reached the service but its answer was lost. */
    readonly answerLost = false,
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

/** Codes that say retrying the same request cannot help: a quota lifts only when something is deleted. */
const NEVER_RETRIED = new Set(["RESOURCE_EXHAUSTED"]);
/** Methods that may be sent again when the connection dropped: the service applies them at most once in effect. */
const IDEMPOTENT = new Set(["GET", "HEAD", "DELETE"]);

/**
 * Whether an answer is worth the same request again, by its meaning: rate limits (429 without a
 * quota code), 500 and 503 are; quotas (`RESOURCE_EXHAUSTED`), auth, validation, conflicts and
 * missing resources are not.
 */
function retryable(status: number, errorCode: string | undefined): boolean {
  if (errorCode && NEVER_RETRIED.has(errorCode)) return false;
  return status === 429 || status === 500 || status === 503;
}

/**
 * How long to wait before the next poll of something that has been running for `elapsedMs`:
 * 150 ms at first, 250 ms by 10 s (so an operation of 0.3–10 s is noticed within 250 ms of its
 * end), then growing to 1 s (so a slow one costs one request a second).
 */
export function pollDelay(elapsedMs: number): number {
  if (elapsedMs < 10_000) return Math.round(Math.min(250, Math.max(150, elapsedMs / 40)));
  return Math.round(Math.min(1000, 250 + (elapsedMs - 10_000) / 10));
}

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
  private readonly retryDeadlineMs: number;
  private readonly random: () => number;
  private oauth: { token: string; expiresAt: number } | undefined;

  constructor(private readonly options: LakebaseClientOptions) {
    this.origin = lakebaseOrigin(options.host);
    this.base = `${this.origin}/api/2.0/postgres/`;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? ((...args) => fetch(...args));
    this.operationTimeoutMs = options.operationTimeoutMs ?? 120_000;
    this.retryDeadlineMs = options.retryDeadlineMs ?? 60_000;
    this.random = options.random ?? Math.random;
  }

  get clock(): { sleep: (ms: number) => Promise<void>; now: () => number } {
    return { sleep: this.sleep, now: this.now };
  }

  /**
   * One call under /api/2.0/postgres/, retried while `retryable` says so (and, for idempotent
   * methods, when the connection drops) until the retry deadline. Resolves to the parsed JSON body.
   */
  async request<T = unknown>(
    method: string,
    path: string,
    options: { query?: Record<string, string | undefined>; body?: unknown; action: string },
  ): Promise<T> {
    const url = new URL(path.replace(/^\/+/, ""), this.base);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const deadline = this.now() + this.retryDeadlineMs;
    let delay = 1000;
    // Full wait when the service says how long (Retry-After); otherwise half to all of `delay`.
    const backoff = async (wait: number | undefined, why: string): Promise<boolean> => {
      const ms = wait ?? Math.round(delay / 2 + (this.random() * delay) / 2);
      if (this.now() + ms > deadline) return false;
      this.options.onProgress?.(`${why} to ${options.action}; retrying in ${(ms / 1000).toFixed(1)} s`);
      await this.sleep(ms);
      delay = Math.min(delay * 2, 30_000);
      return true;
    };
    for (;;) {
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
        const reason = networkReason(error);
        if (IDEMPOTENT.has(method) && (await backoff(undefined, `the connection failed (${reason})`))) continue;
        throw new LakebaseError(
          `Lakebase ${options.action} failed: cannot reach ${this.origin} (${reason})`,
          "check database.lakebase.host and the network",
          "SERVER_UNREACHABLE",
          undefined,
          !IDEMPOTENT.has(method),
        );
      }
      const text = await response.text().catch(() => undefined);
      if (text === undefined) {
        // The answer was cut off: as a dropped connection.
        if (IDEMPOTENT.has(method) && (await backoff(undefined, "the answer was cut off"))) continue;
        throw new LakebaseError(
          `Lakebase ${options.action} failed: the answer from ${this.origin} was cut off`,
          "check the network, then run the command again",
          "SERVER_UNREACHABLE",
          undefined,
          !IDEMPOTENT.has(method),
        );
      }
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        // keep the text for the message
      }
      if (response.ok) return body as T;
      const code = LakebaseErrorBody.safeParse(body).data?.error_code;
      if (
        retryable(response.status, code) &&
        (await backoff(
          retryAfterMs(response.headers.get("retry-after"), this.now()),
          `Lakebase answered ${code ?? `HTTP ${response.status}`}`,
        ))
      )
        continue;
      const error = lakebaseError(response.status, body, options.action);
      if (error.code === "UNAUTHENTICATED" && this.options.authEnv) {
        throw new LakebaseError(
          error.message.split("\n")[0]!,
          `set valid credentials in ${this.options.authEnv} for ${this.origin} (the workspace refused these)`,
          error.code,
          error.status,
        );
      }
      throw error;
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
    const started = this.now();
    const deadline = started + this.operationTimeoutMs;
    while (!op.done) {
      if (this.now() >= deadline) {
        throw new LakebaseError(
          `Lakebase ${action} did not finish within ${Math.round(this.operationTimeoutMs / 1000)} s (operation ${op.name})`,
          "the service is slow: run the command again (it resumes), or raise database.lakebase.operationTimeoutSeconds",
          "OPERATION_TIMEOUT",
        );
      }
      this.options.onProgress?.(`waiting for Lakebase to finish ${action}`);
      await this.sleep(Math.min(pollDelay(this.now() - started), Math.max(0, deadline - this.now())));
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
        `check ${this.options.authEnv ?? "DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET"} (a service principal's OAuth secret)`,
        "UNAUTHENTICATED",
      );
    }
    this.oauth = { token: body.access_token, expiresAt: this.now() + (body.expires_in ?? 3600) * 1000 };
    return body.access_token;
  }
}

function networkReason(error: unknown): string {
  const e = error as { message?: string; cause?: { code?: string; message?: string }; code?: string };
  return [e.cause?.code ?? e.code, e.cause?.message ?? e.message].filter(Boolean).join(": ") || String(error);
}

/**
 * The origin requests go to: `database.lakebase.host` as a bare host (https), or a URL with its
 * scheme and port (for a proxy, a private endpoint or a test server).
 */
function lakebaseOrigin(host: string): string {
  const raw = host.trim().replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`);
  } catch {
    url = new URL("invalid://");
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || !url.hostname) {
    throw new LakebaseError(
      `database.lakebase.host "${host}" is neither a host nor an http(s) URL`,
      "set it to the workspace host (dbc-1234.cloud.databricks.com) or a URL such as https://proxy.internal:8443",
      "CONFIG_INVALID",
    );
  }
  return url.origin;
}
