/** Where the design artifacts live on a track's branch (contract, design §2). */
export const ARTIFACT_PATHS = {
  spec: ".consort/spec.json",
  architecture: ".consort/architecture.json",
  dbDesign: ".consort/db-design.json",
  testList: ".consort/test-list.json",
  ux: ".consort/ux.json",
} as const;

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
