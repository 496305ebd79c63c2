import type { SchemaChange, SchemaDiff } from "./diff.js";
import type { SchemaLint } from "./lint.js";
import { consortCommand } from "../../contracts/command.js";

/** The schema diff as Markdown for the `consort/schema` check run (≤ 65,535 characters). */

export const CHECK_RUN_TEXT_LIMIT = 65_000;

export interface RenderOptions {
  /** Names shown in the heading, e.g. the track's branch and its parent. */
  branch?: string;
  parent?: string;
  /** Upper bound on the output length; defaults to 65,000 (a check run allows 65,535). */
  maxLength?: number;
}

const ORDER: SchemaChange["object"][] = ["table", "column", "constraint", "index", "enum", "view", "sequence"];
const SIGN: Record<SchemaChange["action"], string> = {
  added: "➕ added",
  dropped: "➖ dropped",
  changed: "✏️ changed",
};

/** Keep a cell on one line and free of characters that break a Markdown table. */
function cell(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").replace(/\|/g, "\\|").replace(/`/g, "ˋ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function renderSchemaDiff(diff: SchemaDiff, lint?: SchemaLint, options: RenderOptions = {}): string {
  const limit = Math.min(options.maxLength ?? CHECK_RUN_TEXT_LIMIT, CHECK_RUN_TEXT_LIMIT);
  const head: string[] = [];
  const title = options.branch
    ? `### Schema of \`${options.branch}\`${options.parent ? ` against \`${options.parent}\`` : ""}`
    : "### Schema changes";
  head.push(title, "");
  if (diff.changes.length === 0) head.push("No schema changes.");
  else
    head.push(
      `${diff.changes.length} change${diff.changes.length === 1 ? "" : "s"}: ${diff.summary.added} added, ${diff.summary.dropped} dropped, ${diff.summary.changed} changed.`,
    );
  head.push("");

  const lintLines: string[] = [];
  if (lint) {
    const risky = lint.findings.filter((f) => f.rows !== 0);
    lintLines.push("#### Data check on the parent's rows", "");
    if (lint.findings.length === 0)
      lintLines.push(
        "No risky change (no table or column dropped, no NOT NULL, UNIQUE, CHECK or foreign key added, no type changed).",
        "",
      );
    else {
      lintLines.push(
        lint.ok
          ? "✅ Every risky change was counted on the parent's data and breaks or loses no row."
          : `❌ ${risky.length} risky change${risky.length === 1 ? "" : "s"} would break or lose rows, or could not be counted.`,
        "",
        "| result | change | rows | what it means |",
        "|---|---|---:|---|",
      );
      const MAX_FINDINGS = 200;
      for (const f of lint.findings.slice(0, MAX_FINDINGS)) {
        const mark = f.rows === null ? "❓ unknown" : f.rows > 0 ? "❌ breaks" : "✅ none";
        lintLines.push(
          `| ${mark} | \`${cell(f.change, 120)}\` | ${f.rows ?? "?"} | ${cell(f.reason ? `${f.message} (${f.reason})` : f.message)} |`,
        );
      }
      if (lint.findings.length > MAX_FINDINGS)
        lintLines.push(
          "",
          `… and ${lint.findings.length - MAX_FINDINGS} more findings not shown; run \`${consortCommand("db diff --json")}\` for all of them.`,
        );
      lintLines.push("");
    }
  }

  const body: string[] = [];
  const sorted = [...diff.changes].sort((a, b) => ORDER.indexOf(a.object) - ORDER.indexOf(b.object));
  if (sorted.length > 0) body.push("#### Changes", "", "| change | object | name | details |", "|---|---|---|---|");
  const rows = sorted.map(
    (c) => `| ${SIGN[c.action]} | ${c.object} | \`${cell(c.name, 120)}\` | ${cell(c.details.join("; "))} |`,
  );

  const fixed = [...head, ...lintLines, ...body].join("\n");
  const out: string[] = [fixed];
  let length = fixed.length;
  let shown = 0;
  const reserve = 200;
  for (const row of rows) {
    if (length + row.length + 1 + reserve > limit) break;
    out.push(row);
    length += row.length + 1;
    shown++;
  }
  if (shown < rows.length)
    out.push(
      "",
      `… and ${rows.length - shown} more change${rows.length - shown === 1 ? "" : "s"} not shown (check-run text is limited); run \`${consortCommand("db diff --json")}\` for all of them.`,
    );
  const text = out.join("\n");
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
