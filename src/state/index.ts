export * from "./schema.js";
export * from "./errors.js";
export { canonicalJson, sealState, openStateFile, serialiseStateFile, unsealed, checkStateFile } from "./seal.js";
export {
  createStateStore,
  type StateStore,
  type StateStoreOptions,
  type StateChange,
  type UpdateOutcome,
} from "./store.js";
export { assertCanReseal, ResealDeniedError } from "./reseal.js";
