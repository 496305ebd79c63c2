import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { trackEvidence } from "./evidence.js";
import { ICON_SVG, LIVE_SCRIPT } from "./html.js";
import { boardPage, evidencePage, trackPage, type DeadLetter, type RenderContext } from "./pages.js";
import type { BoardTrack, TrackDetails } from "./view.js";

/**
 * The board as an HTTP handler, shared by `consort board` (its own server on 127.0.0.1) and the app
 * (a Probot handler under /consort). It answers GET for its pages and the server-sent events that
 * keep them live; the source decides which tracks the viewer may see, and a track outside them is
 * the same 404 as a track that does not exist.
 */

/** Where the tracks come from: the app's installations, or a local checkout. */
export interface BoardSource {
  /**
   * Every track the viewer may see (the app: only repositories the viewer's own token can read),
   * and what could not be read among them, with the reason (shown on the board, never hidden).
   */
  tracks(viewer: BoardViewer): Promise<BoardTracks>;
  /** What a track's page shows beyond the snapshot (its commits, consort/schema), read for that page only. */
  details?(track: BoardTrack, viewer: BoardViewer): Promise<TrackDetails>;
  /** Call `listener` whenever a track may have changed; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}

interface BoardTracks {
  tracks: BoardTrack[];
  problems: string[];
  /** Deliveries the app will not try again, of repositories the viewer may see (the app only). */
  deadLetters?: DeadLetter[];
}

export interface BoardViewer {
  /** The GitHub login, or null where nobody signs in (`consort board`). */
  login: string | null;
  /** The viewer's own OAuth token (the app), for the source to ask GitHub what it may read. Never logged. */
  token?: string;
}

export interface BoardHandlerOptions {
  /** The path the board is served under: "" (`consort board`) or "/consort" (the app). */
  base: string;
  source: BoardSource;
  /** Who asks; undefined when the request was answered already (e.g. sent to sign in). */
  viewer: (req: IncomingMessage, res: ServerResponse) => Promise<BoardViewer | undefined>;
  /** Show the sign-out link (the app). */
  signOut: boolean;
  clock?: () => Date;
  /** How often an open event stream is sent a comment, so proxies keep it open; default 15 s. */
  heartbeatMs?: number;
}

/** The live script's hash: the Content-Security-Policy allows that script and no other. */
const LIVE_SCRIPT_HASH = createHash("sha256").update(LIVE_SCRIPT).digest("base64");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; script-src 'sha256-${LIVE_SCRIPT_HASH}'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
};

function send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, ...extra });
  res.end(body);
}

const NOT_FOUND = "<!doctype html><title>Not found</title><p>Not found.</p>";

/** The part of `pathname` under `base`, or undefined when the request is not the board's. */
function underBase(pathname: string, base: string): string | undefined {
  if (base === "") return pathname;
  if (pathname === base) return "/";
  return pathname.startsWith(`${base}/`) ? pathname.slice(base.length) : undefined;
}

type Route =
  | { page: "board" }
  | { page: "events" }
  | { page: "track" | "evidence" | "evidence.json"; repository: string; trackId: string };

function routeOf(path: string): Route | undefined {
  if (path === "/") return { page: "board" };
  if (path === "/events") return { page: "events" };
  const match = /^\/t\/([^/]+)\/([^/]+)\/([^/]+)(\/evidence(?:\.json)?)?$/.exec(path);
  if (!match) return undefined;
  try {
    const [owner, name, trackId] = [match[1]!, match[2]!, match[3]!].map(decodeURIComponent);
    const page = match[4] === "/evidence" ? "evidence" : match[4] === "/evidence.json" ? "evidence.json" : "track";
    return { page, repository: `${owner}/${name}`, trackId: trackId! };
  } catch {
    return undefined;
  }
}

/** A Node request handler; resolves true when it answered (Probot's `addHandler` contract). */
export function boardHandler(
  options: BoardHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const clock = options.clock ?? (() => new Date());
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  return async (req, res) => {
    const url = new URL(req.url ?? "/", "http://board.invalid");
    const path = underBase(url.pathname, options.base);
    if (path === undefined) return false;
    // The icon shows nothing of any track: it is served before anyone signs in (no 404 in the console).
    if (path === "/favicon.svg" || path === "/favicon.ico") {
      send(res, 200, "image/svg+xml", ICON_SVG, { "cache-control": "public, max-age=86400" });
      return true;
    }
    const route = routeOf(path);
    if (!route) {
      send(res, 404, "text/html; charset=utf-8", NOT_FOUND);
      return true;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, "text/plain; charset=utf-8", "Only GET.\n", { allow: "GET, HEAD" });
      return true;
    }
    const viewer = await options.viewer(req, res);
    if (!viewer) return true;
    if (route.page === "events") {
      streamChanges(req, res, options.source, heartbeatMs);
      return true;
    }
    const context: RenderContext = {
      base: options.base,
      viewer: viewer.login,
      signOut: options.signOut,
      now: clock(),
      events: `${options.base}/events`,
    };
    let tracks: BoardTrack[];
    let problems: string[];
    let deadLetters: DeadLetter[] | undefined;
    try {
      ({ tracks, problems, deadLetters } = await options.source.tracks(viewer));
    } catch (error) {
      // Fail closed and say why: a board that cannot read its tracks shows none.
      const reason = error instanceof Error ? error.message : String(error);
      send(res, 502, "text/plain; charset=utf-8", `The board could not read the tracks: ${reason}\n`);
      return true;
    }
    if (route.page === "board") {
      send(
        res,
        200,
        "text/html; charset=utf-8",
        boardPage(tracks, context, { mine: url.searchParams.get("mine") === "1", problems, deadLetters }),
      );
      return true;
    }
    const track = tracks.find(
      (t) =>
        t.repository.toLowerCase() === route.repository.toLowerCase() && t.snapshot.context.trackId === route.trackId,
    );
    if (!track) {
      send(res, 404, "text/html; charset=utf-8", NOT_FOUND);
      return true;
    }
    if (route.page === "track") {
      const details = options.source.details
        ? await options.source.details(track, viewer).catch((error: unknown): TrackDetails => ({
            problems: [`The track's commits and schema diff could not be read: ${(error as Error).message}`],
          }))
        : { problems: [] };
      send(res, 200, "text/html; charset=utf-8", trackPage(track, context, details));
    } else if (route.page === "evidence")
      send(res, 200, "text/html; charset=utf-8", evidencePage(trackEvidence(track), { ...context, events: undefined }));
    else
      send(res, 200, "application/json; charset=utf-8", `${JSON.stringify(trackEvidence(track), null, 2)}\n`, {
        "content-disposition": `attachment; filename="${track.snapshot.context.trackId.replace(/[^a-z0-9._-]/g, "-")}.evidence.json"`,
      });
    return true;
  };
}

/** Server-sent events: one `change` event per change, no data (the page fetches itself again, access re-checked). */
function streamChanges(req: IncomingMessage, res: ServerResponse, source: BoardSource, heartbeatMs: number): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "content-type": "text/event-stream; charset=utf-8",
    connection: "keep-alive",
  });
  res.write("retry: 1000\n: connected\n\n");
  const unsubscribe = source.subscribe(() => res.write("event: change\ndata: {}\n\n"));
  const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), heartbeatMs);
  heartbeat.unref();
  const stop = () => {
    clearInterval(heartbeat);
    unsubscribe();
  };
  req.on("close", stop);
  res.on("close", stop);
}
