import { NEVER_MERGES } from "../config/branch-kind.js";
import { CHECK_NAMES } from "../contracts/gates.js";
import { MARKER_ROOM, OUTPUT_LIMIT, TITLE_LIMIT, type RenderedCheckRun } from "./checks.js";
import { code, truncate } from "./markdown.js";
import type { SchemaView } from "./view.js";

/** An experiment as its checks show it: its database branch, where that was forked from, and when it expires. */
export interface ExperimentView {
  branch: string;
  databaseBranch: string;
  /** The database branch it was forked from: the default branch's, or a track's. */
  parentDatabaseBranch: string;
  /** When its database branch is dropped unless it is pushed to again. */
  expiresAt: string;
  ttlDays: number;
  schema: SchemaView;
}

/**
 * The seven checks on an experiment's head. consort/schema shows the diff against the parent (and
 * fails on rows at risk, as for a track); the other six fail saying the experiment never merges,
 * so a pull request from it cannot merge under Consort's protection. Never neutral or skipped.
 */
export function renderExperimentCheckRuns(view: ExperimentView): RenderedCheckRun[] {
  const about = [
    `Experiment ${code(view.branch)}: database branch ${code(view.databaseBranch)}, forked from ${code(view.parentDatabaseBranch)}.`,
    `It expires at ${view.expiresAt} unless pushed to again (experiments.ttlDays is ${view.ttlDays} in .github/consort.yml); an expired experiment's database branch is dropped, and the next push forks it again.`,
  ].join(" ");
  const never = `**This branch cannot merge**: ${NEVER_MERGES}. An experiment has no design lane and no gates: open a track (any branch outside the experiments prefix) and carry the migration or approach over there, where it is specified, tested and approved.`;
  return CHECK_NAMES.map((name) =>
    name === "consort/schema"
      ? schemaRun(view, about)
      : failing(name, capitalised(NEVER_MERGES), `${about}\n\n${never}`),
  );
}

/**
 * The seven checks on an experiment's head when it may not have a database branch: the
 * repository already holds `experiments.max` of them. Each fails naming the limit and which
 * experiments to delete.
 */
export function renderRefusedExperimentCheckRuns(branch: string, max: number, holding: string[]): RenderedCheckRun[] {
  const title = `Refused: this repository already has ${max} experiments (experiments.max)`;
  const summary = [
    `Experiment ${code(branch)} has no database branch: the repository already holds ${max} experiments with one, the most experiments.max in .github/consort.yml allows.`,
    `**What to do**: delete an experiment you are done with (\`git push origin --delete <branch>\` drops its database branch), then push to ${code(branch)} again. The experiments holding one:`,
    holding.map((b) => `- ${code(b)}`).join("\n"),
  ].join("\n\n");
  return CHECK_NAMES.map((name) => failing(name, title, summary));
}

function schemaRun(view: ExperimentView, about: string): RenderedCheckRun {
  const s = view.schema;
  const breaking = s.breaking?.length
    ? `### Changes that break existing rows\n\n${s.breaking.map((b) => `- ${b}`).join("\n")}`
    : "";
  const diff = s.diffMarkdown ? `### Schema diff against ${code(view.parentDatabaseBranch)}\n\n${s.diffMarkdown}` : "";
  const summary = [about, s.reason ?? "", breaking, diff, `This experiment never merges: ${NEVER_MERGES}.`]
    .filter(Boolean)
    .join("\n\n");
  if (s.state !== "ready") return failing("consort/schema", "Schema check failed", summary);
  if (s.breaking?.length)
    return failing("consort/schema", `${s.breaking.length} change(s) would break existing rows`, summary);
  return {
    name: "consort/schema",
    status: "completed",
    conclusion: "success",
    output: output(s.diffMarkdown ? "Schema diff ready, nothing breaks" : "No schema change", summary),
    actions: [],
  };
}

function failing(name: RenderedCheckRun["name"], title: string, summary: string): RenderedCheckRun {
  return { name, status: "completed", conclusion: "failure", output: output(title, summary), actions: [] };
}

function output(title: string, summary: string): RenderedCheckRun["output"] {
  return {
    title: title.length > TITLE_LIMIT ? `${title.slice(0, TITLE_LIMIT - 1)}…` : title,
    summary: truncate(summary, OUTPUT_LIMIT - MARKER_ROOM, "in `consort db diff` of the experiment's branch"),
  };
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
