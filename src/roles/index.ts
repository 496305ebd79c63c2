/** The eight roles, what each owns at each step, and commit classification. */
export * from "./roles.js";
export * from "./trailer.js";
export * from "./classify.js";
export * from "./globs.js";
