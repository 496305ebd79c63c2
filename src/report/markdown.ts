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

/** What GitHub counts for check-run output and comment bodies: UTF-8 bytes, not JavaScript characters. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The longest start of `text` that fits in `bytes` UTF-8 bytes, never splitting a character. */
function headWithin(text: string, bytes: number): string {
  const encoded = Buffer.from(text, "utf8");
  if (encoded.length <= bytes) return text;
  let end = Math.max(0, bytes);
  // Back off continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end -= 1;
  return encoded.subarray(0, end).toString("utf8");
}

/**
 * Cut `text` to `limit` UTF-8 bytes (GitHub counts bytes: a table of ✅ and ❌ holds three per
 * mark), ending with a note that says what was cut and where the full record is. Cuts at a line
 * boundary when one is near, so a table row is not left half.
 */
export function truncate(text: string, limit: number, where: string): string {
  if (utf8Bytes(text) <= limit) return text;
  const note = (omitted: number) =>
    `\n\n> **Truncated:** ${omitted} bytes did not fit GitHub's limit of ${limit}. The full record is ${where}.`;
  const room = limit - utf8Bytes(note(utf8Bytes(text)));
  let cut = headWithin(text, room);
  const lastBreak = cut.lastIndexOf("\n");
  if (lastBreak >= 0 && lastBreak > cut.length - 2000) cut = cut.slice(0, lastBreak);
  return cut + note(utf8Bytes(text) - utf8Bytes(cut));
}
