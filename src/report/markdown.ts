/** Small Markdown helpers for check runs and comments. */

export const short = (sha: string) => sha.slice(0, 7);

/** Text safe in a table cell: no pipes, line breaks or raw HTML (an agent writes test titles). */
export function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ").replace(/</g, "&lt;");
}

/** A Markdown table; an empty body renders as a one-line note instead. */
export function table(head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `_${empty}_`;
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => " --- ").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

export function link(text: string, url: string | undefined): string {
  return url ? `[${text}](${url})` : text;
}

/** Inline code that survives backticks in the text. */
export function code(text: string): string {
  const fence = text.includes("`") ? "``" : "`";
  return `${fence}${text}${fence}`;
}

/**
 * Cut `text` to `limit` characters, ending with a note that says what was cut and where the
 * full record is. Cuts at a line boundary when one is near, so a table row is not left half.
 */
export function truncate(text: string, limit: number, where: string): string {
  if (text.length <= limit) return text;
  const note = (omitted: number) =>
    `\n\n> **Truncated:** ${omitted} characters did not fit GitHub's limit of ${limit}. The full record is ${where}.`;
  const room = limit - note(text.length).length;
  let cut = text.slice(0, room);
  const lastBreak = cut.lastIndexOf("\n");
  if (lastBreak > room - 2000) cut = cut.slice(0, lastBreak);
  return cut + note(text.length - cut.length);
}
