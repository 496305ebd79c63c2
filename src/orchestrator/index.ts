/**
 * The orchestrator: the pure machine that decides, for a track, what the next step is, who may take
 * it, and whether a pushed commit is that step (docs/ARCHITECTURE.md, The machine). Handlers, the cycle runner and the CLI
 * all go through these functions.
 */
export * from "./types.js";
export {
  createTrack,
  transition,
  restoreSnapshot,
  pathsToRead,
  runnerPathsToRead,
  runnerPackagesToRead,
  SnapshotError,
} from "./transition.js";
export { nextAction, renderNextAction, describeLane, renderLane } from "./next-action.js";
export {
  buildUnits,
  effectiveFrozenTests,
  firstFrozenTest,
  frozenState,
  gateManifestAt,
  testListOf,
} from "./context.js";
