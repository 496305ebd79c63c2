export {
  CycleRequest,
  CycleTest,
  CycleStep,
  FrozenTestFile,
  CYCLE_STEPS,
  parseCycleRequest,
  CycleInputError,
  type CycleRequestInput,
} from "./request.js";
export { CycleResult, CycleTestOutcome, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE, exitCodeFor } from "./result.js";
export { runCycle, writeCycleResult, throwawayBranchName, type CycleDeps } from "./run.js";
export { decideVerdict, type VerdictInput, type Verdict } from "./verdict.js";
export { renderCycleSummary } from "./summary.js";
export { runShellCommand, type CommandRunner } from "./commands.js";
