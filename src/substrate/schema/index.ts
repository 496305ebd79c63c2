import { SubstrateError, type BranchProvider } from "../provider.js";
import { diffSchemas, type SchemaDiff } from "./diff.js";
import { lintSchemaChange, type SchemaLint } from "./lint.js";
import { renderSchemaDiff } from "./render.js";
import { snapshotSchema, type SchemaSnapshot } from "./snapshot.js";
import { consortCommand } from "../../contracts/command.js";

export * from "./snapshot.js";
export * from "./diff.js";
export * from "./lint.js";
export * from "./render.js";

export interface SchemaComparison {
  branch: string;
  parent: string;
  diff: SchemaDiff;
  lint: SchemaLint;
  /** Markdown for the `consort/schema` check run, within 65,000 characters. */
  markdown: string;
  /** True when the lint found no row broken or lost and nothing it could not count. */
  ok: boolean;
}

/** Snapshot both databases, diff them, count the affected rows on the parent, and render. */
export async function compareSchemas(
  parentUrl: string,
  childUrl: string,
  names: { branch: string; parent: string },
): Promise<SchemaComparison> {
  const [parent, child]: [SchemaSnapshot, SchemaSnapshot] = await Promise.all([
    snapshotSchema(parentUrl),
    snapshotSchema(childUrl),
  ]);
  const diff = diffSchemas(parent, child);
  const lint = await lintSchemaChange(parentUrl, parent, diff);
  return { ...names, diff, lint, markdown: renderSchemaDiff(diff, lint, names), ok: lint.ok };
}

/** The schema of `branch` against its parent (or `against`), on any provider. */
export async function compareBranches(
  provider: BranchProvider,
  branch: string,
  against?: string,
): Promise<SchemaComparison> {
  const info = await provider.getBranch(branch);
  if (!info) {
    throw new SubstrateError(
      `branch "${branch}" does not exist`,
      `list branches with \`${consortCommand("db list")}\``,
      "BRANCH_MISSING",
    );
  }
  const parent = against ?? info.parent;
  if (!parent) {
    throw new SubstrateError(
      `"${branch}" is the root branch and has no parent to compare with`,
      "pass --against <branch>",
      "INVALID_PARENT",
    );
  }
  const [parentUrl, childUrl] = await Promise.all([provider.connectionUrl(parent), provider.connectionUrl(branch)]);
  return compareSchemas(parentUrl, childUrl, { branch, parent });
}

/** What a person needs from a comparison: every lint finding that breaks or loses rows, or could not be counted. */
export function breakingFindings(comparison: SchemaComparison): string[] {
  return comparison.lint.findings
    .filter((f) => f.rows === null || f.rows > 0)
    .map((f) => (f.rows === null ? `${f.message} (could not count: ${f.reason ?? "unknown"})` : f.message));
}
