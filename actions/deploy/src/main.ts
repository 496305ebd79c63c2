import { runDeployAction } from "../../../src/deploy/action.js";

process.exitCode = await runDeployAction();
