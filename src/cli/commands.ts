import type { Command } from "commander";
import { registerBoardCommands } from "./board.js";
import { registerDbCommands } from "./db.js";
import { registerCycleCommands } from "./cycle.js";
import { registerInitCommands } from "./init.js";
import { registerOrchestrateCommands } from "./orchestrate.js";
import { registerProtectCommands } from "./protect.js";
import { registerReconcileCommands } from "./reconcile.js";
import { registerStateCommands } from "./state.js";
import { registerToolsCommands } from "./tools.js";

/**
 * Every command group the CLI has. A capability adds its `register…Commands` here, one line,
 * so main.ts never changes.
 */
export const commandModules: Array<(program: Command) => void> = [
  registerDbCommands,
  registerCycleCommands,
  registerInitCommands,
  registerToolsCommands,
  registerProtectCommands,
  registerStateCommands,
  registerOrchestrateCommands,
  registerReconcileCommands,
  registerBoardCommands,
];
