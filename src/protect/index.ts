export * from "./rulesets.js";
export { protectRepository, ProtectError } from "./apply.js";
export {
  missingStateBranchRules,
  requireProtectedStateBranch,
  STATE_BRANCH_RULES,
  unprotectedStateBranch,
} from "./state-rules.js";
