export { CycleRequest } from "../contracts/cycle-request.js";
export { CycleResult, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE, exitCodeFor } from "../contracts/cycle-result.js";
export { runCycle } from "./run.js";
export { confinementLine, verifiedLine } from "./summary.js";
