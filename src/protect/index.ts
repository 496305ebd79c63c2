export * from "./rulesets.js";
export { protectRepository, ProtectError } from "./apply.js";
export {
  missingStateBranchRules,
  requireProtectedStateBranch,
  unprotectedStateBranch,
  UnprotectedStateBranchError,
} from "./state-rules.js";
