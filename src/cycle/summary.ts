import type { CycleResult, CycleTestOutcome } from "../contracts/cycle-result.js";

/** The Markdown a person reads: the job summary in Actions and the check run's text. */

const ICON: Record<CycleTestOutcome["outcome"], string> = {
  passed: "✅ passed",
  "failed-assertion": "❌ failed (assertion)",
  "behaviour-missing": "🧱 behaviour missing (declared module not written yet)",
  "failed-error": "💥 failed (error)",
  skipped: "⏭️ skipped",
  missing: "❓ missing",
};

/**
 * The one line a verified cycle shows in its check: "verified", and for a RED whose tests wait on a
 * declared module, what is not written yet, so the reader sees why a test that did not load counts.
 */
export function verifiedLine(result: Pick<CycleResult, "tests"> | undefined): string {
  const waiting = [
    ...new Set((result?.tests ?? []).filter((t) => t.outcome === "behaviour-missing").map((t) => t.message)),
  ];
  return waiting.length ? `verified (${waiting.join("; ")})` : "verified";
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** Said plainly either way: an unconfined run is weaker evidence. */
export function confinementLine(confinement: CycleResult["confinement"]): string {
  if (!confinement)
    return "⚠️ Ran unconfined: the action that ran it predates confinement, so the commands may have run as the job's own user.";
  return confinement.confined
    ? `🔒 The repository's commands ran confined, as the OS user \`${confinement.user}\` (uid ${confinement.uid}), with an allow-listed environment; every process of that user was ended before the verdict was read.`
    : `⚠️ Ran unconfined: ${confinement.reason}. The commands could have tampered with the job; this is weaker evidence than a confined run.`;
}

export function renderCycleSummary(result: CycleResult): string {
  const { step, verdict } = result;
  const head = verdict === "verified" ? `✅ ${step.toUpperCase()} verified` : `❌ ${step.toUpperCase()} refused`;
  const lines = [
    `## ${head}`,
    "",
    `Track \`${result.request.track}\` at \`${result.commit.slice(0, 12)}\`, on the throwaway database branch ` +
      `\`${result.database.cycleBranch ?? "(none)"}\` forked from \`${result.database.trackBranch}\` (${result.database.provider}).`,
    "",
  ];
  lines.push(confinementLine(result.confinement), "");
  if (result.reasons.length) {
    lines.push(verdict === "verified" ? "### Notes" : "### Why it was refused", "");
    for (const reason of result.reasons) lines.push(`- ${reason}`);
    lines.push("");
  }
  if (result.tests.length) {
    lines.push("### Tests", "", "| test | role | outcome | file | message |", "|---|---|---|---|---|");
    for (const t of result.tests) {
      lines.push(
        `| ${t.id} ${cell(t.title)} | ${t.role} | ${ICON[t.outcome]} | \`${t.file}\` | ${cell(t.message ?? "")} |`,
      );
    }
    lines.push("");
  }
  if (result.report) {
    const r = result.report;
    lines.push(
      `Report \`${r.path}\` (${r.flavour ?? "unknown flavour"}): ${r.total} test(s), ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped.`,
      "",
    );
  }
  const t = result.timingsMs;
  lines.push("| fork | migrate | tests | verdict | drop | total |", "|---|---|---|---|---|---|");
  lines.push(`| ${t.fork} ms | ${t.migrate} ms | ${t.tests} ms | ${t.verdict} ms | ${t.drop} ms | ${t.total} ms |`, "");
  for (const warning of result.warnings) lines.push(`> ⚠️ ${warning}`, "");
  return `${lines.join("\n")}\n`;
}
