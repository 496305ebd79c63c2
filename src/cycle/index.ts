export { CycleRequest } from "./request.js";
export { CycleResult, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE, exitCodeFor } from "./result.js";
export { runCycle } from "./run.js";
