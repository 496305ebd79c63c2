import { z } from "zod";
import { InvariantId, StoryId } from "../contracts/ids.js";

/**
 * `.consort/db-design.json` (contract), by the DBA: the tables, and the migration plan story by
 * story, with the persistence invariants each migration realises.
 */

const text = z.string().trim().min(1);
const sqlName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case SQL identifier such as stock_records");

const Column = z
  .object({
    name: sqlName,
    type: text,
    nullable: z.boolean(),
    default: text.optional(),
  })
  .strict();

const Table = z
  .object({
    name: sqlName,
    columns: z.array(Column).min(1),
    primaryKey: z.array(sqlName).min(1),
    unique: z.array(z.array(sqlName).min(1)).default([]),
    checks: z.array(z.object({ name: sqlName, expression: text }).strict()).default([]),
    foreignKeys: z
      .array(
        z
          .object({
            columns: z.array(sqlName).min(1),
            references: z.object({ table: sqlName, columns: z.array(sqlName).min(1) }).strict(),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();
type Table = z.infer<typeof Table>;

const MigrationStep = z
  .object({
    /** The migration's name as the migrate tool knows it, e.g. `0001_create_stock_records`. */
    id: z.string().regex(/^[A-Za-z0-9_.-]+$/),
    story: StoryId,
    description: text,
    /** Down then up recreates the same schema. */
    reversible: z.boolean(),
    /** Persistence invariants (architecture.json) this migration makes the database enforce. */
    realizes: z.array(InvariantId).default([]),
  })
  .strict();
type MigrationStep = z.infer<typeof MigrationStep>;

export const DbDesign = z
  .object({
    tables: z.array(Table).min(1, "describe at least one table"),
    migrations: z.array(MigrationStep).min(1, "plan at least one migration"),
  })
  .strict();
export type DbDesign = z.infer<typeof DbDesign>;
