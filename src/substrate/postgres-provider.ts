import { randomBytes } from "node:crypto";
import pg from "pg";
import { adminConfig } from "./admin-session.js";
import { branchRoleName, branchRolePassword, branchRoleUrl, grantBranchRole, ownEverything } from "./branch-role.js";
import { BRANCH_ID_PATTERN } from "./names.js";
import { describeServer, toSubstrateError } from "./pg-errors.js";
import { ident } from "./sql.js";
import {
  allSpareNames,
  baseDatabaseName,
  isBeingMade,
  labelAsBase,
  labelAsBranch,
  labelAsSpare,
  makerOf,
  MAX_SPARES,
  readCatalog,
  temporaryDatabaseName,
  type BranchRecord,
  type CatalogEntry,
} from "./postgres-catalog.js";
import {
  SubstrateError,
  checkFork,
  type BranchProvider,
  type CreateBranchOptions,
  type DatabaseBranch,
} from "./provider.js";
import { consortCommand } from "../contracts/command.js";

/**
 * Database branches as databases on one Postgres server (docs/ARCHITECTURE.md, Database branches), used by the `postgres`
 * provider (a server given by URL) and the `local` one (the embedded server Consort starts).
 *
 * Each branch that may have children keeps a frozen base: a copy of it that nobody can connect to
 * (ALLOW_CONNECTIONS false). Children are `CREATE DATABASE … TEMPLATE <base> STRATEGY FILE_COPY`,
 * so forking works while the branch itself has open connections (a TEMPLATE of a connected
 * database waits 5 s and fails). Throwaway branches (with a ttl) cannot have children, as on
 * Lakebase, so they get no base and fork with one file copy.
 *
 * Metadata lives with each database, as a COMMENT ON DATABASE, so `list` and the parent checks
 * work across processes and vanish with the database (the names and labels: postgres-catalog.ts).
 * A new database is made under a temporary name and renamed once complete: a branch name never
 * points at a half-made copy.
 */

// Base rule: a base is taken when its branch is created (a copy of the parent's base) and again
// only by refreshBase, which our seed, migrate and promote steps call after changing the branch.

/** pg_advisory_lock namespaces: one per branch name, one per base (shared while forking). */
const LOCK_BRANCH = 0x436f6e73;
const LOCK_BASE = 0x42617365;
/** Held by whoever takes or makes a branch's warm spare. */
const LOCK_SPARE = 0x53706172;
/** Half-made databases older than this belong to a process that died: reap them. */
const ORPHAN_AGE_MS = 60 * 60 * 1000;
/** How long a burst of concurrent forks keeps its parent's spare pool at the burst's size. */
const SPARE_DEMAND_WINDOW_MS = 10 * 60 * 1000;
/** How long a refresh waits for sessions on the branch to end before it refuses (see waitForSessionsToEnd). */
const SESSION_EXIT_WAIT_MS = 5000;

export interface PostgresProviderOptions {
  kind?: "postgres" | "local";
  /** A role that may create databases; its database is where the locks are taken. */
  adminUrl: string;
  /** The database that is the root branch; made empty when missing, adopted when it exists. */
  rootDatabase: string;
  /** Called by close() after the pool ends (the local provider leaves its server running). */
  onClose?: () => Promise<void>;
  /**
   * Keep ready copies of each base (warm spares), made in the background after a fork, so the
   * next throwaway fork is a rename instead of a file copy. One per parent, more after a burst of
   * concurrent forks (as many as the burst, at most MAX_SPARES) for SPARE_DEMAND_WINDOW_MS. Each
   * costs one copy's disk on a filesystem without reflink (ext4), nothing extra with reflink
   * (XFS, btrfs). Default true.
   */
  warmSpares?: boolean;
  /**
   * Called when the server cannot be reached: returns the admin URL of the server, restarted if
   * need be (the local provider restarts its embedded server, on a new port). Without it the next
   * call simply connects again.
   */
  recover?: () => Promise<string>;
  /** How long refreshBase waits for the branch's sessions to end before refusing. Default 5 s. */
  sessionExitWaitMs?: number;
}

export class PostgresBranchProvider implements BranchProvider {
  readonly kind: "postgres" | "local";
  private pool: pg.Pool;
  private adminUrl: string;
  private readonly root: string;
  private server: string;
  private rootReady: Promise<void> | undefined;
  private recovering: Promise<void> | undefined;
  private readonly pending = new Set<Promise<void>>();
  /** Per parent: when forks started and how many run now (sizes the spare pool). */
  private readonly demand = new Map<string, { running: number; peaks: Array<{ at: number; n: number }> }>();
  /** Per parent: the spare being made in this process, for a fork to wait for rather than copy beside it. */
  private readonly making = new Map<string, { done: Promise<void>; claimed: boolean }>();
  /** Per parent: a replenish loop runs in this process (and whether a spare was taken while it ran). */
  private readonly replenishing = new Set<string>();
  private readonly replenishAgain = new Set<string>();

  constructor(private readonly options: PostgresProviderOptions) {
    this.kind = options.kind ?? "postgres";
    this.root = options.rootDatabase;
    this.adminUrl = options.adminUrl;
    this.server = describeServer(options.adminUrl);
    this.pool = this.makePool();
  }

  private makePool(): pg.Pool {
    // The admin's own database may be a branch (an admin URL naming the root): see admin-session.ts.
    const pool = new pg.Pool({ ...adminConfig(this.adminUrl), max: 24, application_name: "consort-substrate" });
    // A client that loses its server, idle or checked out, must not crash the process: the
    // statement it runs fails (and with it that one call), and the next call connects again.
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    return pool;
  }

  async rootBranch(): Promise<string> {
    await this.ensureRoot();
    return this.root;
  }

  async createBranch(name: string, options: CreateBranchOptions = {}): Promise<DatabaseBranch> {
    const parent = options.from ?? this.root;
    if (name === this.root) {
      if (options.from !== undefined)
        throw new SubstrateError(
          `"${name}" is the root branch and has no parent`,
          "create other branches from it instead",
          "INVALID_PARENT",
        );
      await this.ensureRoot();
      return (await this.getBranch(name))!;
    }
    this.checkName(name);
    const ttl = options.ttlSeconds;
    checkFork(name, parent, ttl);
    if (parent === this.root) await this.ensureRoot();
    const progress = options.onProgress ?? (() => {});
    if (ttl === undefined) return this.fork(name, parent, ttl, progress);
    const done = this.forkStarted(parent);
    try {
      return await this.fork(name, parent, ttl, progress);
    } finally {
      done();
    }
  }

  private async fork(
    name: string,
    parent: string,
    ttl: number | undefined,
    progress: (message: string) => void,
  ): Promise<DatabaseBranch> {
    return this.withClient(`creating branch "${name}"`, async (client) => {
      await this.lock(client, LOCK_BRANCH, name);
      try {
        let catalog = await readCatalog(client);
        if ((await this.reap(client, catalog, name)).length > 0) catalog = await readCatalog(client);
        const existing = catalog.get(name);
        if (existing) {
          if (!existing.record || existing.record.root !== this.root) throw this.notOurs(name);
          if (existing.record.parent !== parent) {
            throw new SubstrateError(
              `branch "${name}" already exists with parent "${existing.record.parent}", not "${parent}"`,
              `delete it first (${consortCommand(`db delete ${name}`)}) or fork it from "${existing.record.parent}"`,
              "PARENT_MISMATCH",
            );
          }
          return this.toBranch(existing);
        }
        const parentEntry = catalog.get(parent);
        if (!parentEntry?.record || parentEntry.record.root !== this.root) {
          throw new SubstrateError(
            `parent branch "${parent}" does not exist`,
            `create the parent first (${consortCommand("db create")}), or fork from the root branch`,
            "PARENT_MISSING",
          );
        }
        if (parentEntry.record.expiresAt) {
          throw new SubstrateError(
            `parent branch "${parent}" is a throwaway branch (it expires) and cannot have children`,
            "fork from the track's branch instead; only branches without a ttl can be parents",
            "PARENT_IS_THROWAWAY",
          );
        }
        const parentBase = baseDatabaseName(parent);
        const stale = catalog.get(baseDatabaseName(name));
        if (stale) await client.query(`DROP DATABASE IF EXISTS ${ident(stale.datname)} WITH (FORCE)`);

        await this.lock(client, LOCK_BASE, parent, true);
        const made: string[] = [];
        try {
          // The parent may have been deleted while we waited for its base.
          const baseRow = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [parentBase]);
          if (baseRow.rowCount === 0) {
            throw new SubstrateError(
              `parent branch "${parent}" has no frozen base`,
              `run \`${consortCommand(`db refresh ${parent}`)}\` to take one`,
              "BASE_MISSING",
            );
          }
          const now = new Date();
          const record: BranchRecord = {
            v: 1,
            root: this.root,
            parent,
            createdAt: now.toISOString(),
            ...(ttl !== undefined
              ? { expiresAt: new Date(now.getTime() + ttl * 1000).toISOString() }
              : { frozenAt: now.toISOString() }),
          };
          if (ttl === undefined) {
            progress(`taking the frozen base of "${name}"`);
            const tmpBase = temporaryDatabaseName(client);
            made.push(tmpBase);
            await this.copyAsBase(client, tmpBase, parentBase, name);
            await client.query(`ALTER DATABASE ${ident(tmpBase)} RENAME TO ${ident(baseDatabaseName(name))}`);
            made[made.length - 1] = baseDatabaseName(name);
          }
          progress(`forking "${name}" from "${parent}"`);
          const tmp = temporaryDatabaseName(client);
          made.push(tmp);
          const spare = ttl !== undefined && (await this.takeSpareOrWait(client, parent, tmp));
          if (!spare)
            await client.query(`CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(parentBase)} STRATEGY FILE_COPY`);
          // One round trip: connections allowed (a spare has none), shut to every login but the
          // branch's own (see branch-role.ts), the comment and the rename commit together.
          await client.query(
            `${spare ? `ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS true; ` : ""}REVOKE CONNECT, TEMPORARY ON DATABASE ${ident(tmp)} FROM PUBLIC; ${labelAsBranch(tmp, record)}; ALTER DATABASE ${ident(tmp)} RENAME TO ${ident(name)}`,
          );
          // A throwaway fork's parent gets its spares back when its forks have ended (see forkStarted).
          if (ttl === undefined) this.replenish(name);
          return this.toBranch({ datname: name, record });
        } catch (error) {
          // A failed fork leaves nothing behind.
          for (const db of made.reverse())
            await client.query(`DROP DATABASE IF EXISTS ${ident(db)} WITH (FORCE)`).catch(() => {});
          if (
            made.length > 0 &&
            !(error instanceof SubstrateError) &&
            (error as { code?: string }).code !== undefined
          ) {
            const count = await client
              .query("SELECT count(*)::int AS n FROM pg_database WHERE datname = ANY($1)", [made])
              .catch(() => undefined);
            if (count && count.rows[0].n > 0) {
              throw new SubstrateError(
                `forking "${name}" failed and its partial copy could not be dropped`,
                `drop it by hand: DROP DATABASE … WITH (FORCE) for ${made.join(", ")}`,
                "PARTIAL_FORK",
              );
            }
          }
          throw toSubstrateError(error, {
            server: this.server,
            action: `forking "${name}" from "${parent}"`,
            database: parent,
          });
        } finally {
          await this.unlock(client, LOCK_BASE, parent, true);
        }
      } finally {
        await this.unlock(client, LOCK_BRANCH, name);
      }
    });
  }

  async deleteBranch(name: string, options: { onProgress?: (message: string) => void } = {}): Promise<void> {
    if (name === this.root) {
      throw new SubstrateError(
        `"${name}" is the root branch and is never deleted by Consort`,
        "delete track branches instead; drop the root database by hand if you really mean it",
        "ROOT_PROTECTED",
      );
    }
    const progress = options.onProgress ?? (() => {});
    await this.withClient(`deleting branch "${name}"`, async (client) => {
      await this.lock(client, LOCK_BRANCH, name);
      try {
        // Taken before looking for children, so no child can be forked while we delete.
        await this.lock(client, LOCK_BASE, name);
        try {
          const catalog = await readCatalog(client);
          const entry = catalog.get(name);
          if (entry && !entry.record) throw this.notOurs(name);
          if (entry?.record && entry.record.root !== this.root) {
            throw new SubstrateError(
              `branch "${name}" belongs to another root ("${entry.record.root}")`,
              "use the configuration of the project that owns it",
              "OTHER_ROOT",
            );
          }
          const children = [...catalog.values()].filter(
            (e) => e.record?.root === this.root && e.record.parent === name,
          );
          for (const child of children) {
            progress(`deleting child "${child.datname}" of "${name}" first`);
            await this.deleteBranch(child.datname, options);
          }
          if (entry) progress(`dropping "${name}"`);
          await client.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`);
          // Its login goes with it (kept if it still owns something elsewhere: nothing to reach there).
          await client.query(`DROP ROLE IF EXISTS ${ident(branchRoleName(this.root, name))}`).catch(() => {});
          await this.dropSpares(client, name);
          await client.query(`DROP DATABASE IF EXISTS ${ident(baseDatabaseName(name))} WITH (FORCE)`);
        } finally {
          await this.unlock(client, LOCK_BASE, name);
        }
      } finally {
        await this.unlock(client, LOCK_BRANCH, name);
      }
    });
  }

  async refreshBase(name: string, options: { onProgress?: (message: string) => void } = {}): Promise<DatabaseBranch> {
    if (name === this.root) await this.ensureRoot();
    const progress = options.onProgress ?? (() => {});
    return this.withClient(`refreshing the base of "${name}"`, async (client) => {
      await this.lock(client, LOCK_BRANCH, name);
      try {
        const catalog = await readCatalog(client);
        const entry = catalog.get(name);
        if (!entry) throw this.missing(name);
        if (!entry.record) throw this.notOurs(name);
        if (entry.record.expiresAt) {
          throw new SubstrateError(
            `"${name}" is a throwaway branch: it has no children, so no base`,
            "refresh the track's branch instead",
            "NO_BASE",
          );
        }
        const sessions = await this.waitForSessionsToEnd(client, name);
        if (sessions.length > 0) {
          const who = sessions.map((r) => `${r.app} (${r.n})`).join(", ");
          throw new SubstrateError(
            `branch "${name}" has open connections (${who}), so its base cannot be taken now; children keep forking from the base of ${entry.record.frozenAt ?? "its creation"}`,
            `close them (let the migrate or seed step exit), then run \`${consortCommand(`db refresh ${name}`)}\``,
            "DATABASE_IN_USE",
          );
        }
        progress(`taking a new frozen base of "${name}"`);
        const tmp = temporaryDatabaseName(client);
        try {
          await this.copyAsBase(client, tmp, name, name);
          await this.lock(client, LOCK_BASE, name);
          try {
            await this.dropSpares(client, name);
            await client.query(`DROP DATABASE IF EXISTS ${ident(baseDatabaseName(name))} WITH (FORCE)`);
            await client.query(`ALTER DATABASE ${ident(tmp)} RENAME TO ${ident(baseDatabaseName(name))}`);
          } finally {
            await this.unlock(client, LOCK_BASE, name);
          }
        } catch (error) {
          await client.query(`DROP DATABASE IF EXISTS ${ident(tmp)} WITH (FORCE)`).catch(() => {});
          throw toSubstrateError(error, {
            server: this.server,
            action: `taking the base of "${name}"`,
            database: name,
          });
        }
        const record: BranchRecord = { ...entry.record, frozenAt: new Date().toISOString() };
        await client.query(labelAsBranch(name, record));
        this.replenish(name);
        return this.toBranch({ datname: name, record });
      } finally {
        await this.unlock(client, LOCK_BRANCH, name);
      }
    });
  }

  async listBranches(): Promise<DatabaseBranch[]> {
    await this.ensureRoot();
    return this.withClient("listing branches", async (client) => {
      const catalog = await readCatalog(client);
      return [...catalog.values()]
        .filter((e) => e.record?.root === this.root)
        .map((e) => this.toBranch(e))
        .sort((a, b) => (a.isRoot === b.isRoot ? a.name.localeCompare(b.name) : a.isRoot ? -1 : 1));
    });
  }

  async getBranch(name: string): Promise<DatabaseBranch | undefined> {
    if (name === this.root) await this.ensureRoot();
    return this.withClient(`reading branch "${name}"`, async (client) => {
      const entry = (await readCatalog(client, name)).get(name);
      if (!entry?.record || entry.record.root !== this.root) return undefined;
      return this.toBranch(entry);
    });
  }

  /** The branch's own least-privilege login (see branch-role.ts), never the admin's. */
  async connectionUrl(name: string): Promise<string> {
    const branch = await this.getBranch(name);
    if (!branch) throw this.missing(name);
    const role = branchRoleName(this.root, name);
    const password = branchRolePassword(this.adminUrl, role);
    await this.withClient(`making the login role of branch "${name}"`, async (client) => {
      const rootDatabases = [...(await readCatalog(client)).values()]
        .filter((e) => e.record?.root === this.root || e.baseOf !== undefined || e.spareOf !== undefined)
        .map((e) => e.datname);
      // The databases every server has are shut too: a branch's login reaches its own alone.
      const everyServers = ["postgres", "template1", decodeURIComponent(new URL(this.adminUrl).pathname.slice(1))];
      await grantBranchRole(client, {
        role,
        password,
        database: name,
        rootDatabases: [this.root, ...rootDatabases, ...everyServers.filter(Boolean)],
      });
    });
    await ownEverything(this.adminUrl, name, role);
    return branchRoleUrl(this.adminUrl, name, role, password);
  }

  /** The warm spares this root's branches keep, and the disk they take (full copies without reflink). */
  async spareUsage(): Promise<{ count: number; bytes: number }> {
    return this.withClient("measuring warm spares", async (client) => {
      const catalog = await readCatalog(client);
      const ours = new Set([...catalog.values()].filter((e) => e.record?.root === this.root).map((e) => e.datname));
      const spares = [...catalog.values()].filter((e) => e.spareOf !== undefined && ours.has(e.spareOf));
      if (spares.length === 0) return { count: 0, bytes: 0 };
      const size = await client.query<{ bytes: string }>(
        "SELECT coalesce(sum(pg_database_size(datname)), 0)::bigint AS bytes FROM pg_database WHERE datname = ANY($1)",
        [spares.map((e) => e.datname)],
      );
      return { count: spares.length, bytes: Number(size.rows[0]?.bytes ?? 0) };
    });
  }

  /** Resolves when background work (warm spares being made) has finished. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async close(): Promise<void> {
    await this.settled();
    await this.pool.end();
    await this.options.onClose?.();
  }

  /** The root database: made empty when missing, adopted (commented) when it exists, with a base. */
  private ensureRoot(): Promise<void> {
    this.rootReady ??= this.prepareRoot().then(
      () => this.replenish(this.root),
      (error: unknown) => {
        this.rootReady = undefined;
        throw error;
      },
    );
    return this.rootReady;
  }

  private async prepareRoot(): Promise<void> {
    await this.withClient("preparing the root branch", async (client) => {
      await this.lock(client, LOCK_BRANCH, this.root);
      try {
        const catalog = await readCatalog(client);
        const entry = catalog.get(this.root);
        if (entry?.record && entry.record.root !== this.root) throw this.notOurs(this.root);
        if (!entry) await client.query(`CREATE DATABASE ${ident(this.root)}`);
        if (!entry?.record) {
          const record: BranchRecord = {
            v: 1,
            root: this.root,
            parent: null,
            createdAt: new Date().toISOString(),
            frozenAt: new Date().toISOString(),
          };
          await client.query(labelAsBranch(this.root, record));
        }
        if (!catalog.has(baseDatabaseName(this.root))) {
          const tmp = temporaryDatabaseName(client);
          try {
            await this.copyAsBase(client, tmp, this.root, this.root);
            await client.query(`ALTER DATABASE ${ident(tmp)} RENAME TO ${ident(baseDatabaseName(this.root))}`);
          } catch (error) {
            await client.query(`DROP DATABASE IF EXISTS ${ident(tmp)} WITH (FORCE)`).catch(() => {});
            throw toSubstrateError(error, {
              server: this.server,
              action: `taking the base of the root "${this.root}"`,
              database: this.root,
            });
          }
        }
      } finally {
        await this.unlock(client, LOCK_BRANCH, this.root);
      }
    });
  }

  /**
   * Copy `template` under the temporary name `tmp` as `branch`'s frozen base: nobody may connect to
   * it, and its comment says whose base it is. The caller renames it to baseDatabaseName(branch)
   * once the old one is out of the way, and drops `tmp` when anything fails.
   */
  private async copyAsBase(client: pg.PoolClient, tmp: string, template: string, branch: string): Promise<void> {
    await client.query(`CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(template)} STRATEGY FILE_COPY`);
    await client.query(`ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS false`);
    await client.query(labelAsBase(tmp, branch));
  }

  /** Count a throwaway fork of `parent` as running (sizing its spare pool); call the result when it ends. */
  private forkStarted(parent: string): () => void {
    const now = Date.now();
    const entry = this.demand.get(parent) ?? { running: 0, peaks: [] };
    entry.running++;
    entry.peaks = entry.peaks.filter((p) => now - p.at < SPARE_DEMAND_WINDOW_MS);
    entry.peaks.push({ at: now, n: entry.running });
    this.demand.set(parent, entry);
    return () => {
      // Spares are remade once the forks of this parent have ended, so copies do not compete with a burst.
      if (--entry.running === 0) this.replenish(parent);
    };
  }

  /** How many spares `branch` should have: the most forks of it that ran at once lately, 1 to MAX_SPARES. */
  private wantedSpares(branch: string): number {
    const now = Date.now();
    const peaks = (this.demand.get(branch)?.peaks ?? []).filter((p) => now - p.at < SPARE_DEMAND_WINDOW_MS);
    return Math.min(MAX_SPARES, Math.max(1, ...peaks.map((p) => p.n)));
  }

  /**
   * Take a warm spare of `parent` under the name `target`. When none is free but this process is
   * making one that no other fork has claimed, wait for it: it is further along than a copy
   * started now, which would also compete with it for the disk. False when neither is there.
   */
  private async takeSpareOrWait(client: pg.PoolClient, parent: string, target: string): Promise<boolean> {
    if (this.options.warmSpares === false) return false;
    if (await this.takeSpare(client, parent, target)) return true;
    const inProgress = this.making.get(parent);
    if (!inProgress || inProgress.claimed) return false;
    inProgress.claimed = true;
    await inProgress.done;
    return this.takeSpare(client, parent, target);
  }

  /** Take one of the parent's warm spares under the name `target`; false when none is free right now. */
  private async takeSpare(client: pg.PoolClient, parent: string, target: string): Promise<boolean> {
    const present = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname = ANY($1) ORDER BY oid",
      [allSpareNames(parent)],
    );
    // Concurrent forks start at different spares, so they rarely try the same lock.
    const offset = present.rows.length > 0 ? randomBytes(1)[0]! % present.rows.length : 0;
    const order = [...present.rows.slice(offset), ...present.rows.slice(0, offset)];
    for (const { datname } of order) {
      const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
        LOCK_SPARE,
        datname,
      ]);
      if (!got.rows[0]?.ok) continue;
      try {
        // Another process may have taken it since we listed: then the rename finds nothing.
        const taken = await client.query(`ALTER DATABASE ${ident(datname)} RENAME TO ${ident(target)}`).then(
          () => true,
          (error: { code?: string }) => {
            if (error.code === "3D000") return false;
            throw error;
          },
        );
        if (taken) return true;
      } finally {
        await this.unlock(client, LOCK_SPARE, datname);
      }
    }
    return false;
  }

  /** Drop every warm spare of `branch` (their base is about to change or go). */
  private async dropSpares(client: pg.PoolClient, branch: string): Promise<void> {
    for (const spare of allSpareNames(branch))
      await client.query(`DROP DATABASE IF EXISTS ${ident(spare)} WITH (FORCE)`);
  }

  /**
   * Bring the branch's warm spares up to the number wanted (and drop those beyond it), one copy
   * at a time, in the background; a missing spare only makes the next fork slower.
   */
  private replenish(branch: string): void {
    if (this.options.warmSpares === false) return;
    if (this.replenishing.has(branch)) {
      this.replenishAgain.add(branch);
      return;
    }
    this.replenishing.add(branch);
    const job = (async () => {
      try {
        for (;;) {
          const made = await this.makeOneSpare(branch);
          if (!made && !this.replenishAgain.delete(branch)) return;
        }
      } finally {
        this.replenishing.delete(branch);
      }
    })().catch(() => {});
    this.pending.add(job);
    void job.finally(() => this.pending.delete(job));
  }

  /** Make (or drop) one spare of `branch`; false when the pool is at the size wanted or cannot grow. */
  private async makeOneSpare(branch: string): Promise<boolean> {
    return this.withClient(`preparing a warm spare of "${branch}"`, async (client) => {
      const wanted = this.wantedSpares(branch);
      const names = allSpareNames(branch);
      const present = new Set(
        (
          await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = ANY($1)", [
            [...names, baseDatabaseName(branch)],
          ])
        ).rows.map((r) => r.datname),
      );
      if (!present.has(baseDatabaseName(branch))) return false;
      const have = names.filter((n) => present.has(n));
      if (have.length > wanted) {
        // Demand fell: give back the disk of the spares beyond it.
        for (const extra of have.slice(wanted)) {
          const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
            LOCK_SPARE,
            extra,
          ]);
          if (!got.rows[0]?.ok) continue;
          try {
            await client.query(`DROP DATABASE IF EXISTS ${ident(extra)} WITH (FORCE)`);
          } finally {
            await this.unlock(client, LOCK_SPARE, extra);
          }
        }
        return false;
      }
      if (have.length >= wanted) return false;
      const target = names.find((n) => !present.has(n))!;
      const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
        LOCK_SPARE,
        target,
      ]);
      if (!got.rows[0]?.ok) return false;
      let finish: () => void = () => {};
      const entry = { done: new Promise<void>((resolve) => (finish = resolve)), claimed: false };
      this.making.set(branch, entry);
      try {
        // Shared base lock: a refresh or delete waits for us, then drops what we made with the old base.
        await this.lock(client, LOCK_BASE, branch, true);
        try {
          const base = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [baseDatabaseName(branch)]);
          if (base.rowCount === 0) return false;
          const tmp = temporaryDatabaseName(client);
          try {
            await client.query(
              `CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(baseDatabaseName(branch))} STRATEGY FILE_COPY`,
            );
            await client.query(
              `ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS false; ${labelAsSpare(tmp, branch)}; ALTER DATABASE ${ident(tmp)} RENAME TO ${ident(target)}`,
            );
          } catch (error) {
            await client.query(`DROP DATABASE IF EXISTS ${ident(tmp)} WITH (FORCE)`).catch(() => {});
            throw error;
          }
          return true;
        } finally {
          await this.unlock(client, LOCK_BASE, branch, true);
        }
      } finally {
        await this.unlock(client, LOCK_SPARE, target);
        if (this.making.get(branch) === entry) this.making.delete(branch);
        finish();
      }
    });
  }

  /**
   * Drop what nothing will finish or use: expired throwaway branches of this root, copies whose
   * maker's session is gone (crashed or killed mid-way), frozen bases and warm spares whose branch
   * no longer exists and is not being made. Returns the names dropped.
   */
  async reapOrphans(): Promise<string[]> {
    return this.withClient("reaping orphaned copies", async (client) => this.reap(client, await readCatalog(client)));
  }

  private async reap(client: pg.PoolClient, catalog: Map<string, CatalogEntry>, except?: string): Promise<string[]> {
    const now = Date.now();
    // Whose sessions live matters only when there are copies in progress to judge.
    const live = [...catalog.keys()].some(isBeingMade)
      ? new Set(
          (await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity")).rows.map((r) => Number(r.pid)),
        )
      : new Set<number>();
    const reaped: string[] = [];
    const drop = async (datname: string) => {
      await client.query(`DROP DATABASE IF EXISTS ${ident(datname)} WITH (FORCE)`);
      reaped.push(datname);
    };
    for (const entry of catalog.values()) {
      try {
        if (isBeingMade(entry.datname)) {
          const { pid, born } = makerOf(entry.datname);
          const age = now - born;
          // A copy whose maker's session has ended is never finished; one from before makers were named, after an hour.
          if ((pid > 0 && !live.has(pid)) || (!(pid > 0) && Number.isFinite(age) && age > ORPHAN_AGE_MS))
            await drop(entry.datname);
        } else if (entry.record?.root === this.root && entry.record.expiresAt && entry.datname !== except) {
          if (Date.parse(entry.record.expiresAt) < now) await drop(entry.datname);
        } else if (entry.baseOf !== undefined || entry.spareOf !== undefined) {
          const owner = (entry.baseOf ?? entry.spareOf)!;
          if (owner === except || catalog.get(owner)?.record) continue;
          // The branch is gone: unless it is being made right now (its lock is held), so is the need for this copy.
          const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
            LOCK_BRANCH,
            owner,
          ]);
          if (!got.rows[0]?.ok) continue;
          try {
            const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [owner]);
            if (exists.rowCount === 0) await drop(entry.datname);
          } finally {
            await this.unlock(client, LOCK_BRANCH, owner);
          }
        }
      } catch {
        // Another process may be dropping it too; the next reap tries again.
      }
    }
    return reaped;
  }

  /**
   * The client sessions still connected to `name`, after waiting up to `sessionExitWaitMs` for
   * them to go. A client that has just closed its connection may still be listed for a moment
   * (its server process exits asynchronously, later still on a loaded machine), so a session seen
   * once is not yet a reason to refuse. Background workers (autovacuum) are not counted:
   * CREATE DATABASE … TEMPLATE stops them itself.
   */
  private async waitForSessionsToEnd(client: pg.PoolClient, name: string): Promise<Array<{ app: string; n: number }>> {
    const deadline = Date.now() + (this.options.sessionExitWaitMs ?? SESSION_EXIT_WAIT_MS);
    let pause = 10;
    for (;;) {
      const sessions = await client.query<{ app: string; n: number }>(
        "SELECT coalesce(nullif(application_name, ''), 'unnamed') AS app, count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1",
        [name],
      );
      if (sessions.rows.length === 0 || Date.now() >= deadline) return sessions.rows;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
      pause = Math.min(pause * 2, 100);
    }
  }

  private toBranch(entry: CatalogEntry): DatabaseBranch {
    const record = entry.record!;
    return {
      name: entry.datname,
      parent: record.parent ?? undefined,
      createdAt: record.createdAt,
      ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}),
      ...(record.frozenAt ? { frozenAt: record.frozenAt } : {}),
      isRoot: entry.datname === this.root,
    };
  }

  private checkName(name: string): void {
    if (!BRANCH_ID_PATTERN.test(name)) {
      throw new SubstrateError(
        `"${name}" is not a database branch id (1–63 lowercase letters, digits and hyphens, starting with a letter)`,
        `pass a git branch name through sanitiseBranchName, or use the sanitised id \`${consortCommand("db list")}\` shows`,
        "INVALID_BRANCH_NAME",
      );
    }
  }

  private missing(name: string): SubstrateError {
    return new SubstrateError(
      `branch "${name}" does not exist on ${this.server}`,
      `list branches with \`${consortCommand("db list")}\`, or create it with \`${consortCommand("db create")}\``,
      "BRANCH_MISSING",
    );
  }

  private notOurs(name: string): SubstrateError {
    return new SubstrateError(
      `a database named "${name}" exists on ${this.server} but is not a Consort branch of root "${this.root}"`,
      "Consort never touches databases it did not make: pick another branch name or rename that database",
      "NOT_A_BRANCH",
    );
  }

  private async lock(client: pg.PoolClient, space: number, key: string, shared = false): Promise<void> {
    await client.query(`SELECT ${shared ? "pg_advisory_lock_shared" : "pg_advisory_lock"}($1::int, hashtext($2))`, [
      space,
      key,
    ]);
  }

  private async unlock(client: pg.PoolClient, space: number, key: string, shared = false): Promise<void> {
    await client
      .query(`SELECT ${shared ? "pg_advisory_unlock_shared" : "pg_advisory_unlock"}($1::int, hashtext($2))`, [
        space,
        key,
      ])
      .catch(() => {});
  }

  /**
   * The server cannot be reached: ask `recover` for it (restarted if need be) and connect to the
   * address it gives from now on. One recovery at a time, shared by every call that needs it.
   */
  private async recover(): Promise<void> {
    const recover = this.options.recover;
    if (!recover) return;
    this.recovering ??= (async () => {
      const url = await recover();
      if (url !== this.adminUrl) {
        const old = this.pool;
        this.adminUrl = url;
        this.server = describeServer(url);
        this.pool = this.makePool();
        void old.end().catch(() => {});
      }
    })().finally(() => {
      this.recovering = undefined;
    });
    await this.recovering;
  }

  private async connect(action: string): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      if (!this.options.recover || !serverGone(error)) throw toSubstrateError(error, { server: this.server, action });
    }
    try {
      await this.recover();
      return await this.pool.connect();
    } catch (error) {
      throw toSubstrateError(error, { server: this.server, action: `${action} (after restarting the server)` });
    }
  }

  private async withClient<T>(action: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect(action);
    let broken = false;
    try {
      return await fn(client);
    } catch (error) {
      broken = !(error instanceof SubstrateError);
      throw toSubstrateError(error, { server: this.server, action });
    } finally {
      // A session that failed mid-way may still hold advisory locks: never hand it out again.
      client.release(broken);
    }
  }
}

/** Errors that mean the server is not there (crashed, stopped, restarting), not that it refused. */
function serverGone(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    ["ECONNREFUSED", "ECONNRESET", "57P01", "57P02", "57P03"].includes(e?.code ?? "") ||
    /Connection terminated|server closed the connection/i.test(e?.message ?? "")
  );
}
