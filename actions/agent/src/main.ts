import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runAgentAction } from "../../../src/cycle/agent-action.js";

// The role prompts ship with the actions: <repo>/roles/<role>.md, two folders above dist/.
const rolesDir = join(dirname(fileURLToPath(import.meta.url)), "../../../roles");
process.exitCode = await runAgentAction(process.env, rolesDir);
