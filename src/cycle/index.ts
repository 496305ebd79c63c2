export { CycleRequest } from "../contracts/cycle-request.js";
export { CycleResult, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE, exitCodeFor } from "../contracts/cycle-result.js";
export { runCycle } from "./run.js";
export { againstDatabase, projectCommandEnvironment, runShellCommand, type CommandRunner } from "./commands.js";
export { closeJail, confinementRecord, openJail, passThroughAbove, type Confinement, type Jail } from "./confine.js";
export { confinementLine, verifiedLine } from "./summary.js";
