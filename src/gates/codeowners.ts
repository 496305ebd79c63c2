import picomatch from "picomatch";

/**
 * CODEOWNERS, as GitHub reads it (src/github/codeowners.ts fetches the file; the approval gate
 * decides from the rules): one rule a line, `pattern owner…`; the LAST matching rule
 * wins; a rule without owners leaves the path unowned. Owners are `@user`, `@org/team` or an
 * e-mail address (kept, but never matched to a login: GitHub maps e-mails, we cannot).
 */

export interface CodeownersRule {
  pattern: string;
  owners: string[];
  line: number;
}

export function parseCodeowners(text: string): CodeownersRule[] {
  const rules: CodeownersRule[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const tokens = line.split(/\s+/);
    const owners: string[] = [];
    for (const token of tokens.slice(1)) {
      if (token.startsWith("#")) break; // trailing comment
      owners.push(token);
    }
    // `\#` escapes a pattern that starts with #.
    rules.push({ pattern: tokens[0]!.replace(/^\\#/, "#"), owners, line: index + 1 });
  });
  return rules;
}

function globsFor(pattern: string): string[] {
  let p = pattern;
  const dirOnly = p.endsWith("/");
  if (dirOnly) p = p.replace(/\/+$/, "");
  // A slash at the start or in the middle anchors the pattern at the root (gitignore rules).
  const anchored = p.startsWith("/") || p.includes("/");
  p = p.replace(/^\/+/, "");
  if (p === "") return ["**"];
  const base = anchored ? p : `**/${p}`;
  const last = p.split("/").pop() ?? "";
  if (dirOnly) return [`${base}/**`];
  // A name without wildcards may be a directory: it then owns everything below it.
  // `docs/*` owns the files directly in docs/ only (GitHub's documented example).
  return last.includes("*") ? [base] : [base, `${base}/**`];
}

function matcher(pattern: string): (path: string) => boolean {
  return picomatch(globsFor(pattern), { dot: true });
}

/** The owners of a file path (no leading slash), by the last matching rule; [] when unowned. */
export function ownersOf(rules: CodeownersRule[], path: string): string[] {
  for (let i = rules.length - 1; i >= 0; i--) {
    if (matcher(rules[i]!.pattern)(path)) return rules[i]!.owners;
  }
  return [];
}

/**
 * The owners of the `.consort/` folder: the owners of a file directly in it that no narrower
 * pattern (such as `*.json`) picks out, so only rules about the folder itself, or everything, count.
 */
export function consortOwners(rules: CodeownersRule[]): string[] {
  return ownersOf(rules, ".consort/consort-ownership-probe");
}
