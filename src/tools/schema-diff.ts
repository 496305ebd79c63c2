import { z } from "zod";
import { compareBranches, sanitiseBranchName, type SchemaComparison } from "../substrate/index.js";
import type { ToolContext } from "./context.js";
import { defineTool } from "./registry.js";
import { currentBranch } from "./track-state.js";

/**
 * `schema_diff`: a database branch's schema against its parent's, from the catalogs, with the
 * lint that counts the parent's real rows a risky change would break or lose. `db_branch` with
 * action `diff` answers with the same comparison.
 */

export const SchemaComparisonOutput = z.object({
  branch: z.string(),
  parent: z.string(),
  ok: z.boolean().describe("True only when every risky change was counted and breaks or loses no row of the parent."),
  summary: z.object({ added: z.number().int(), dropped: z.number().int(), changed: z.number().int() }),
  changes: z.array(
    z.object({
      object: z.enum(["table", "column", "constraint", "index", "enum", "view", "sequence"]),
      action: z.enum(["added", "dropped", "changed"]),
      name: z.string().describe("Qualified name, e.g. public.stock_records.quantity."),
      details: z.array(z.string()),
    }),
  ),
  findings: z
    .array(
      z.object({
        rule: z.string().describe("e.g. column-dropped, not-null-added, unique-added, type-changed."),
        change: z.string(),
        rows: z
          .number()
          .int()
          .nullable()
          .describe("Rows of the parent the change would break or lose; null when they could not be counted."),
        message: z.string(),
        reason: z.string().optional(),
      }),
    )
    .describe("The lint: one finding per risky change."),
  markdown: z.string().describe("The same, rendered as the consort/schema check run shows it."),
});
export type SchemaComparisonOutput = z.infer<typeof SchemaComparisonOutput>;

function comparisonOutput(comparison: SchemaComparison): SchemaComparisonOutput {
  return {
    branch: comparison.branch,
    parent: comparison.parent,
    ok: comparison.ok,
    summary: comparison.diff.summary,
    changes: comparison.diff.changes.map((change) => ({
      object: change.object,
      action: change.action,
      name: change.name,
      details: change.details,
    })),
    findings: comparison.lint.findings.map((finding) => ({
      rule: finding.rule,
      change: finding.change,
      rows: finding.rows,
      message: finding.message,
      ...(finding.reason ? { reason: finding.reason } : {}),
    })),
    markdown: comparison.markdown,
  };
}

/** Compare `branch` (default: the one paired with the checkout's git branch) with its parent or `against`. */
export async function compareForTool(
  context: ToolContext,
  branch: string | undefined,
  against: string | undefined,
): Promise<SchemaComparisonOutput> {
  const provider = await context.provider();
  const name = branch ?? sanitiseBranchName(await currentBranch(context.repoPath));
  return comparisonOutput(await compareBranches(provider, name, against));
}

const SchemaDiffInput = z
  .object({
    branch: z
      .string()
      .trim()
      .min(1)
      .max(63)
      .optional()
      .describe("The database branch to inspect. Default: the branch paired with the checkout's git branch."),
    against: z.string().trim().min(1).max(63).optional().describe("The branch to compare with. Default: its parent."),
  })
  .strict();

export const schemaDiffTool = defineTool({
  name: "schema_diff",
  title: "Schema diff against the parent",
  description:
    "Compare a database branch's schema with its parent's (or another branch's), from the Postgres catalogs: tables, columns, constraints, indexes, enums, views, sequences. " +
    "A lint counts the parent's real rows each risky change would break or lose (a column dropped, NOT NULL or UNIQUE added, a type narrowed). " +
    "Use it after migrating a throwaway or track branch to see what the migration does to existing data before the DBA and reviewers do.",
  input: SchemaDiffInput,
  output: SchemaComparisonOutput,
  readOnly: true,
  idempotent: true,
  async run(input, context) {
    return compareForTool(context, input.branch, input.against);
  },
});
