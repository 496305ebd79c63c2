import { runCycleAction } from "../../../src/cycle/action.js";

process.exitCode = await runCycleAction();
