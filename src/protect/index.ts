export * from "./rulesets.js";
export { protectRepository, ProtectError, type ProtectResult } from "./apply.js";
