import { requireProtectedStateBranch } from "../protect/index.js";
import type { StateStore } from "../state/index.js";
import type { GitHub, RepoRef } from "../app/github.js";
import type { AppServices } from "../app/services.js";

/**
 * What the app checks around every read and write of consort/state (issue #30): that the branch's
 * ruleset is in force (`services.protectedStateBranch`), and, with `services.seenSequences`, that
 * no file is older than the newest version any process of the app has seen. `sequences` is the
 * map the store checks and notes versions in: it is filled from the app's database before each
 * call and written back after it, so a restart or another replica does not forget.
 */
export function guardStateStore(
  store: StateStore,
  { octokit, repo, services }: { octokit: GitHub; repo: RepoRef; services: AppServices },
  sequences: Map<string, number> | undefined,
): StateStore {
  const seen = services.seenSequences;
  if (!services.protectedStateBranch && !seen) return store;
  const repository = `${repo.owner}/${repo.repo}`;
  const guarded =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (services.protectedStateBranch) await requireProtectedStateBranch(octokit, repo.owner, repo.repo);
      if (!seen || !sequences) return call(...args);
      for (const [key, sequence] of await seen.recall(repository))
        sequences.set(key, Math.max(sequences.get(key) ?? 0, sequence));
      try {
        return await call(...args);
      } finally {
        await seen.remember(repository, sequences);
      }
    };
  return {
    ...store,
    read: guarded(store.read),
    update: guarded(store.update),
    reseal: guarded(store.reseal),
    inspect: guarded(store.inspect),
  };
}
