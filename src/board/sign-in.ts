import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { markup, page } from "./html.js";
import type { BoardViewer } from "./server.js";

/**
 * Sign in with GitHub for the board the app serves: GitHub's OAuth web flow with the app's client id
 * and secret. The `state` sent to GitHub is also kept in a short-lived cookie and must come back
 * equal; the session is a cookie sealed with AES-256-GCM (so it is signed, and the user's token in
 * it is unreadable), HttpOnly, SameSite=Lax, Secure on https. Sign-out is a POST (a cross-site page
 * cannot sign anyone out: a SameSite=Lax cookie is not sent with its POST).
 */

export interface SignInOptions {
  clientId: string;
  clientSecret: string;
  /** The secret the session cookies are sealed with (derived from the app's secrets). Never logged. */
  sessionSecret: string;
  /** Where the board is served ("/consort"). */
  base: string;
  /** https://github.com, or a test double. */
  githubUrl: string;
  /** https://api.github.com, or a test double. */
  apiUrl: string;
  /** The callback URL registered on the app; omitted: GitHub uses the app's first callback URL. */
  callbackUrl?: string;
  /** Mark cookies Secure (the board is served over https). */
  secure: boolean;
  /** Session lifetime; default 8 hours (GitHub App user tokens live 8 hours). */
  sessionSeconds?: number;
  clock?: () => Date;
}

const STATE_COOKIE = "consort_oauth_state";
const SESSION_COOKIE = "consort_session";

/** What the sealed session cookie holds. */
const Session = z.object({ login: z.string().min(1), token: z.string().min(1), expires: z.number() }).strict();

/** GitHub's answer to the code exchange (documented form, Accept: application/json). */
const TokenAnswer = z.union([
  z.object({ access_token: z.string().min(1), token_type: z.string() }).loose(),
  z.object({ error: z.string(), error_description: z.string().optional() }).loose(),
]);

const GitHubUser = z.object({ login: z.string().min(1) }).loose();

function cookies(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const index = part.indexOf("=");
    if (index > 0) out[part.slice(0, index).trim()] = part.slice(index + 1).trim();
  }
  return out;
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Where sign-in returns to: only a path on this board, never another site (no open redirect). */
export function returnPath(base: string, next: string | null): string {
  return next && next.startsWith(`${base}/`) && !/[\\\r\n]/.test(next) ? next : `${base}/`;
}

/** The page at /sign-in: the button, and what to do when the app does not have the board's callback URL. */
function signInPage(base: string, next: string, callback: string): string {
  return page(
    { title: "Sign in · Consort board", base, viewer: null, signOut: false },
    markup`<h2 class="title">Sign in</h2>
<p>The board shows the tracks of the repositories your GitHub account can read through the app's installations.</p>
<p><a id="sign-in" href="${base}/login?next=${encodeURIComponent(next)}">Sign in with GitHub</a></p>
${callbackHelp(callback)}`,
  );
}

/** What a person does when GitHub refuses the board's callback URL (it is not registered on the app). */
function callbackHelp(callback: string) {
  return markup`<section aria-labelledby="callback-help"><h2 id="callback-help">If GitHub says "The redirect_uri is not associated with this application"</h2>
<p>The app does not have this board's callback URL. On GitHub open the app's settings (<strong>Settings → Developer settings → GitHub Apps → the app → Edit</strong>), add <code id="callback-url">${callback}</code> under <strong>Callback URL</strong>, save, and sign in again.</p>
<p class="empty">If that is not the board's public address, set <code>CONSORT_BOARD_URL</code> to it (the callback is <code>&lt;CONSORT_BOARD_URL&gt;/consort/callback</code>) and restart the app.</p></section>`;
}

export interface SignIn {
  /** The signed-in viewer, or undefined after answering (sent to sign in, or 401 for the event stream). */
  viewer(req: IncomingMessage, res: ServerResponse): Promise<BoardViewer | undefined>;
  /** Answers /login, /callback and /logout under the base; false for anything else. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

export function gitHubSignIn(options: SignInOptions): SignIn {
  const clock = options.clock ?? (() => new Date());
  const lifetime = options.sessionSeconds ?? 8 * 3600;
  const key = createHash("sha256").update(`consort-board-session\0${options.sessionSecret}`).digest();
  const attributes = (maxAge: number) =>
    `Path=${options.base || "/"}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${options.secure ? "; Secure" : ""}`;

  function seal(value: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  }

  function open(text: string | undefined): unknown {
    if (!text) return undefined;
    try {
      const raw = Buffer.from(text, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8"));
    } catch {
      return undefined;
    }
  }

  function session(req: IncomingMessage): z.infer<typeof Session> | undefined {
    const parsed = Session.safeParse(open(cookies(req)[SESSION_COOKIE]));
    if (!parsed.success || parsed.data.expires <= clock().getTime()) return undefined;
    return parsed.data;
  }

  function redirect(res: ServerResponse, location: string, setCookies: string[] = []): void {
    res.writeHead(302, { location, "set-cookie": setCookies, "cache-control": "no-store" });
    res.end();
  }

  function refuse(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end(`${message}\n`);
  }

  const safeNext = (next: string | null) => returnPath(options.base, next);
  /** The callback URL GitHub must have: the configured one, else this request's own address. */
  const callbackOf = (req: IncomingMessage) =>
    options.callbackUrl ??
    `${options.secure ? "https" : "http"}://${req.headers.host ?? "localhost"}${options.base}/callback`;
  const html = (res: ServerResponse, status: number, body: string, setCookies: string[] = []) => {
    res.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      ...(setCookies.length ? { "set-cookie": setCookies } : {}),
    });
    res.end(body);
  };

  async function exchange(code: string): Promise<string> {
    const response = await fetch(`${options.githubUrl}/login/oauth/access_token`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({
        client_id: options.clientId,
        client_secret: options.clientSecret,
        code,
        ...(options.callbackUrl ? { redirect_uri: options.callbackUrl } : {}),
      }),
    });
    const answer = TokenAnswer.safeParse(await response.json().catch(() => null));
    if (!response.ok || !answer.success) throw new Error(`GitHub answered the code exchange with ${response.status}`);
    if ("error" in answer.data)
      throw new Error(`GitHub refused the sign-in: ${answer.data.error_description ?? answer.data.error}`);
    return answer.data.access_token;
  }

  async function loginOf(token: string): Promise<string> {
    const response = await fetch(`${options.apiUrl}/user`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
      },
    });
    const user = GitHubUser.safeParse(await response.json().catch(() => null));
    if (!response.ok || !user.success) throw new Error(`GitHub answered GET /user with ${response.status}`);
    return user.data.login;
  }

  return {
    async viewer(req, res) {
      const current = session(req);
      if (current) return { login: current.login, token: current.token };
      const url = new URL(req.url ?? "/", "http://board.invalid");
      if (url.pathname === `${options.base}/events`) {
        refuse(res, 401, "Sign in first.");
        return undefined;
      }
      redirect(res, `${options.base}/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`);
      return undefined;
    },

    async handle(req, res) {
      const url = new URL(req.url ?? "/", "http://board.invalid");
      if (url.pathname === `${options.base}/sign-in` && req.method === "GET") {
        html(res, 200, signInPage(options.base, safeNext(url.searchParams.get("next")), callbackOf(req)));
        return true;
      }
      // GitHub sends the browser back with an error instead of a code (its documented authorization errors).
      if (url.pathname === `${options.base}/callback` && req.method === "GET" && url.searchParams.has("error")) {
        const error = url.searchParams.get("error");
        const said = url.searchParams.get("error_description") ?? error ?? "";
        const body =
          error === "redirect_uri_mismatch"
            ? callbackHelp(callbackOf(req))
            : markup`<p><a href="${options.base}/sign-in">Sign in again</a>.</p>`;
        html(
          res,
          400,
          page(
            { title: "Sign-in refused · Consort board", base: options.base, viewer: null, signOut: false },
            markup`<h2 class="title">GitHub refused the sign-in</h2><p id="github-said">GitHub said: ${said}</p>${body}`,
          ),
          [`${STATE_COOKIE}=; ${attributes(0)}`],
        );
        return true;
      }
      if (url.pathname === `${options.base}/login` && req.method === "GET") {
        const state = randomBytes(32).toString("base64url");
        const next = safeNext(url.searchParams.get("next"));
        const authorize = new URL(`${options.githubUrl}/login/oauth/authorize`);
        authorize.searchParams.set("client_id", options.clientId);
        authorize.searchParams.set("state", state);
        authorize.searchParams.set("allow_signup", "false");
        if (options.callbackUrl) authorize.searchParams.set("redirect_uri", options.callbackUrl);
        redirect(res, authorize.toString(), [
          `${STATE_COOKIE}=${seal({ state, next, expires: clock().getTime() + 600_000 })}; ${attributes(600)}`,
        ]);
        return true;
      }
      if (url.pathname === `${options.base}/callback` && req.method === "GET") {
        const kept = z
          .object({ state: z.string(), next: z.string(), expires: z.number() })
          .safeParse(open(cookies(req)[STATE_COOKIE]));
        const state = url.searchParams.get("state") ?? "";
        const code = url.searchParams.get("code") ?? "";
        if (!kept.success || kept.data.expires <= clock().getTime() || !equal(kept.data.state, state) || !code) {
          refuse(
            res,
            400,
            `The sign-in could not be checked (its state is missing, expired or not this browser's). Start again at ${options.base}/login.`,
          );
          return true;
        }
        try {
          const token = await exchange(code);
          const login = await loginOf(token);
          const sealed = seal({ login, token, expires: clock().getTime() + lifetime * 1000 });
          redirect(res, safeNext(kept.data.next), [
            `${SESSION_COOKIE}=${sealed}; ${attributes(lifetime)}`,
            `${STATE_COOKIE}=; ${attributes(0)}`,
          ]);
        } catch (error) {
          refuse(
            res,
            502,
            `${error instanceof Error ? error.message : String(error)}. Start again at ${options.base}/login.`,
          );
        }
        return true;
      }
      if (url.pathname === `${options.base}/logout`) {
        if (req.method !== "POST") {
          res.writeHead(405, { allow: "POST", "content-type": "text/plain; charset=utf-8" });
          res.end("Sign out with the button on the board (a POST).\n");
          return true;
        }
        redirect(res, `${options.base}/signed-out`, [`${SESSION_COOKIE}=; ${attributes(0)}`]);
        return true;
      }
      if (url.pathname === `${options.base}/signed-out` && req.method === "GET") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
        res.end(
          `<!doctype html><title>Signed out</title><p>Signed out. <a href="${options.base}/login">Sign in again</a>.</p>`,
        );
        return true;
      }
      return false;
    },
  };
}
