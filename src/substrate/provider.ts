import type { z } from "zod";
import type { ProviderKind as ProviderKindSchema } from "../contracts/placement.js";
/**
 * One interface over every place a database branch can live: Databricks Lakebase, any Postgres
 * server reachable by URL, or the embedded server Consort starts itself (docs/ARCHITECTURE.md, Database branches).
 * This is a contract: the app, the cycle runner, the CLI and the agents' tools all use it.
 */

type ProviderKind = z.infer<typeof ProviderKindSchema>;

export interface DatabaseBranch {
  /** The provider's branch id: already sanitised (see `sanitiseBranchName`). */
  name: string;
  /** The parent branch's id; undefined only for the root branch. */
  parent: string | undefined;
  /** ISO time the branch was created, when the provider knows it. */
  createdAt?: string;
  /** ISO time after which a throwaway branch may be reaped; undefined for tracks (no expiry). */
  expiresAt?: string;
  /** True for the root branch (production on Lakebase, the seeded root locally). */
  isRoot: boolean;
  /**
   * `local` and `postgres` only: when the frozen base that children fork from was taken. Changes
   * made to the branch after this reach new children only after `refreshBase`.
   */
  frozenAt?: string;
}

export interface CreateBranchOptions {
  /** The parent branch id; the root branch when omitted. */
  from?: string;
  /**
   * Time to live in seconds for throwaway branches (cycles, previews). Tracks have none, because
   * on Lakebase a branch with an expiry cannot have children.
   */
  ttlSeconds?: number;
  /** Progress for slow steps (waiting for an operation, a compute endpoint, a login). */
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

export interface BranchProvider {
  readonly kind: ProviderKind;
  /** The id of the root branch (trunk pairs with it). */
  rootBranch(): Promise<string>;
  /**
   * Create `name` forked from `options.from` (default: root), or return it when it already exists
   * with that parent. An existing branch with a different parent is an error, never reused.
   */
  createBranch(name: string, options?: CreateBranchOptions): Promise<DatabaseBranch>;
  /** Delete a branch and, first, any children it has. Deleting a missing branch is not an error. */
  deleteBranch(name: string, options?: { onProgress?: (message: string) => void }): Promise<void>;
  listBranches(): Promise<DatabaseBranch[]>;
  getBranch(name: string): Promise<DatabaseBranch | undefined>;
  /** A connection URL a client (migrations, tests, the app) can use for this branch. */
  connectionUrl(name: string): Promise<string>;
  /**
   * Take a new frozen base of `name` so that children forked from now on see its current state.
   * Needed on `local` and `postgres` (children fork from a never-connected copy, so forking works
   * while the branch has open connections); Lakebase forks from the live branch and has no such
   * step. Fails with the connected sessions' names when the branch is in use.
   */
  refreshBase?(name: string, options?: { onProgress?: (message: string) => void }): Promise<DatabaseBranch>;
  /** Release what the provider holds (pools, a server it started). */
  close(): Promise<void>;
}

/** An error a person can act on: `hint` says what to do about it. */
export class SubstrateError extends Error {
  constructor(
    message: string,
    readonly hint: string,
    readonly code: string = "SUBSTRATE_ERROR",
    options?: { cause?: unknown },
  ) {
    super(`${message}\n  → ${hint}`, options);
    this.name = "SubstrateError";
  }
}

/** The longest time to live a throwaway branch may ask for: 30 days. */
const MAX_TTL_SECONDS = 30 * 24 * 3600;

/**
 * What every provider refuses before forking `name` from `parent`: a branch that would be its own
 * parent, and a time to live that is not a whole number of seconds between 1 and 30 days.
 */
export function checkFork(name: string, parent: string, ttlSeconds: number | undefined): void {
  if (parent === name)
    throw new SubstrateError(
      `branch "${name}" cannot be forked from itself`,
      "pass another branch as --from",
      "INVALID_PARENT",
    );
  if (ttlSeconds !== undefined && (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS))
    throw new SubstrateError(
      `ttl ${ttlSeconds} is not a whole number of seconds between 1 and ${MAX_TTL_SECONDS}`,
      "pass a time to live of at most 30 days",
      "INVALID_TTL",
    );
}
