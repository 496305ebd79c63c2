import { requireProtectedStateBranch } from "../protect/index.js";
import type { StateStore } from "../state/index.js";
import type { GitHub, RepoRef } from "../app/github.js";
import type { AppServices } from "../app/services.js";

/**
 * What the app checks around every read and write of consort/state (issue #30): that the branch's
 * ruleset is in force (`services.protectedStateBranch`), and, with `services.seenSequences`, that
 * no file is older than the newest version any process of the app has seen. `sequences` is the
 * map the store checks and notes versions in: it is filled from the app's database and written
 * back after each call, so a restart or another replica does not forget.
 *
 * Both are done once per delivery (its client: each webhook delivery gets its own), not per store
 * call: a delivery reads and writes the state several times, and the ruleset check and the recall
 * cost a request each. The ruleset check a delivery made is trusted for RULESET_CHECK_BOUND_MS at
 * most; a failed check is never kept, so every later call asks again and fails closed. After a
 * call, only the versions that grew past what the database was last told are written.
 */

/** How long one delivery trusts its check of consort/state's ruleset (a delivery takes seconds). */
const RULESET_CHECK_BOUND_MS = 60_000;

/** What one delivery learnt about a repository's consort/state. */
interface DeliveryGuard {
  /** When the ruleset was found in force, in ms of `services.clock`. */
  protectedAt?: number;
  /** The recall from the app's database, once started. */
  recalled?: Promise<void>;
  /** The newest version the database is known to hold per store key (recalled or remembered). */
  known: Map<string, number>;
}

/** Per delivery (its client), per repository. */
const deliveries = new WeakMap<object, Map<string, DeliveryGuard>>();
/** The versions map a delivery's stores share, per client: each store the delivery opens sees what the others noted. */
const deliverySequences = new WeakMap<object, Map<string, number>>();

/** The map of versions the stores of the delivery that `octokit` serves share. */
export function sequencesOfDelivery(octokit: object): Map<string, number> {
  let sequences = deliverySequences.get(octokit);
  if (!sequences) deliverySequences.set(octokit, (sequences = new Map()));
  return sequences;
}

function guardOf(octokit: object, repository: string): DeliveryGuard {
  let repositories = deliveries.get(octokit);
  if (!repositories) deliveries.set(octokit, (repositories = new Map()));
  let guard = repositories.get(repository);
  if (!guard) repositories.set(repository, (guard = { known: new Map() }));
  return guard;
}

export function guardStateStore(
  store: StateStore,
  { octokit, repo, services }: { octokit: GitHub; repo: RepoRef; services: AppServices },
  sequences: Map<string, number> | undefined,
): StateStore {
  const seen = services.seenSequences;
  if (!services.protectedStateBranch && !seen) return store;
  const repository = `${repo.owner}/${repo.repo}`;
  const guard = guardOf(octokit, repository.toLowerCase());
  const now = () => services.clock().getTime();

  async function requireRuleset(): Promise<void> {
    const at = guard.protectedAt;
    if (at !== undefined && now() - at < RULESET_CHECK_BOUND_MS && now() >= at) return;
    guard.protectedAt = undefined;
    await requireProtectedStateBranch(octokit, repo.owner, repo.repo);
    guard.protectedAt = now();
  }

  function recall(into: Map<string, number>): Promise<void> {
    guard.recalled ??= seen!.recall(repository).then(
      (remembered) => {
        for (const [key, sequence] of remembered) guard.known.set(key, sequence);
      },
      (error: unknown) => {
        guard.recalled = undefined;
        throw error;
      },
    );
    return guard.recalled.then(() => {
      for (const [key, sequence] of guard.known) into.set(key, Math.max(into.get(key) ?? 0, sequence));
    });
  }

  async function rememberGrown(from: Map<string, number>): Promise<void> {
    const grown = new Map([...from].filter(([key, sequence]) => sequence > (guard.known.get(key) ?? 0)));
    if (grown.size === 0) return;
    await seen!.remember(repository, grown);
    for (const [key, sequence] of grown) guard.known.set(key, Math.max(guard.known.get(key) ?? 0, sequence));
  }

  const guarded =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (services.protectedStateBranch) await requireRuleset();
      if (!seen || !sequences) return call(...args);
      await recall(sequences);
      try {
        return await call(...args);
      } finally {
        await rememberGrown(sequences);
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
