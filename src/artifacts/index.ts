/** The design artifacts on a track's branch: their schemas, paths and the cross-file validation. */
export * from "./ids.js";
export * from "./paths.js";
export * from "./spec.js";
export * from "./architecture.js";
export * from "./db-design.js";
export * from "./ux.js";
export * from "./test-list.js";
export * from "./review.js";
export * from "./issues.js";
export * from "./validate.js";
