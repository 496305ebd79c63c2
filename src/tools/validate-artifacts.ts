import { readdir, readFile } from "node:fs/promises";
import { readIfExists } from "../cycle/workspace.js";
import { join } from "node:path";
import { z } from "zod";
import { ArtifactIssue } from "../artifacts/issues.js";
import { ARTIFACT_PATHS, REVIEWS_DIR } from "../artifacts/paths.js";
import { ReviewVerdict } from "../artifacts/review.js";
import { CHECKPOINTS, parseArtifact, validateArtifacts } from "../artifacts/validate.js";
import { ConfigError, configIssues, readCheckoutConfig } from "../config/load.js";
import { defineTool } from "./registry.js";

/** `validate_artifacts`: the design artifacts and the configuration of the checkout, as `consort validate` checks them. */

const ValidateArtifactsInput = z
  .object({
    checkpoint: z
      .enum(CHECKPOINTS)
      .default("test-list")
      .describe(
        "How far the design lane has come: later checkpoints require and cross-check more files. test-list checks everything.",
      ),
  })
  .strict();

export const ValidateArtifactsOutput = z.object({
  ok: z.boolean().describe("True only when there is no issue at all."),
  checkpoint: z.enum(CHECKPOINTS),
  issues: z.array(ArtifactIssue),
  filesRead: z.array(z.string()).describe("The artifact files found in the checkout."),
});

export const validateArtifactsTool = defineTool({
  name: "validate_artifacts",
  title: "Validate the design artifacts",
  description:
    "Check the checkout's .consort/ design artifacts (spec, architecture, db-design, ux, test list, review verdicts) and .github/consort.yml: each file's format, and the cross-file rules (unique ids, no dangling reference, every acceptance criterion tested, every persistence invariant realised by the db design and proven by a test). " +
    "Every issue names the file, the JSON path and the fix. Call it after editing an artifact and before committing: the app rejects a commit whose artifacts do not validate.",
  input: ValidateArtifactsInput,
  output: ValidateArtifactsOutput,
  readOnly: true,
  idempotent: true,
  readsCheckout: true,
  async run(input, context) {
    const files: Record<string, string | undefined> = {};
    for (const path of Object.values(ARTIFACT_PATHS)) files[path] = await readIfExists(join(context.repoPath, path));
    const issues: ArtifactIssue[] = [];

    let testGlobs: string[] | undefined;
    try {
      testGlobs = readCheckoutConfig(context.repoPath).config.paths.tests;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...configIssues(error));
    }

    const result = validateArtifacts(files, input.checkpoint, testGlobs ? { testGlobs } : {});
    issues.push(...result.issues);

    const reviews = await readReviews(context.repoPath);
    for (const [path, text] of Object.entries(reviews)) issues.push(...parseArtifact(path, text, ReviewVerdict).issues);

    return {
      ok: issues.length === 0,
      checkpoint: input.checkpoint,
      issues,
      filesRead: [
        ...Object.entries(files)
          .filter(([, text]) => text !== undefined)
          .map(([path]) => path),
        ...Object.keys(reviews),
      ],
    };
  },
});

/** `.consort/reviews/<unit>.json`, each a Navigator's verdict. */
async function readReviews(repoPath: string): Promise<Record<string, string>> {
  let names: string[];
  try {
    names = await readdir(join(repoPath, REVIEWS_DIR));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  const out: Record<string, string> = {};
  for (const name of names.filter((n) => n.endsWith(".json")).sort())
    out[`${REVIEWS_DIR}/${name}`] = await readFile(join(repoPath, REVIEWS_DIR, name), "utf8");
  return out;
}
