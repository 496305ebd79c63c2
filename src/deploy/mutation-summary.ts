import type { MutationReport } from "../contracts/mutation.js";

/**
 * The mutation score as the approver reads it (the release job's summary and consort/deploy):
 * the score and the floor, the counts, each surviving mutant as file:line with its one-line diff.
 */

/** A code span that holds any text: a fence longer than any run of backticks inside it. */
function span(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${longest > 0 ? ` ${text} ` : text}${fence}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The score line: `42.9%`, with the floor when one is set, or why there is none. */
export function mutationHeadline(report: MutationReport): string {
  const floor = report.floor !== undefined ? ` (floor ${report.floor}%)` : "";
  if (report.outcome === "not-measured") return `Mutation score: not measured${floor}`;
  const score = report.score === null ? "no mutant on the changed lines" : `${report.score}%`;
  return `Mutation score: ${score}${report.outcome === "partial" ? ", partial" : ""}${floor}`;
}

/** The whole section, as Markdown lines. */
export function mutationMarkdown(report: MutationReport): string[] {
  const lines = [`#### ${mutationHeadline(report)}`, ""];
  if (report.reason) lines.push(`> ${report.reason.replace(/\n/g, " ")}`, "");
  if (report.outcome === "not-measured") return lines;
  const { killed, survived, timedOut, notCovered, errors } = report.counts;
  const tool = report.tool === "stryker" ? `StrykerJS, ${report.runner ?? "command"} runner` : (report.tool ?? "");
  const since = report.base ? ` since ${span(report.base.slice(0, 12))}` : "";
  const reused = report.reused > 0 ? `; ${report.reused} reused from the track's incremental file` : "";
  lines.push(
    `Over the lines the track changed${since} (${tool}): ${killed} killed, ${survived} survived, ${timedOut} timed out, ${notCovered} not covered${errors ? `, ${plural(errors, "error")}` : ""}${reused}.`,
  );
  if (report.survivors.length > 0) {
    lines.push("", "Surviving mutants, most telling first:");
    for (const s of report.survivors)
      lines.push(
        `- ${span(`${s.file}:${s.line}`)} ${s.status === "not-covered" ? "(no test runs it) " : ""}${span(s.diff)}`,
      );
    if (report.moreSurvivors > 0) lines.push(`- and ${plural(report.moreSurvivors, "more surviving mutant")}`);
  }
  return lines;
}
