import picomatch from "picomatch";

/**
 * Compiled glob matchers, memoised by their glob list. Compiling is far slower than matching and the
 * same few lists (the configured globs per step) recur on every commit; the cache only holds pure
 * functions of their key, so it cannot change a decision.
 */
const cache = new Map<string, (path: string) => boolean>();

export function globMatcher(globs: readonly string[]): (path: string) => boolean {
  if (globs.length === 0) return () => false;
  const key = globs.join("\u0000");
  let matcher = cache.get(key);
  if (!matcher) {
    matcher = picomatch([...globs], { dot: true });
    if (cache.size > 256) cache.clear();
    cache.set(key, matcher);
  }
  return matcher;
}
