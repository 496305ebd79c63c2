import { runPromoteAction } from "../../../src/deploy/action.js";

process.exitCode = await runPromoteAction();
