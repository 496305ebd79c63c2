import { createHash, randomBytes } from "node:crypto";
import type pg from "pg";
import { z } from "zod";
import { ident, literal } from "./sql.js";

/**
 * How the postgres provider names and labels its databases on a server, and reads them back as a
 * catalog. A branch is a database named as the branch, labelled with its record (a COMMENT ON
 * DATABASE, so the metadata works across processes and vanishes with the database). Its frozen
 * base and its warm spares are named from a hash of the branch and labelled with whose they are.
 * A database being made has a temporary name that carries its maker's server process id, so a
 * copy whose maker is gone is known to be half-made at once.
 */

const BRANCH_COMMENT = "consort-branch:";
const BASE_COMMENT = "consort-base:";
const BASE_PREFIX = "consort_base_";
const SPARE_COMMENT = "consort-spare:";
const SPARE_PREFIX = "consort_spare_";
const NEW_PREFIX = "consort_new_";

/** The most warm spares one parent keeps (a burst of this many concurrent forks is served from spares). */
export const MAX_SPARES = 16;

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
export type BranchRecord = z.infer<typeof BranchRecord>;

/** One database of the server as its name and label say: a branch (`record`), a base or a spare of one, or neither. */
export interface CatalogEntry {
  datname: string;
  record?: BranchRecord;
  baseOf?: string;
  spareOf?: string;
}

const hashOf = (branch: string) => createHash("sha256").update(branch).digest("hex").slice(0, 24);

/** The frozen base of a branch: a deterministic, short name well inside Postgres's 63 bytes. */
export function baseDatabaseName(branch: string): string {
  return `${BASE_PREFIX}${hashOf(branch)}`;
}

/** The warm spare number `index` of a branch's base (see PostgresProviderOptions.warmSpares). */
export function spareDatabaseName(branch: string, index = 0): string {
  const name = `${SPARE_PREFIX}${hashOf(branch)}`;
  return index === 0 ? name : `${name}_${index}`;
}

/** Every name a spare of `branch` may have. */
export const allSpareNames = (branch: string): string[] =>
  Array.from({ length: MAX_SPARES }, (_, i) => spareDatabaseName(branch, i));

/** A name for a database `client`'s session is making: it carries the session's server process id. */
export function temporaryDatabaseName(client: pg.PoolClient): string {
  // The server process id of the session, from the login handshake.
  const pid = (client as unknown as { processID?: number | null }).processID ?? 0;
  return `${NEW_PREFIX}${Date.now().toString(36)}_${pid.toString(36)}_${randomBytes(4).toString("hex")}`;
}

/** Whether `datname` is a database still being made, under its temporary name. */
export const isBeingMade = (datname: string): boolean => datname.startsWith(NEW_PREFIX);

/** Who is making a database under a temporary name (server process id; 0 or NaN for names from before makers were named), and since when (ms). */
export function makerOf(datname: string): { pid: number; born: number } {
  const [born, maker] = datname.slice(NEW_PREFIX.length).split("_");
  return { pid: parseInt(maker ?? "", 36), born: parseInt(born ?? "", 36) };
}

function parseComment(datname: string, comment: string | null): CatalogEntry {
  // A database still under its temporary name is not a branch yet, whatever its comment says.
  if (isBeingMade(datname)) return { datname };
  if (comment?.startsWith(BRANCH_COMMENT)) {
    try {
      const record = BranchRecord.safeParse(JSON.parse(comment.slice(BRANCH_COMMENT.length)));
      return record.success ? { datname, record: record.data } : { datname };
    } catch {
      return { datname };
    }
  }
  if (comment?.startsWith(BASE_COMMENT)) return { datname, baseOf: comment.slice(BASE_COMMENT.length) };
  if (comment?.startsWith(SPARE_COMMENT)) return { datname, spareOf: comment.slice(SPARE_COMMENT.length) };
  return { datname };
}

/** Every database of the server (or only `datname`), by name, as its label says. */
export async function readCatalog(client: pg.PoolClient, datname?: string): Promise<Map<string, CatalogEntry>> {
  const rows = await client.query<{ datname: string; comment: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database${datname === undefined ? "" : " WHERE datname = $1"}`,
    datname === undefined ? [] : [datname],
  );
  return new Map(rows.rows.map((r) => [r.datname, parseComment(r.datname, r.comment)]));
}

/** The statement that labels database `datname` as a branch with `record`. */
export const labelAsBranch = (datname: string, record: BranchRecord): string =>
  `COMMENT ON DATABASE ${ident(datname)} IS ${literal(BRANCH_COMMENT + JSON.stringify(record))}`;

/** The statement that labels database `datname` as the frozen base of `branch`. */
export const labelAsBase = (datname: string, branch: string): string =>
  `COMMENT ON DATABASE ${ident(datname)} IS ${literal(BASE_COMMENT + branch)}`;

/** The statement that labels database `datname` as a warm spare of `branch`'s base. */
export const labelAsSpare = (datname: string, branch: string): string =>
  `COMMENT ON DATABASE ${ident(datname)} IS ${literal(SPARE_COMMENT + branch)}`;
