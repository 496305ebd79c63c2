import { isPlaceholder, type CheckState } from "../gates/checks.js";
import {
  CHECK_NAMES,
  GATE_NAMES,
  gateCheckName,
  gateTitle,
  type CheckName,
  type GateName,
} from "../contracts/gates.js";
import {
  CHECK_ACTIONS,
  COMMENT_LIMIT,
  MARKER_ROOM,
  MAX_ACTIONS,
  OUTPUT_LIMIT,
  TITLE_LIMIT,
  type CheckAction,
  type RenderedCheckRun,
} from "./checks.js";
import { cell, code, link, short, table, truncate } from "./markdown.js";
import type { ApprovalView, EvidenceView, TamperedView, TestView, TrackReport } from "./view.js";
import { mutationMarkdown } from "../deploy/index.js";

/**
 * Markdown for the seven check runs and the one sticky PR comment. Each check shows the state
 * src/gates/checks.ts decided (consort/schema the database comparison): `pending` is `in_progress`
 * (a status, never a conclusion), `success` and `failure` are conclusions. Never `neutral` or
 * `skipped`: branch protection counts both as passing.
 */

type Outcome = "success" | "failure" | "in_progress";
const OUTCOME: Record<CheckState["status"], Outcome> = {
  success: "success",
  failure: "failure",
  pending: "in_progress",
};
const MARK: Record<Outcome, string> = { success: "✅", failure: "❌", in_progress: "⏳" };

const stateFile = (trackId: string) => `in \`tracks/${trackId}.json\` on the \`consort/state\` branch`;

function run(
  name: CheckName,
  outcome: Outcome,
  title: string,
  summary: string,
  trackId: string,
  actions: CheckAction[] = [],
  placeholder = false,
): RenderedCheckRun {
  const output = {
    title: title.length > TITLE_LIMIT ? `${title.slice(0, TITLE_LIMIT - 1)}…` : title,
    summary: truncate(summary, OUTPUT_LIMIT - MARKER_ROOM, stateFile(trackId)),
  };
  const buttons = actions.slice(0, MAX_ACTIONS);
  return outcome === "in_progress"
    ? { name, status: "in_progress", output, actions: buttons, ...(placeholder ? { placeholder: true as const } : {}) }
    : { name, status: "completed", conclusion: outcome, output, actions: buttons };
}

function commitLink(report: Pick<TrackReport, "serverUrl" | "repository">, sha: string): string {
  return link(code(short(sha)), `${report.serverUrl ?? "https://github.com"}/${report.repository}/commit/${sha}`);
}

/**
 * The first line of every check: which track, branch and commit. Where the lane stands is the
 * sticky comment's to say: a check that named it would change (and be rewritten) at every step
 * although its own state did not.
 */
function header(report: TrackReport): string {
  return `Track ${code(report.trackId)} on ${code(report.branch)} at ${commitLink(report, report.headSha)}.`;
}

/** The approvals as a table: who, when, on which commit, at which frozen hash; the gate too in the comment, which lists every gate's. */
function approvalsTable(report: TrackReport, approvals: ApprovalView[], withGate = false): string {
  return table(
    [...(withGate ? ["Gate"] : []), "Who", "When", "Commit", "Frozen hash"],
    approvals.map((a) => [
      ...(withGate ? [gateTitle(a.gate)] : []),
      link(`@${a.approver}`, a.reviewUrl),
      a.at,
      commitLink(report, a.commit),
      code(short(a.manifestHash)),
    ]),
    "No approvals yet.",
  );
}

function frozenSection(report: TrackReport, gate: GateName): string {
  const frozen = report.frozen.find((f) => f.gate === gate);
  if (!frozen) return "_Nothing frozen yet._";
  const files = table(
    ["File", "sha256"],
    frozen.files.map((f) => [cell(code(f.path)), code(f.hash)]),
    "No files.",
  );
  return `Manifest ${code(frozen.manifestHash)} frozen at ${commitLink(report, frozen.commit)}.\n\n${files}`;
}

function evidence(e: EvidenceView | undefined): string {
  if (!e) return "—";
  const mark = { valid: "✅ valid", invalid: "❌ invalid", error: "⚠️ error", pending: "⏳ running" }[e.verdict];
  const where = link(code(short(e.commit)), e.runUrl);
  return cell(`${mark} on ${where}${e.summary ? `: ${e.summary}` : ""}`);
}

function testsTable(tests: TestView[], withEvidence: boolean): string {
  const head = withEvidence
    ? ["Test", "AC", "Title", "File", "Status", "RED", "GREEN"]
    : ["Test", "AC", "Title", "File"];
  const rows = tests.map((t) => {
    const base = [
      cell(code(t.id)),
      t.acceptanceCriterion ? cell(code(t.acceptanceCriterion)) : "—",
      cell(t.title),
      cell(code(t.file)),
    ];
    return withEvidence ? [...base, t.status, evidence(t.red), evidence(t.green)] : base;
  });
  return table(head, rows, "The test list is not written yet.");
}

function gateRun(report: TrackReport, gate: GateName): RenderedCheckRun {
  const name = gateCheckName(gate);
  const check = report.checks[name];
  const parts = [header(report), `### ${gateTitle(gate)}\n\n${check.details.join("\n\n")}`];
  if (gate === "design" || gate === "test-list") parts.push(`### Frozen files\n\n${frozenSection(report, gate)}`);
  if (gate === "test-list") parts.push(`### Test list\n\n${testsTable(report.tests, false)}`);
  if (gate === "deploy") parts.push(`### Deploy evidence\n\n${deploySection(report)}`);
  const refused = report.refusedApprovals?.[gate] ?? [];
  parts.push(
    `### Approvals\n\n${approvalsTable(
      report,
      report.approvals.filter((a) => a.gate === gate),
    )}${refused.length ? `\n\n${refused.map((n) => `> ${n}`).join("\n>\n")}` : ""}`,
  );
  return run(
    name,
    OUTCOME[check.status],
    check.title,
    parts.join("\n\n"),
    report.trackId,
    check.actions,
    isPlaceholder(check),
  );
}

function deploySection(report: TrackReport): string {
  const d = report.deploy;
  if (!d) return "_No release verified yet._";
  const checks = table(
    ["Check", "Result", "Detail"],
    d.checks.map((c) => [cell(c.name), c.ok ? "✅" : "❌", cell(c.detail ?? "")]),
    "No verification ran.",
  );
  const where = [
    d.previewUrl ? `preview ${d.previewUrl}` : undefined,
    `database branch ${code(d.databaseBranch)}`,
    d.runUrl ? link("run", d.runUrl) : undefined,
  ]
    .filter(Boolean)
    .join(", ");
  const notes = d.notes?.length ? `\n\n${d.notes.map((n) => `> ${n}`).join("\n>\n")}` : "";
  const mutation = d.mutation ? `\n\n${mutationMarkdown(d.mutation).join("\n")}` : "";
  return `${d.summary} (${where})${notes}\n\n${checks}${mutation}`;
}

function buildRun(report: TrackReport): RenderedCheckRun {
  const check = report.checks["consort/build"];
  const notes = report.notes?.length ? `\n\n${report.notes.map((n) => `> ${n}`).join("\n>\n")}` : "";
  const summary = [
    header(report),
    `### Build\n\n${check.details.join("\n\n")}${notes}`,
    `### Tests\n\n${testsTable(report.tests, true)}`,
  ].join("\n\n");
  return run(
    "consort/build",
    OUTCOME[check.status],
    check.title,
    summary,
    report.trackId,
    check.actions,
    isPlaceholder(check),
  );
}

function disciplineRun(report: TrackReport): RenderedCheckRun {
  const check = report.checks["consort/discipline"];
  const rows = report.discipline.violations.map((v) => [
    commitLink(report, v.commit),
    cell(code(v.rule)),
    v.path ? cell(code(v.path)) : "—",
    cell(v.message),
  ]);
  const body =
    rows.length > 0 || check.details.length === 0
      ? table(["Commit", "Rule", "Path", "What happened"], rows, "No violations.")
      : check.details.join("\n\n");
  return run(
    "consort/discipline",
    OUTCOME[check.status],
    check.title,
    `${header(report)}\n\n${body}`,
    report.trackId,
    check.actions,
  );
}

function schemaRun(report: TrackReport): RenderedCheckRun {
  const s = report.schema;
  const diff = s.diffMarkdown ? `### Schema diff against the parent\n\n${s.diffMarkdown}` : "";
  const breaking = s.breaking?.length
    ? `### Changes that break existing rows\n\n${s.breaking.map((b) => `- ${b}`).join("\n")}`
    : "";
  const parts = [header(report), s.reason ?? "", report.sources ?? "", breaking, diff].filter(Boolean).join("\n\n");
  if (s.state === "pending")
    return run("consort/schema", "in_progress", "Schema diff not computed yet", parts, report.trackId, [], true);
  if (s.state === "failed") return run("consort/schema", "failure", "Schema check failed", parts, report.trackId);
  if (s.breaking?.length)
    return run(
      "consort/schema",
      "failure",
      `${s.breaking.length} change(s) would break existing rows`,
      parts,
      report.trackId,
    );
  return run(
    "consort/schema",
    "success",
    s.diffMarkdown ? "Schema diff ready, nothing breaks" : "No schema change",
    parts,
    report.trackId,
  );
}

/** The seven check runs of a track, in contract order. */
export function renderCheckRuns(report: TrackReport): RenderedCheckRun[] {
  const byName: Record<CheckName, RenderedCheckRun> = {
    "consort/design": gateRun(report, "design"),
    "consort/test-list": gateRun(report, "test-list"),
    "consort/build": buildRun(report),
    "consort/deploy": gateRun(report, "deploy"),
    "consort/promote": gateRun(report, "promote"),
    "consort/discipline": disciplineRun(report),
    "consort/schema": schemaRun(report),
  };
  return CHECK_NAMES.map((name) => byName[name]);
}

/** Every check shows one verdict in the same words: a merge group is judged as a whole, not lane by lane. */
export function renderGroupCheckRuns(
  conclusion: "success" | "failure",
  title: string,
  summary: string,
  label: string,
): RenderedCheckRun[] {
  return CHECK_NAMES.map((name) => run(name, conclusion, title, summary, label));
}

/** Every check fails with the same reason and buttons: for state or configuration Consort cannot trust. */
export function renderFailingCheckRuns(
  title: string,
  summary: string,
  trackId: string,
  actions: CheckAction[] = [],
): RenderedCheckRun[] {
  return CHECK_NAMES.map((name) => run(name, "failure", title, summary, trackId, actions));
}

function tamperedText(view: TamperedView): string {
  const at = view.stateCommit ? ` (state commit ${code(short(view.stateCommit))})` : "";
  return [
    `The state file ${code(view.path)} of track ${code(view.trackId)} on ${code("consort/state")}${at} failed verification, so nothing advances and every Consort check fails.`,
    `**What failed**\n\n${view.problems.map((p) => `- ${p}`).join("\n")}`,
    "Only the app writes that branch. A repository admin re-seals the track with the **Re-seal state** button or `consort state reseal " +
      view.trackId +
      "`: that restores the newest version this app sealed (moving the branch back past any commit the app did not write), shows what it dropped, and the track goes on from there. Nothing else brings it back: an edited file is never signed as it stands.",
  ].join("\n\n");
}

/** The seven checks of a track whose state file failed its schema or signature, each with the re-seal button. */
export function renderTamperedCheckRuns(view: TamperedView): RenderedCheckRun[] {
  return renderFailingCheckRuns("State file is tampered", tamperedText(view), view.trackId, [CHECK_ACTIONS.reseal]);
}

/** The hidden marker that finds Consort's one comment for a track on a PR. */
export function stickyMarker(trackId: string): string {
  return `<!-- consort:sticky track=${trackId} -->`;
}

function laneLine(report: TrackReport): string {
  const done = report.lane.done.map((s) => `✅ ${s.label}`);
  const now = report.lane.now
    ? [`▶️ **${report.lane.now.label}**${report.lane.now.detail ? ` (${report.lane.now.detail})` : ""}`]
    : [];
  const next = report.lane.next.map((s) => s.label);
  return [...done, ...now, ...next].join(" → ");
}

/** The Markdown of the one sticky PR comment. */
export function renderComment(report: TrackReport): string {
  const gates = GATE_NAMES.map((g) => {
    const check = report.checks[gateCheckName(g)];
    return [gateTitle(g), `${MARK[OUTCOME[check.status]]} ${cell(check.title)}`];
  });
  const frozen = report.frozen.length
    ? report.frozen
        .map(
          (f) =>
            `<details><summary>${gateTitle(f.gate)}: manifest <code>${short(f.manifestHash)}</code></summary>\n\n${frozenSection(report, f.gate)}\n\n</details>`,
        )
        .join("\n\n")
    : "_Nothing frozen yet._";
  const action = report.nextAction
    ? `**${report.nextAction.role}**: ${report.nextAction.summary}${report.nextAction.details?.length ? `\n\n${report.nextAction.details.map((d) => `- ${d}`).join("\n")}` : ""}`
    : "_Nothing to do: the track has ended._";
  const schema = report.schema.diffMarkdown
    ? `<details><summary>Schema diff</summary>\n\n${report.schema.diffMarkdown}\n\n</details>`
    : "_No schema diff yet._";
  const notes = report.notes?.length ? `\n\n${report.notes.map((n) => `> ${n}`).join("\n>\n")}` : "";
  const body = [
    stickyMarker(report.trackId),
    `## Consort: track ${code(report.trackId)}`,
    `At ${commitLink(report, report.headSha)} on ${code(report.branch)}.${notes}`,
    `### Lane\n\n${laneLine(report)}`,
    `### Next action\n\n${action}`,
    `### Gates\n\n${table(["Gate", "State"], gates, "")}`,
    `### Tests\n\n${testsTable(report.tests, true)}`,
    `### Frozen hashes\n\n${frozen}`,
    `### Approvals\n\n${approvalsTable(report, report.approvals, true)}`,
    `### Schema\n\n${schema}`,
    ...(report.sources ? [`### Where the facts come from\n\n${report.sources}`] : []),
  ].join("\n\n");
  return truncate(body, COMMENT_LIMIT, stateFile(report.trackId));
}

/** The sticky comment of a track whose state cannot be trusted. */
export function renderTamperedComment(view: TamperedView): string {
  return truncate(
    [stickyMarker(view.trackId), `## Consort: track ${code(view.trackId)} is stopped`, tamperedText(view)].join("\n\n"),
    COMMENT_LIMIT,
    stateFile(view.trackId),
  );
}
