/** Database branches (docs/ARCHITECTURE.md, Database branches): the one import other parts use. */
export { type BranchProvider, type DatabaseBranch } from "./provider.js";
export { createProvider, openJobProvider } from "./create-provider.js";
export { sanitiseBranchName, BRANCH_ID_PATTERN, resolveParentBranch } from "./names.js";
export { PostgresBranchProvider } from "./postgres-provider.js";
export { ensureLocalServer, stopLocalServer, resolveLocalDataDir, type LocalServer } from "./local-server.js";
export { breakingFindings, compareBranches, snapshotSchema, type SchemaComparison } from "./schema/index.js";
