import { z } from "zod";

/**
 * The one way a zod error becomes words for a person. Each issue is `where: what`, in zod 4's own
 * notation: the path as `z.prettifyError` prints it (`z.core.toDotPath`: `database.provider`,
 * `tests[3].ac`) and zod's message; an issue about the whole value is its message alone, as in
 * `z.prettifyError`. Callers say what was being read; they never format issues themselves.
 */

/** What the formatter reads of an issue: zod's own, or a problem of ours about a place in a file. */
export interface ProblemAt {
  readonly path: ReadonlyArray<PropertyKey>;
  readonly message: string;
}

/** One issue on one line: `tests[3].ac: Invalid input: expected string, received number`. */
function problemLine(issue: ProblemAt): string {
  return issue.path.length > 0 ? `${z.core.toDotPath([...issue.path])}: ${issue.message}` : issue.message;
}

/** Every issue on its own line, in zod's order; past `limit`, one last line says how many were left out. */
export function zodProblems(issues: z.ZodError | ReadonlyArray<ProblemAt>, limit = Infinity): string[] {
  const lines = ("issues" in issues ? issues.issues : issues).map(problemLine);
  if (lines.length <= limit) return lines;
  return [...lines.slice(0, limit), `… and ${lines.length - limit} more`];
}

interface FormatOptions {
  /** On one line, problems joined by `; ` (logs, one-line reasons); else one `  - ` line each. */
  inline?: boolean;
  limit?: number;
}

/**
 * A zod error as a message: `subject` says what was read and why it failed ("the cycle request
 * is invalid"), then every problem.
 */
export function formatZodError(
  issues: z.ZodError | ReadonlyArray<ProblemAt>,
  subject: string,
  { inline = false, limit }: FormatOptions = {},
): string {
  const lines = zodProblems(issues, limit);
  return inline ? `${subject}: ${lines.join("; ")}` : `${subject}:\n${lines.map((line) => `  - ${line}`).join("\n")}`;
}
