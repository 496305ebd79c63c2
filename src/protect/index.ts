export * from "./rulesets.js";
export { protectRepository, ProtectError } from "./apply.js";
