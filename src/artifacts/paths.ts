/** Where the design artifacts live on a track's branch (contract, docs/ARCHITECTURE.md, Tracks, artifacts and roles). */
export const ARTIFACT_PATHS = {
  spec: ".consort/spec.json",
  architecture: ".consort/architecture.json",
  dbDesign: ".consort/db-design.json",
  testList: ".consort/test-list.json",
  ux: ".consort/ux.json",
} as const;

/**
 * Where a repository with Consort installed as a dev dependency (see the README) finds the JSON
 * Schemas of the artifacts and of `.github/consort.yml`: messages point there, not at `schemas/`,
 * which only this repository has.
 */
export const SCHEMAS_DIR = "node_modules/consort-for-github/schemas";

/** The JSON Schema file of an artifact or of the configuration, as a user's repository reaches it. */
export function schemaFile(name: string): string {
  return `${SCHEMAS_DIR}/${name}.schema.json`;
}

/** The files the design gate freezes (ux only when present). */
export const DESIGN_GATE_FILES = [
  ARTIFACT_PATHS.spec,
  ARTIFACT_PATHS.architecture,
  ARTIFACT_PATHS.dbDesign,
  ARTIFACT_PATHS.ux,
] as const;

/** The folder of the Navigator's review verdicts, one file per build unit. */
export const REVIEWS_DIR = ".consort/reviews";

/** The review verdict of a build unit, e.g. `.consort/reviews/T3.json`. */
export function reviewPath(unit: string): string {
  return `${REVIEWS_DIR}/${unit}.json`;
}
