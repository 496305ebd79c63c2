import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCycleAction } from "../../../src/cycle/action.js";
import { runAgentAction } from "../../../src/cycle/agent-action.js";
import { runDeployAction, runPromoteAction } from "../../../src/deploy/action.js";
import { ACTION_STEPS, actionStep } from "./step.js";

// The role prompts ship with the action: roles/<role>.md, next to dist/.
const rolesDir = join(dirname(fileURLToPath(import.meta.url)), "../roles");

const step = actionStep(process.env);
if (!step) {
  console.error(
    `::error::the input "step" must be one of ${ACTION_STEPS.join(", ")} (got "${process.env.INPUT_STEP ?? ""}")`,
  );
  process.exitCode = 1;
} else {
  const run = {
    cycle: () => runCycleAction(),
    deploy: () => runDeployAction(),
    promote: () => runPromoteAction(),
    agent: () => runAgentAction(process.env, rolesDir),
  }[step];
  process.exitCode = await run();
}
