import picomatch from "picomatch";

/**
 * Compiled glob matchers, memoised by their glob list. Compiling is far slower than matching and the
 * same few lists (the configured globs per step) recur on every commit; the cache only holds pure
 * functions of their key, so it cannot change a decision.
 */
const cache = new Map<string, (path: string) => boolean>();

/** The matcher of a list already asked for, by the list itself: joining a list's globs on every call cost more than matching. */
const byList = new WeakMap<readonly string[], (path: string) => boolean>();

export function globMatcher(globs: readonly string[]): (path: string) => boolean {
  if (globs.length === 0) return () => false;
  const same = byList.get(globs);
  if (same) return same;
  const key = globs.join("\u0000");
  let matcher = cache.get(key);
  if (!matcher) {
    matcher = compile(globs);
    if (cache.size > 256) cache.clear();
    cache.set(key, matcher);
  }
  byList.set(globs, matcher);
  return matcher;
}

/**
 * One regular expression for the whole list, matching exactly what picomatch's list matcher does
 * (a path equal to a glob, or one glob's expression): its matcher tests each glob in turn through a
 * general entry point, which was a fifth of deciding a push of 100 commits.
 */
function compile(globs: readonly string[]): (path: string) => boolean {
  const literal = new Set(globs);
  const sources = globs.map((glob) => picomatch.makeRe(glob, { dot: true }).source);
  const any = new RegExp(sources.map((source) => `(?:${source})`).join("|"));
  // The same paths recur commit after commit and push after push, and these expressions backtrack.
  const answers = new Map<string, boolean>();
  return (path) => {
    let answer = answers.get(path);
    if (answer === undefined) {
      answer = path !== "" && (literal.has(path) || any.test(path));
      if (answers.size >= 4096) answers.clear();
      answers.set(path, answer);
    }
    return answer;
  };
}
