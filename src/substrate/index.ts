/** Database branches (design §7): the one import other parts use. */
export {
  SubstrateError,
  type BranchProvider,
  type CreateBranchOptions,
  type DatabaseBranch,
  type ProviderKind,
} from "./provider.js";
export { createProvider, type CreateProviderOptions } from "./create-provider.js";
export {
  sanitiseBranchName,
  resolveParentBranch,
  invalidGitBranchName,
  BRANCH_ID_PATTERN,
  type ParentResolution,
  type ParentResolutionInput,
} from "./names.js";
export { PostgresBranchProvider, baseDatabaseName, type PostgresProviderOptions } from "./postgres-provider.js";
export {
  ensureLocalServer,
  stopLocalServer,
  resolveLocalDataDir,
  LOCAL_ROOT_DATABASE,
  type LocalServer,
} from "./local-server.js";
export {
  snapshotSchema,
  diffSchemas,
  lintSchemaChange,
  renderSchemaDiff,
  compareSchemas,
  compareBranches,
  CHECK_RUN_TEXT_LIMIT,
  type SchemaSnapshot,
  type SchemaDiff,
  type SchemaChange,
  type SchemaLint,
  type LintFinding,
  type SchemaComparison,
} from "./schema/index.js";
export { createLakebaseProvider, LakebaseProvider, type LakebaseProviderOptions } from "./lakebase/provider.js";
export { LakebaseClient, LakebaseError } from "./lakebase/client.js";
