import type { ConsortConfig } from "../config/consort-config.js";
import { ARTIFACT_PATHS, reviewPath } from "../artifacts/paths.js";
import { CONFIG_PATH } from "../config/path.js";
import type { RoleName } from "../contracts/roles.js";
import { gateAtStage, isCycleStage, type Stage } from "../contracts/stages.js";

/**
 * The eight roles (docs/ARCHITECTURE.md, Tracks, artifacts and roles) and what each owns at each step. Ownership is per step: the Navigator
 * owns test files at RED and only its review file at review; the Driver owns code and migrations at
 * GREEN, repair and refactor; design roles own their artifact during their design step only.
 */

export interface RoleInfo {
  /** What a person reads: the heading of the role's prompt (`# Role: <title>` in roles/<role>.md). */
  title: string;
}

/** What each role is for is said once, in its prompt (roles/<role>.md). */
export const ROLES: Record<RoleName, RoleInfo> = {
  "product-owner": { title: "Product Owner" },
  "spec-author": { title: "Spec Author" },
  architect: { title: "Architect Reviewer" },
  dba: { title: "DBA" },
  "test-strategist": { title: "Test Strategist" },
  "ux-designer": { title: "UX Designer" },
  navigator: { title: "Navigator" },
  driver: { title: "Driver" },
};

/**
 * Paths nobody may change on a track, whatever the globs say: the workflows that run the cycles,
 * Consort's own configuration and the CODEOWNERS that pick approvers.
 */
export const PROTECTED_PATHS = [
  ".github/workflows/**",
  CONFIG_PATH,
  ".github/consort.yaml",
  "CODEOWNERS",
  ".github/CODEOWNERS",
  "docs/CODEOWNERS",
];

/** Who may commit at a step and which paths they may touch (`except` wins over `paths`). */
export interface StepOwnership {
  role: RoleName | null;
  paths: string[];
  except: string[];
}

const DESIGN_OWNERS = {
  stories: { role: "product-owner", path: ARTIFACT_PATHS.spec },
  spec: { role: "spec-author", path: ARTIFACT_PATHS.spec },
  architecture: { role: "architect", path: ARTIFACT_PATHS.architecture },
  "db-design": { role: "dba", path: ARTIFACT_PATHS.dbDesign },
  ux: { role: "ux-designer", path: ARTIFACT_PATHS.ux },
  "test-list": { role: "test-strategist", path: ARTIFACT_PATHS.testList },
} as const satisfies Partial<Record<Stage, { role: RoleName; path: string }>>;

/** A step whose output is one design artifact, written by one role. */
export type ArtifactStep = keyof typeof DESIGN_OWNERS;

const isArtifactStep = (stage: Stage): stage is ArtifactStep => Object.hasOwn(DESIGN_OWNERS, stage);

/** The role that writes the artifact of a design step (and the test list). */
export function authorOf(step: ArtifactStep): RoleName {
  return DESIGN_OWNERS[step].role;
}

/** What is owned at `stage` (for the build unit `unit` where it matters). */
export function ownershipAt(stage: Stage, config: ConsortConfig, unit: string | null): StepOwnership {
  if (isArtifactStep(stage)) {
    const design = DESIGN_OWNERS[stage];
    return { role: design.role, paths: [design.path], except: [] };
  }
  switch (stage) {
    case "red":
      return { role: "navigator", paths: [...config.paths.tests], except: [".consort/**"] };
    case "review":
      return { role: "navigator", paths: unit ? [reviewPath(unit)] : [], except: [] };
    case "green":
    case "repair":
    case "refactor":
      return {
        role: "driver",
        paths: [...config.paths.code, ...config.paths.migrations],
        except: [...config.paths.tests, ".consort/**"],
      };
    default:
      return { role: null, paths: [], except: [] };
  }
}

/** Who the machine is waiting for at a stage that no role commits in (for messages). */
export function waitingFor(stage: Stage): string {
  if (gateAtStage(stage)) return "a person's approving review";
  if (isCycleStage(stage)) return "a verification cycle to report";
  switch (stage) {
    case "blocked":
      return "a person to retry, renegotiate or abandon";
    case "merging":
      return "the pull request to be merged";
    default:
      return "nothing: the track has ended";
  }
}
