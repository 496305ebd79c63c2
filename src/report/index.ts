export * from "./checks.js";
export * from "./view.js";
export {
  renderCheckRuns,
  renderComment,
  renderFailingCheckRuns,
  renderGroupCheckRuns,
  renderTamperedCheckRuns,
  renderTamperedComment,
} from "./render.js";
export { writeCheckRun, writeCheckRuns, upsertStickyComment, type RememberedComments } from "./write.js";
export { renderExperimentCheckRuns, renderRefusedExperimentCheckRuns, type ExperimentView } from "./experiment.js";
