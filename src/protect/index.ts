export * from "./rulesets.js";
export { protectRepository, ProtectError } from "./apply.js";
export {
  requireProtectedStateBranch,
  STATE_BRANCH_RULES,
  stateRulesMissing,
  unprotectedStateBranch,
} from "./state-rules.js";
export { readAppliedProtection, type AppliedProtection } from "./applies.js";
