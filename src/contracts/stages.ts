import { GATE_NAMES, type GateName } from "./gates.js";

/**
 * Where a track stands and the steps it takes (docs/ARCHITECTURE.md, The machine): the machine
 * decides over these, the roles own paths at them, the checks and the board name them.
 */

/** The design-lane steps a person may reopen with `renegotiate` (scope `design`). */
export const DESIGN_STEPS = ["stories", "spec", "architecture", "db-design", "ux"] as const;
export type DesignStep = (typeof DESIGN_STEPS)[number];

/** The build lane of one unit: RED, GREEN (with repair), review, refactor. */
const BUILD_STAGES = [
  "red",
  "red-verify",
  "green",
  "green-verify",
  "repair",
  "review",
  "refactor",
  "refactor-verify",
] as const;
export type BuildStage = (typeof BUILD_STAGES)[number];
export const isBuildStage = (stage: string): stage is BuildStage => (BUILD_STAGES as readonly string[]).includes(stage);

/**
 * Where a track stands. Design lane, gates, build lane (one unit at a time), release, end states.
 * `ux` is visited only when the spec marks a story as user-facing.
 */
export const STAGES = [
  ...DESIGN_STEPS,
  "design-gate",
  "test-list",
  "test-list-gate",
  ...BUILD_STAGES,
  "blocked",
  // A maintenance branch waiting for its change (src/roles/maintenance.ts): no design lane, no build lane.
  "maintenance",
  "deploying",
  "deploy-gate",
  "promote-gate",
  "merging",
  "promoting",
  "done",
  "abandoned",
] as const;
export type Stage = (typeof STAGES)[number];

/** The stage where a person approves `gate`: `design` → `design-gate`. */
export const gateStage = (gate: GateName): Stage => `${gate}-gate`;
/** The gate a gate stage waits on (`design-gate` → `design`); none at any other stage. */
export const gateAtStage = (stage: string): GateName | undefined =>
  GATE_NAMES.find((gate) => gateStage(gate) === stage);

/**
 * The stages where the track waits for a dispatched cycle to report (a verification, the release,
 * the promotion): the orchestrator acts, no role commits.
 */
const CYCLE_STAGES = [
  "red-verify",
  "green-verify",
  "refactor-verify",
  "deploying",
  "promoting",
] as const satisfies readonly Stage[];
export const isCycleStage = (stage: Stage): stage is (typeof CYCLE_STAGES)[number] =>
  (CYCLE_STAGES as readonly Stage[]).includes(stage);
