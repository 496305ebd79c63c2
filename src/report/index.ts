export * from "./checks.js";
export * from "./view.js";
export {
  renderCheckRuns,
  renderComment,
  renderFailingCheckRuns,
  renderTamperedCheckRuns,
  renderTamperedComment,
  stickyMarker,
} from "./render.js";
export {
  writeCheckRun,
  writeCheckRuns,
  upsertStickyComment,
  type CheckRunTarget,
  type StickyCommentTarget,
  type WriteAction,
  type WrittenCheckRun,
} from "./write.js";
export { truncate } from "./markdown.js";
