import type pg from "pg";

/**
 * The newest version (`sequence`) of each state file the app has read or written, kept in the
 * app's own database (src/app-store) so that a restarted process or another replica remembers it:
 * consort/state moved back to an older commit the app itself wrote is then refused as rolled back,
 * as it is within one process. Keys are the state store's own per-file keys (opaque here), kept
 * per repository; a remembered sequence only ever grows.
 */
export interface SeenSequences {
  /** What was remembered for `repository`'s state files, by the store's key. */
  recall(repository: string): Promise<Map<string, number>>;
  /** Remember `sequences` (of `repository`'s files); a lower number than the one remembered is ignored. */
  remember(repository: string, sequences: ReadonlyMap<string, number>): Promise<void>;
}

/** The memory in the app database's `consort_seen_sequences` table, opened when first needed. */
export function seenSequencesIn(database: () => Promise<{ pool: pg.Pool }>): SeenSequences {
  const key = (repository: string) => repository.toLowerCase();
  return {
    async recall(repository) {
      const { pool } = await database();
      const rows = await pool.query<{ key: string; sequence: string }>(
        "SELECT key, sequence FROM public.consort_seen_sequences WHERE repository = $1",
        [key(repository)],
      );
      return new Map(rows.rows.map((row) => [row.key, Number(row.sequence)]));
    },
    async remember(repository, sequences) {
      if (sequences.size === 0) return;
      const { pool } = await database();
      await pool.query(
        `INSERT INTO public.consort_seen_sequences (repository, key, sequence)
         SELECT $1, k, s FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bigint[])) AS t(k, s)
         ON CONFLICT (repository, key) DO UPDATE
         SET sequence = GREATEST(public.consort_seen_sequences.sequence, excluded.sequence)`,
        [key(repository), [...sequences.keys()], [...sequences.values()]],
      );
    },
  };
}
