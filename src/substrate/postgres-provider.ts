import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import { BRANCH_ID_PATTERN } from "./names.js";
import { describeServer, toSubstrateError } from "./pg-errors.js";
import {
  SubstrateError,
  checkFork,
  type BranchProvider,
  type CreateBranchOptions,
  type DatabaseBranch,
} from "./provider.js";

/**
 * Database branches as databases on one Postgres server (design §7), used by the `postgres`
 * provider (a server given by URL) and the `local` one (the embedded server Consort starts).
 *
 * Each branch that may have children keeps a frozen base: a copy of it that nobody can connect to
 * (ALLOW_CONNECTIONS false). Children are `CREATE DATABASE … TEMPLATE <base> STRATEGY FILE_COPY`,
 * so forking works while the branch itself has open connections (a TEMPLATE of a connected
 * database waits 5 s and fails). Throwaway branches (with a ttl) cannot have children, as on
 * Lakebase, so they get no base and fork with one file copy.
 *
 * Metadata lives with each database, as a COMMENT ON DATABASE, so `list` and the parent checks
 * work across processes and vanish with the database. A new database is made under a temporary
 * name and renamed once complete: a branch name never points at a half-made copy.
 */

// Base rule: a base is taken when its branch is created (a copy of the parent's base) and again
// only by refreshBase, which our seed, migrate and promote steps call after changing the branch.

const BRANCH_COMMENT = "consort-branch:";
const BASE_COMMENT = "consort-base:";
const BASE_PREFIX = "consort_base_";
const SPARE_COMMENT = "consort-spare:";
const SPARE_PREFIX = "consort_spare_";
const NEW_PREFIX = "consort_new_";
/** pg_advisory_lock namespaces: one per branch name, one per base (shared while forking). */
const LOCK_BRANCH = 0x436f6e73;
const LOCK_BASE = 0x42617365;
/** Held by whoever takes or makes a branch's warm spare. */
const LOCK_SPARE = 0x53706172;
/** Half-made databases older than this belong to a process that died: reap them. */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

/** A branch's metadata, kept as its database's comment and parsed where it is read back. */
const BranchRecord = z.object({
  v: z.literal(1),
  /** The root database this branch descends from: one server may hold several Consort roots. */
  root: z.string(),
  parent: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string().optional(),
  frozenAt: z.string().optional(),
});
type BranchRecord = z.infer<typeof BranchRecord>;

interface CatalogEntry {
  datname: string;
  record?: BranchRecord;
  baseOf?: string;
}

export interface PostgresProviderOptions {
  kind?: "postgres" | "local";
  /** A role that may create databases; its database is where the locks are taken. */
  adminUrl: string;
  /** The database that is the root branch; made empty when missing, adopted when it exists. */
  rootDatabase: string;
  /** Called by close() after the pool ends (the local provider leaves its server running). */
  onClose?: () => Promise<void>;
  /**
   * Keep one ready copy of each base (a warm spare), made in the background after a fork, so the
   * next throwaway fork is a rename instead of a file copy. Costs one copy's disk per parent
   * (nothing extra on a reflink filesystem). Default true.
   */
  warmSpares?: boolean;
}

/** The frozen base of a branch: a deterministic, short name well inside Postgres's 63 bytes. */
export function baseDatabaseName(branch: string): string {
  return `${BASE_PREFIX}${createHash("sha256").update(branch).digest("hex").slice(0, 24)}`;
}

/** The warm spare of a branch's base (see PostgresProviderOptions.warmSpares). */
export function spareDatabaseName(branch: string): string {
  return `${SPARE_PREFIX}${createHash("sha256").update(branch).digest("hex").slice(0, 24)}`;
}

function temporaryDatabaseName(): string {
  return `${NEW_PREFIX}${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
}

function parseComment(datname: string, comment: string | null): CatalogEntry {
  // A database still under its temporary name is not a branch yet, whatever its comment says.
  if (datname.startsWith(NEW_PREFIX)) return { datname };
  if (comment?.startsWith(BRANCH_COMMENT)) {
    try {
      const record = BranchRecord.safeParse(JSON.parse(comment.slice(BRANCH_COMMENT.length)));
      return record.success ? { datname, record: record.data } : { datname };
    } catch {
      return { datname };
    }
  }
  if (comment?.startsWith(BASE_COMMENT)) return { datname, baseOf: comment.slice(BASE_COMMENT.length) };
  if (comment?.startsWith(SPARE_COMMENT)) return { datname };
  return { datname };
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

export class PostgresBranchProvider implements BranchProvider {
  readonly kind: "postgres" | "local";
  private readonly pool: pg.Pool;
  private readonly root: string;
  private readonly server: string;
  private rootReady: Promise<void> | undefined;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: PostgresProviderOptions) {
    this.kind = options.kind ?? "postgres";
    this.root = options.rootDatabase;
    this.server = describeServer(options.adminUrl);
    this.pool = new pg.Pool({ connectionString: options.adminUrl, max: 12, application_name: "consort-substrate" });
    // An idle client that loses its server must not crash the process: the next query reports it.
    this.pool.on("error", () => {});
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

    return this.withClient(`creating branch "${name}"`, async (client) => {
      await this.lock(client, LOCK_BRANCH, name);
      try {
        let catalog = await this.catalog(client);
        if (await this.reapOrphans(client, catalog, name)) catalog = await this.catalog(client);
        const existing = catalog.get(name);
        if (existing) {
          if (!existing.record || existing.record.root !== this.root) throw this.notOurs(name);
          if (existing.record.parent !== parent) {
            throw new SubstrateError(
              `branch "${name}" already exists with parent "${existing.record.parent}", not "${parent}"`,
              `delete it first (consort db delete ${name}) or fork it from "${existing.record.parent}"`,
              "PARENT_MISMATCH",
            );
          }
          return this.toBranch(existing);
        }
        const parentEntry = catalog.get(parent);
        if (!parentEntry?.record || parentEntry.record.root !== this.root) {
          throw new SubstrateError(
            `parent branch "${parent}" does not exist`,
            "create the parent first (consort db create), or fork from the root branch",
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
              `run \`consort db refresh ${parent}\` to take one`,
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
            const tmpBase = temporaryDatabaseName();
            made.push(tmpBase);
            await client.query(`CREATE DATABASE ${ident(tmpBase)} TEMPLATE ${ident(parentBase)} STRATEGY FILE_COPY`);
            await client.query(`ALTER DATABASE ${ident(tmpBase)} WITH ALLOW_CONNECTIONS false`);
            await client.query(`COMMENT ON DATABASE ${ident(tmpBase)} IS ${literal(BASE_COMMENT + name)}`);
            await client.query(`ALTER DATABASE ${ident(tmpBase)} RENAME TO ${ident(baseDatabaseName(name))}`);
            made[made.length - 1] = baseDatabaseName(name);
          }
          progress(`forking "${name}" from "${parent}"`);
          const tmp = temporaryDatabaseName();
          made.push(tmp);
          if (ttl !== undefined && (await this.takeSpare(client, parent, tmp))) {
            await client.query(`ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS true`);
          } else {
            await client.query(`CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(parentBase)} STRATEGY FILE_COPY`);
          }
          // One round trip: the comment and the rename commit together.
          await client.query(
            `COMMENT ON DATABASE ${ident(tmp)} IS ${literal(BRANCH_COMMENT + JSON.stringify(record))}; ALTER DATABASE ${ident(tmp)} RENAME TO ${ident(name)}`,
          );
          this.replenish(ttl !== undefined ? parent : name);
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
          const catalog = await this.catalog(client);
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
          await client.query(`DROP DATABASE IF EXISTS ${ident(spareDatabaseName(name))} WITH (FORCE)`);
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
        const catalog = await this.catalog(client);
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
        const sessions = await client.query<{ app: string; n: number }>(
          "SELECT coalesce(nullif(application_name, ''), 'unnamed') AS app, count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 GROUP BY 1",
          [name],
        );
        if (sessions.rowCount && sessions.rowCount > 0) {
          const who = sessions.rows.map((r) => `${r.app} (${r.n})`).join(", ");
          throw new SubstrateError(
            `branch "${name}" has open connections (${who}), so its base cannot be taken now; children keep forking from the base of ${entry.record.frozenAt ?? "its creation"}`,
            `close them (let the migrate or seed step exit), then run \`consort db refresh ${name}\``,
            "DATABASE_IN_USE",
          );
        }
        progress(`taking a new frozen base of "${name}"`);
        const tmp = temporaryDatabaseName();
        try {
          await client.query(`CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(name)} STRATEGY FILE_COPY`);
          await client.query(`ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS false`);
          await client.query(`COMMENT ON DATABASE ${ident(tmp)} IS ${literal(BASE_COMMENT + name)}`);
          await this.lock(client, LOCK_BASE, name);
          try {
            await client.query(`DROP DATABASE IF EXISTS ${ident(spareDatabaseName(name))} WITH (FORCE)`);
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
        await client.query(`COMMENT ON DATABASE ${ident(name)} IS ${literal(BRANCH_COMMENT + JSON.stringify(record))}`);
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
      const catalog = await this.catalog(client);
      return [...catalog.values()]
        .filter((e) => e.record?.root === this.root)
        .map((e) => this.toBranch(e))
        .sort((a, b) => (a.isRoot === b.isRoot ? a.name.localeCompare(b.name) : a.isRoot ? -1 : 1));
    });
  }

  async getBranch(name: string): Promise<DatabaseBranch | undefined> {
    if (name === this.root) await this.ensureRoot();
    return this.withClient(`reading branch "${name}"`, async (client) => {
      const row = await client.query<{ datname: string; comment: string | null }>(
        "SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
        [name],
      );
      const first = row.rows[0];
      if (!first) return undefined;
      const entry = parseComment(first.datname, first.comment);
      if (!entry.record || entry.record.root !== this.root) return undefined;
      return this.toBranch(entry);
    });
  }

  async connectionUrl(name: string): Promise<string> {
    const branch = await this.getBranch(name);
    if (!branch) throw this.missing(name);
    const url = new URL(this.options.adminUrl);
    url.pathname = `/${encodeURIComponent(name)}`;
    return url.toString();
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
        const catalog = await this.catalog(client);
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
          await client.query(
            `COMMENT ON DATABASE ${ident(this.root)} IS ${literal(BRANCH_COMMENT + JSON.stringify(record))}`,
          );
        }
        if (!catalog.has(baseDatabaseName(this.root))) {
          const tmp = temporaryDatabaseName();
          try {
            await client.query(`CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(this.root)} STRATEGY FILE_COPY`);
            await client.query(`ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS false`);
            await client.query(`COMMENT ON DATABASE ${ident(tmp)} IS ${literal(BASE_COMMENT + this.root)}`);
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

  /** Take the parent's warm spare under the name `target`; false when there is none free right now. */
  private async takeSpare(client: pg.PoolClient, parent: string, target: string): Promise<boolean> {
    if (this.options.warmSpares === false) return false;
    const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
      LOCK_SPARE,
      parent,
    ]);
    if (!got.rows[0]?.ok) return false;
    try {
      const spare = spareDatabaseName(parent);
      const row = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [spare]);
      if (row.rowCount === 0) return false;
      await client.query(`ALTER DATABASE ${ident(spare)} RENAME TO ${ident(target)}`);
      return true;
    } finally {
      await this.unlock(client, LOCK_SPARE, parent);
    }
  }

  /** Make the branch's warm spare in the background; a missing spare only makes the next fork slower. */
  private replenish(branch: string): void {
    if (this.options.warmSpares === false) return;
    const job = this.withClient(`preparing a warm spare of "${branch}"`, async (client) => {
      const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
        LOCK_SPARE,
        branch,
      ]);
      if (!got.rows[0]?.ok) return;
      try {
        // Shared base lock: a refresh or delete waits for us, then drops what we made with the old base.
        await this.lock(client, LOCK_BASE, branch, true);
        try {
          const present = await client.query<{ datname: string }>(
            "SELECT datname FROM pg_database WHERE datname = ANY($1)",
            [[spareDatabaseName(branch), baseDatabaseName(branch)]],
          );
          const names = new Set(present.rows.map((r) => r.datname));
          if (names.has(spareDatabaseName(branch)) || !names.has(baseDatabaseName(branch))) return;
          const tmp = temporaryDatabaseName();
          try {
            await client.query(
              `CREATE DATABASE ${ident(tmp)} TEMPLATE ${ident(baseDatabaseName(branch))} STRATEGY FILE_COPY`,
            );
            await client.query(
              `ALTER DATABASE ${ident(tmp)} WITH ALLOW_CONNECTIONS false; COMMENT ON DATABASE ${ident(tmp)} IS ${literal(SPARE_COMMENT + branch)}; ALTER DATABASE ${ident(tmp)} RENAME TO ${ident(spareDatabaseName(branch))}`,
            );
          } catch (error) {
            await client.query(`DROP DATABASE IF EXISTS ${ident(tmp)} WITH (FORCE)`).catch(() => {});
            throw error;
          }
        } finally {
          await this.unlock(client, LOCK_BASE, branch, true);
        }
      } finally {
        await this.unlock(client, LOCK_SPARE, branch);
      }
    }).catch(() => {});
    this.pending.add(job);
    void job.finally(() => this.pending.delete(job));
  }

  /** Drop expired throwaway branches of this root and half-made copies a dead process left. */
  private async reapOrphans(
    client: pg.PoolClient,
    catalog: Map<string, CatalogEntry>,
    except: string,
  ): Promise<boolean> {
    const now = Date.now();
    let reaped = false;
    for (const entry of catalog.values()) {
      let drop = false;
      if (entry.datname.startsWith(NEW_PREFIX)) {
        const born = parseInt(entry.datname.slice(NEW_PREFIX.length).split("_")[0] ?? "", 36);
        drop = Number.isFinite(born) && now - born > ORPHAN_AGE_MS;
      } else if (entry.record?.root === this.root && entry.record.expiresAt && entry.datname !== except) {
        drop = Date.parse(entry.record.expiresAt) < now;
      }
      if (drop) {
        await client.query(`DROP DATABASE IF EXISTS ${ident(entry.datname)} WITH (FORCE)`).catch(() => {});
        reaped = true;
      }
    }
    return reaped;
  }

  private async catalog(client: pg.PoolClient): Promise<Map<string, CatalogEntry>> {
    const rows = await client.query<{ datname: string; comment: string | null }>(
      "SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database",
    );
    return new Map(rows.rows.map((r) => [r.datname, parseComment(r.datname, r.comment)]));
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
        "pass a git branch name through sanitiseBranchName, or use the sanitised id `consort db list` shows",
        "INVALID_BRANCH_NAME",
      );
    }
  }

  private missing(name: string): SubstrateError {
    return new SubstrateError(
      `branch "${name}" does not exist on ${this.server}`,
      "list branches with `consort db list`, or create it with `consort db create`",
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

  private async withClient<T>(action: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw toSubstrateError(error, { server: this.server, action });
    }
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
