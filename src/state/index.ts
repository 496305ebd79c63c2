export * from "./schema.js";
export * from "./errors.js";
export { sealState, openStateFile, serialiseStateFile, unsealed, checkStateFile, keyIdOf } from "./seal.js";
export { createStateStore, githubStoredSource, type StateStore } from "./store.js";
export { ensureStateBranch } from "./branch.js";
export { assertCanReseal, ResealDeniedError } from "./reseal.js";
export { seenSequencesIn, type SeenSequences } from "./seen-sequences.js";
export {
  compact,
  expand,
  expandStored,
  keptTexts,
  storedFormOf,
  textsFrom,
  unitRecordPath,
  UnitRecord,
  withRecords,
  type StoredSource,
} from "./compact.js";
