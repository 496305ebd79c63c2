import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ArtifactIssue } from "../artifacts/issues.js";
import { ARTIFACT_PATHS, REVIEWS_DIR } from "../artifacts/paths.js";
import { ReviewVerdict } from "../contracts/review.js";
import { CHECKPOINTS, parseArtifact, validateArtifacts, type Checkpoint } from "../artifacts/validate.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { CONFIG_PATH, ConfigError, configIssues, readCheckoutConfig } from "../config/load.js";
import { sanitiseBranchName, snapshotSchema, type BranchProvider } from "../substrate/index.js";
import { defineTool } from "./registry.js";
import { currentBranch } from "./track-state.js";

/**
 * The one validation of a checkout (`consort validate` renders it, `validate_artifacts` returns
 * it): the configuration, the design artifacts as of a checkpoint, and the review verdicts.
 */

/** The configuration of a checkout and where it came from, or every problem with it. */
function loadConfig(dir: string, file?: string): { config?: ConsortConfig; issues: ArtifactIssue[]; source: string } {
  try {
    const loaded = readCheckoutConfig(dir, file);
    const source = loaded.source === "defaults" ? `defaults (no ${CONFIG_PATH})` : (file ?? CONFIG_PATH);
    return { config: loaded.config, issues: [], source };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { issues: configIssues(error), source: error.file };
  }
}

/** Every artifact text under `.consort/` of a checkout, by repository path. */
function readArtifacts(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const path of Object.values(ARTIFACT_PATHS)) {
    const file = join(dir, path);
    if (existsSync(file)) files[path] = readFileSync(file, "utf8");
  }
  const reviews = join(dir, REVIEWS_DIR);
  if (existsSync(reviews)) {
    for (const name of readdirSync(reviews)
      .filter((n) => n.endsWith(".json"))
      .sort())
      files[`${REVIEWS_DIR}/${name}`] = readFileSync(join(reviews, name), "utf8");
  }
  return files;
}

/** The furthest checkpoint the files present reach (a spec with NFRs is past `stories`, and so on). */
function inferCheckpoint(files: Record<string, string>): Checkpoint {
  if (files[ARTIFACT_PATHS.testList] !== undefined) return "test-list";
  if (files[ARTIFACT_PATHS.ux] !== undefined) return "ux";
  if (files[ARTIFACT_PATHS.dbDesign] !== undefined) return "design";
  if (files[ARTIFACT_PATHS.architecture] !== undefined) return "architecture";
  if (/"nfrs"\s*:/.test(files[ARTIFACT_PATHS.spec] ?? "")) return "spec";
  return "stories";
}

export interface ValidateReport {
  ok: boolean;
  checkpoint: Checkpoint;
  config: string;
  files: string[];
  issues: ArtifactIssue[];
  /** Tables a foreign key references that db-design.json does not describe: the parent database must hold them. */
  foreignTables: string[];
}

/**
 * Validate a checkout's configuration and artifacts; every problem, not the first. The checkpoint
 * defaults to as far as the files go, so an early design is not failed for files not due yet.
 */
export function validateCheckout(
  dir: string,
  options: { config?: string; upTo?: Checkpoint; existingTables?: ReadonlyMap<string, ReadonlySet<string>> } = {},
): ValidateReport {
  const loaded = loadConfig(dir, options.config);
  const files = readArtifacts(dir);
  const checkpoint = options.upTo ?? inferCheckpoint(files);
  // A repository with no design yet has nothing to validate but its configuration.
  const nothingYet = Object.keys(files).length === 0 && !options.upTo;
  const result = nothingYet
    ? { issues: [] }
    : validateArtifacts(files, checkpoint, {
        testGlobs: loaded.config?.paths.tests,
        ...(options.existingTables ? { existingTables: options.existingTables } : {}),
      });
  const design = "artifacts" in result ? result.artifacts.dbDesign : undefined;
  const described = new Set(design?.tables.map((table) => table.name));
  const foreignTables = [
    ...new Set(
      design?.tables.flatMap((table) =>
        table.foreignKeys.map((fk) => fk.references.table).filter((name) => !described.has(name)),
      ),
    ),
  ];
  const issues = [...loaded.issues, ...result.issues];
  for (const [path, text] of Object.entries(files)) {
    if (!path.startsWith(`${REVIEWS_DIR}/`)) continue;
    const review = parseArtifact(path, text, ReviewVerdict);
    issues.push(...review.issues);
    const unit = path.slice(REVIEWS_DIR.length + 1, -".json".length);
    if (review.value && review.value.unit !== unit)
      issues.push({
        file: path,
        path: "$.unit",
        message: `the review names ${review.value.unit} but is filed as ${unit}`,
        fix: `set "unit": "${unit}" or rename the file`,
      });
  }
  return {
    ok: issues.length === 0,
    checkpoint,
    config: loaded.source,
    files: Object.keys(files).sort(),
    issues,
    foreignTables,
  };
}

/**
 * The validation again, with the foreign keys to tables db-design.json does not describe checked
 * against the schema of the track's database branch (its parent's, with the track's migrations),
 * else of the root. Fails closed: a database that cannot be read is an issue, not a pass.
 */
export async function validateAgainstDatabase(
  dir: string,
  report: ValidateReport,
  options: { config?: string; upTo?: Checkpoint },
  provider: () => Promise<BranchProvider>,
): Promise<ValidateReport> {
  if (report.foreignTables.length === 0) return report;
  let existingTables: Map<string, Set<string>>;
  try {
    const source = await provider();
    const track = sanitiseBranchName(await currentBranch(dir));
    const branch = (await source.getBranch(track).catch(() => undefined)) ? track : await source.rootBranch();
    const schema = await snapshotSchema(await source.connectionUrl(branch));
    existingTables = new Map();
    for (const table of Object.values(schema.tables)) {
      const columns = new Set(table.columns.map((column) => column.name));
      existingTables.set(`${table.schema}.${table.name}`, columns);
      if (table.schema === "public") existingTables.set(table.name, columns);
    }
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    const issues = [
      ...report.issues,
      {
        file: ARTIFACT_PATHS.dbDesign,
        path: "$.tables",
        message: `foreign keys reference ${report.foreignTables.join(", ")}, which db-design.json does not describe, and the parent database's schema could not be read to find them: ${reason}`,
        fix: "make the configured database reachable (consort db list), or describe the tables the feature creates",
      },
    ];
    return { ...report, ok: false, issues };
  }
  return validateCheckout(dir, { ...options, existingTables });
}

const ValidateArtifactsInput = z
  .object({
    checkpoint: z
      .enum(CHECKPOINTS)
      .optional()
      .describe(
        "How far the design lane has come: later checkpoints require and cross-check more files. test-list checks everything. Default: as far as the files present go.",
      ),
  })
  .strict();

export const ValidateArtifactsOutput = z.object({
  ok: z.boolean().describe("True only when there is no issue at all."),
  checkpoint: z.enum(CHECKPOINTS).describe("The checkpoint checked: the one asked for, or as far as the files go."),
  issues: z.array(ArtifactIssue),
  filesRead: z.array(z.string()).describe("The artifact files found in the checkout."),
});

export const validateArtifactsTool = defineTool({
  name: "validate_artifacts",
  title: "Validate the design artifacts",
  description:
    "Check the checkout's .consort/ design artifacts (spec, architecture, db-design, ux, test list, review verdicts) and .github/consort.yml: each file's format, and the cross-file rules (unique ids, no dangling reference, every acceptance criterion tested, every persistence invariant realised by the db design and proven by a test). " +
    "A foreign key to a table db-design.json does not describe must name a table the track's database branch (else the root) already holds. " +
    "Every issue names the file, the JSON path and the fix. Call it after editing an artifact and before committing: the app rejects a commit whose artifacts do not validate.",
  input: ValidateArtifactsInput,
  output: ValidateArtifactsOutput,
  readOnly: true,
  idempotent: true,
  readsCheckout: true,
  async run(input, context) {
    const options = input.checkpoint ? { upTo: input.checkpoint } : {};
    const report = await validateAgainstDatabase(
      context.repoPath,
      validateCheckout(context.repoPath, options),
      options,
      () => context.provider(),
    );
    return {
      ok: report.ok,
      checkpoint: report.checkpoint,
      issues: report.issues,
      filesRead: report.files,
    };
  },
});
