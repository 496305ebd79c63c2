import { dbBranchTool } from "./db-branch.js";
import { runCycleTool } from "./run-cycle.js";
import { schemaDiffTool } from "./schema-diff.js";
import { explainRejectionTool, nextActionTool, trackStatusTool } from "./track-tools.js";
import { validateArtifactsTool } from "./validate-artifacts.js";
import type { ToolDefinition } from "./registry.js";

export { ToolContext, type StateSource } from "./context.js";
export { callTool, type ToolDefinition } from "./registry.js";
export { assertCheckout, ToolError } from "./errors.js";
export { createDbBranch, dbBranchId, dbBranchUrl, deleteDbBranch } from "./db-branch.js";
export { CheckpointInput, validateCheckoutAndDatabase, type ValidateReport } from "./validate-artifacts.js";
export { cycleOutputMatcher } from "./run-cycle.js";
export { localLane, replayTrack, type ReplayedTrack } from "./replay.js";
export { approveLocally } from "./local-approve.js";
export { runLanePending, type LocalRun } from "./local-run.js";
export { inputJsonSchema, outputJsonSchema, openAITools, openAIResponsesTools } from "./json-schema.js";

/** Every tool an agent gets, in the order a model should consider them. */
export const consortTools: readonly ToolDefinition[] = [
  nextActionTool,
  trackStatusTool,
  validateArtifactsTool,
  explainRejectionTool,
  runCycleTool,
  dbBranchTool,
  schemaDiffTool,
];
