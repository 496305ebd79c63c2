import { httpStatus } from "./client.js";

/**
 * Answers a process keeps per request, with the ETag GitHub gave them. Asked again with
 * If-None-Match, an answer that did not change comes back 304 Not Modified, which GitHub does not
 * count against the rate limit (docs.github.com, "Best practices for using the REST API": use
 * conditional requests if appropriate). Only GitHub's 304 vouches for a kept answer: it is never
 * used without asking, so a stale one cannot be served.
 */
export type ConditionalReads<T> = Map<string, { etag: string; data: T }>;

/** At most this many answers are kept; the oldest go first (a process serves a bounded set of repositories). */
const KEPT_MOST = 500;

/** `read` with If-None-Match when an answer for `key` is kept; a 304 gives the kept answer, anything else replaces or drops it. */
export async function readConditionally<T>(
  kept: ConditionalReads<T> | undefined,
  key: string,
  read: (headers: Record<string, string>) => Promise<{ data: T; headers: { etag?: string | undefined } }>,
): Promise<T> {
  const known = kept?.get(key);
  kept?.delete(key);
  let response;
  try {
    response = await read(known ? { "if-none-match": known.etag } : {});
  } catch (error) {
    if (known && httpStatus(error) === 304) {
      kept?.set(key, known);
      return known.data;
    }
    throw error;
  }
  if (kept && response.headers.etag) {
    kept.set(key, { etag: response.headers.etag, data: response.data });
    for (const oldest of kept.keys()) {
      if (kept.size <= KEPT_MOST) break;
      kept.delete(oldest);
    }
  }
  return response.data;
}
