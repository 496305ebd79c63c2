import { z } from "zod";
import { SCHEMAS_DIR } from "./paths.js";

/** One problem with an artifact: which file, where in it (a JSON path), what is wrong, what to do. */
export const ArtifactIssue = z.object({
  file: z.string(),
  /** JSON path into the file, e.g. `$.tests[3].ac`; `$` for the whole file. */
  path: z.string().describe("JSON path into the file, e.g. $.tests[3].ac; $ for the whole file."),
  message: z.string(),
  fix: z.string().describe("What to change."),
});
export type ArtifactIssue = z.infer<typeof ArtifactIssue>;

/** `["tests", 3, "ac"]` → `$.tests[3].ac`: zod's own path notation, rooted at `$`. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  const dotted = z.core.toDotPath([...path]);
  return dotted === "" || dotted.startsWith("[") ? `$${dotted}` : `$.${dotted}`;
}

/** What a person (or agent) should do about a zod issue, in one line. */
function fixFor(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? `\`${String(issue.path.at(-1))}\`` : "the file";
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? `add ${field} (${issue.expected})` : `make ${field} a ${issue.expected}`;
    case "unrecognized_keys":
      return `remove ${issue.keys.map((k) => `\`${k}\``).join(", ")} (not part of the format; see ${SCHEMAS_DIR}/ for what is)`;
    case "invalid_value":
      return `use one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      return issue.origin === "array"
        ? `add at least ${String(issue.minimum)} item(s) to ${field}`
        : `make ${field} at least ${String(issue.minimum)} long`;
    case "too_big":
      return `shorten ${field} to at most ${String(issue.maximum)}`;
    case "invalid_format":
      return `write ${field} as ${issue.message}`;
    case "custom":
      // A rule may state its fix apart from its message (`params.fix`), so neither repeats the other.
      return typeof issue.params?.fix === "string" ? issue.params.fix : issue.message;
    default:
      return `correct ${field}: ${issue.message}`;
  }
}

/** Every zod issue as an `ArtifactIssue` for `file`. */
export function zodIssues(file: string, error: z.ZodError): ArtifactIssue[] {
  return error.issues.map((issue) => ({
    file,
    path: jsonPath(issue.path),
    message: issue.message,
    fix: fixFor(issue),
  }));
}

/** One line per issue, for a terminal or a check run. */
export function formatIssue(issue: ArtifactIssue): string {
  const fix = issue.fix === issue.message ? "" : ` → ${issue.fix}`;
  return `${issue.file} ${issue.path}: ${issue.message}${fix}`;
}
