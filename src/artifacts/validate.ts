import { z } from "zod";
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
  /** For a file checked in part: each list's entries that parsed, by their index in the file. */
  const kept = new Map<string, Map<PropertyKey, number[]>>();
  const add = (file: string, path: Array<string | number>, message: string, fix: string) => {
    const [list, index, ...rest] = path;
    const original = typeof index === "number" ? kept.get(file)?.get(list!)?.[index] : undefined;
    issues.push({ file, path: jsonPath(original === undefined ? path : [list!, original, ...rest]), message, fix });
  };

  const salvaged = new Set<keyof ParsedArtifacts>();
  /**
   * Parse the artifact `key` into `artifacts`, keeping its issues; its value when it parsed. A file
   * with shape errors is still cross-checked on what parses of it, so every problem shows at once.
   */
  const take = <K extends keyof ParsedArtifacts>(
    key: K,
    schema: z.ZodType<NonNullable<ParsedArtifacts[K]>>,
  ): ParsedArtifacts[K] => {
    const file = ARTIFACT_PATHS[key];
    const parsed = parseArtifact(file, files[file], schema);
    issues.push(...parsed.issues);
    if (parsed.value !== undefined || parsed.issues[0]?.path === "$") return (artifacts[key] = parsed.value);
    const rest = salvage(schema, JSON.parse(files[file]!) as unknown);
    if (rest === undefined) return undefined;
    salvaged.add(key);
    kept.set(file, rest.kept);
    return (artifacts[key] = rest.value);
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

  // What parsed only in part served the cross-checks; callers get only what parsed whole.
  for (const key of salvaged) delete artifacts[key];
  return { ok: issues.length === 0, issues, artifacts };
}

/**
 * What of an artifact with shape errors can still be checked against the others: its entries that
 * parse, under the schema without its whole-file rules (ids in order, …), which are reported anyway.
 */
function salvage<T>(schema: z.ZodType<T>, json: unknown): { value: T; kept: Map<PropertyKey, number[]> } | undefined {
  const shape = schema instanceof z.ZodObject ? (schema.clone({ ...schema.def, checks: [] }) as z.ZodType<T>) : schema;
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const value: Record<PropertyKey, unknown> = { ...json };
  const kept = new Map<PropertyKey, number[]>();
  // Each round drops the list entries the last one found broken; a broken entry's siblings stay.
  for (let round = 0; round < 3; round++) {
    const result = shape.safeParse(value);
    if (result.success) return { value: result.data, kept };
    const broken = new Map<PropertyKey, Set<number>>();
    for (const issue of result.error.issues) {
      const [list, index] = issue.path;
      if (list === undefined || typeof index !== "number" || !Array.isArray(value[list])) return undefined;
      broken.set(list, (broken.get(list) ?? new Set()).add(index));
    }
    for (const [list, indexes] of broken) {
      const items = value[list] as unknown[];
      const origins = kept.get(list) ?? items.map((_, index) => index);
      kept.set(
        list,
        origins.filter((_, index) => !indexes.has(index)),
      );
      value[list] = items.filter((_, index) => !indexes.has(index));
    }
  }
  return undefined;
}
