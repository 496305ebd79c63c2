import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppEnv } from "../config/env.js";
import type { GitHubClient } from "../github/client.js";
import { appBoardSource, type BoardChanges } from "./app-source.js";
import type { DeadLetter } from "./pages.js";
import { boardHandler } from "./server.js";
import { gitHubSignIn } from "./sign-in.js";

/**
 * The board under /consort in the app's own HTTP server (Probot's `addHandler`): GitHub sign-in in
 * front, the app's installations behind. Without the app's OAuth client id and secret (or the state
 * key) the board answers 503 saying what to set: it never shows anything unsigned-in.
 */

/** Where the app serves the board; its sign-in callback is `${BOARD_BASE}/callback` (app.yml registers it). */
export const BOARD_BASE = "/consort";

export interface BoardMount {
  env: AppEnv;
  changes: BoardChanges;
  installationClient(installationId: number): Promise<GitHubClient>;
  githubUrl?: string;
  apiUrl?: string;
  log?: { warn(message: string): void };
  pollMs?: number;
  /** The app's dead letters (its delivery queue), shown to whoever may read their repository. */
  deadLetters?: () => Promise<DeadLetter[]>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export function boardRoutes(mount: BoardMount): Handler {
  const { env } = mount;
  const inBoard = (req: IncomingMessage) => {
    const path = new URL(req.url ?? "/", "http://board.invalid").pathname;
    return path === BOARD_BASE || path.startsWith(`${BOARD_BASE}/`);
  };
  if (!env.GITHUB_CLIENT_ID || !env.GITHUB_CLIENT_SECRET || !env.CONSORT_STATE_KEY) {
    const missing = [
      !env.GITHUB_CLIENT_ID && "GITHUB_CLIENT_ID",
      !env.GITHUB_CLIENT_SECRET && "GITHUB_CLIENT_SECRET",
      !env.CONSORT_STATE_KEY && "CONSORT_STATE_KEY",
    ].filter(Boolean);
    return async (req, res) => {
      if (!inBoard(req)) return false;
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8" });
      res.end(
        `The Consort board is not set up: set ${missing.join(", ")} (the app's OAuth client id and secret from its settings page, and the state key), then restart.\n`,
      );
      return true;
    };
  }
  const apiUrl = mount.apiUrl ?? "https://api.github.com";
  const boardUrl = env.CONSORT_BOARD_URL?.replace(/\/+$/, "");
  const signIn = gitHubSignIn({
    clientId: env.GITHUB_CLIENT_ID,
    clientSecret: env.GITHUB_CLIENT_SECRET,
    // One secret per deployment, never stored: the session key changes when either secret does.
    sessionSecret: createHash("sha256").update(`${env.GITHUB_CLIENT_SECRET}\0${env.CONSORT_STATE_KEY}`).digest("hex"),
    base: BOARD_BASE,
    githubUrl: mount.githubUrl ?? "https://github.com",
    apiUrl,
    ...(boardUrl ? { callbackUrl: `${boardUrl}${BOARD_BASE}/callback` } : {}),
    secure: boardUrl?.startsWith("https:") ?? env.NODE_ENV === "production",
  });
  const board = boardHandler({
    base: BOARD_BASE,
    signOut: true,
    viewer: (req, res) => signIn.viewer(req, res),
    source: appBoardSource({
      apiUrl,
      stateKey: env.CONSORT_STATE_KEY,
      previousStateKeys: env.CONSORT_STATE_KEYS_PREVIOUS,
      ...(env.APP_ID ? { appId: Number(env.APP_ID) } : {}),
      installationClient: mount.installationClient,
      changes: mount.changes,
      ...(mount.pollMs ? { pollMs: mount.pollMs } : {}),
      ...(mount.log ? { log: mount.log } : {}),
      ...(mount.deadLetters ? { deadLetters: mount.deadLetters } : {}),
    }),
  });
  return async (req, res) => {
    if (!inBoard(req)) return false;
    if (await signIn.handle(req, res)) return true;
    return board(req, res);
  };
}
