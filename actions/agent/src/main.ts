import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runAgentAction } from "../../../src/cycle/agent-action.js";

// The role prompts ship with the action: actions/agent/roles/<role>.md, next to dist/.
const rolesDir = join(dirname(fileURLToPath(import.meta.url)), "../roles");
process.exitCode = await runAgentAction(process.env, rolesDir);
