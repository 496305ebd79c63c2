import type { z } from "zod";
import {
  checkArchitecture,
  checkDbDesign,
  checkSpec,
  checkTestList,
  checkUx,
  type Checking,
  type Checkpoint,
  type ParsedArtifacts,
  type ValidateOptions,
} from "./checks.js";
import { jsonPath, zodIssues, type ArtifactIssue } from "./issues.js";
import { ARTIFACT_PATHS, SCHEMAS_DIR } from "./paths.js";
import { Spec } from "./spec.js";

export { CHECKPOINTS, type Checkpoint } from "./checks.js";

/**
 * Shape and meaning of the design artifacts together. Shape is zod; meaning is the cross-file
 * rules (unique ids, no dangling reference, every AC tested, every persistence invariant realised
 * by the db design and proven by a test; in checks.ts). Each problem names the file, the JSON path and the fix.
 */

export interface ValidationResult {
  ok: boolean;
  issues: ArtifactIssue[];
  artifacts: ParsedArtifacts;
}

/** Parse one artifact's text: JSON first, then the schema. */
export function parseArtifact<S extends z.ZodType>(
  file: string,
  text: string | undefined,
  schema: S,
): { value?: z.infer<S>; issues: ArtifactIssue[] } {
  if (text === undefined)
    return {
      issues: [
        { file, path: "$", message: "the file is missing", fix: `create ${file} (see ${SCHEMAS_DIR}/ for its format)` },
      ],
    };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      issues: [{ file, path: "$", message: `not valid JSON: ${(error as Error).message}`, fix: "fix the JSON syntax" }],
    };
  }
  const result = schema.safeParse(json);
  if (!result.success) return { issues: zodIssues(file, result.error) };
  return { value: result.data, issues: [] };
}

/**
 * Validate the artifacts needed at `checkpoint` (given as path → text; missing files are absent).
 * `stories` needs the spec's stories; `spec` also its NFRs; then architecture, db-design, ux (when a
 * story is user-facing), `design` (everything the design gate freezes), `test-list` (plus the list).
 */
export function validateArtifacts(
  files: Record<string, string | undefined>,
  checkpoint: Checkpoint,
  options: ValidateOptions = {},
): ValidationResult {
  const issues: ArtifactIssue[] = [];
  const artifacts: ParsedArtifacts = {};
  const add = (file: string, path: Array<string | number>, message: string, fix: string) =>
    issues.push({ file, path: jsonPath(path), message, fix });

  /** Parse the artifact `key` into `artifacts`, keeping its issues; its value when it parsed. */
  const take = <K extends keyof ParsedArtifacts>(
    key: K,
    schema: z.ZodType<NonNullable<ParsedArtifacts[K]>>,
  ): ParsedArtifacts[K] => {
    const file = ARTIFACT_PATHS[key];
    const parsed = parseArtifact(file, files[file], schema);
    issues.push(...parsed.issues);
    return (artifacts[key] = parsed.value);
  };

  const spec = take("spec", Spec);
  const stories = new Set(spec?.stories.map((s) => s.id) ?? []);
  const acs = new Set(spec?.stories.flatMap((s) => s.acceptanceCriteria.map((a) => a.id)) ?? []);
  const nfrs = new Set(spec?.nfrs?.map((n) => n.id) ?? []);

  const c: Checking = { files, checkpoint, options, artifacts, add, take, spec, stories, acs, nfrs };
  if (spec) checkSpec(c, spec);
  checkArchitecture(c);
  checkDbDesign(c);
  checkUx(c);
  checkTestList(c);

  return { ok: issues.length === 0, issues, artifacts };
}
