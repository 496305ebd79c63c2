export * from "./checks.js";
export * from "./view.js";
export {
  renderCheckRuns,
  renderComment,
  renderFailingCheckRuns,
  renderTamperedCheckRuns,
  renderTamperedComment,
} from "./render.js";
export { writeCheckRun, writeCheckRuns, upsertStickyComment } from "./write.js";
