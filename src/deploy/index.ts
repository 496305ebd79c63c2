export {
  DeployRequest,
  DeployEvidence,
  PromoteRequest,
  PromoteResult,
  DEPLOY_EVIDENCE_FILE,
  PROMOTE_RESULT_FILE,
} from "../contracts/deploy.js";
export { runDeploy } from "./deploy.js";
export { runPromote } from "./promote.js";
export { mutationHeadline, mutationMarkdown } from "./mutation-summary.js";
