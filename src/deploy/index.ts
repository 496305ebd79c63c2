export {
  DeployRequest,
  DeployEvidence,
  PromoteRequest,
  PromoteResult,
  DEPLOY_EVIDENCE_FILE,
  PROMOTE_RESULT_FILE,
} from "./schemas.js";
export { runDeploy, previewUrlFrom, releaseMigrations, type DeployDeps } from "./deploy.js";
export { runPromote, snapshotBranchName, type PromoteDeps } from "./promote.js";
