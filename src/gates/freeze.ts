import { createHash } from "node:crypto";
import picomatch from "picomatch";
import { RUNNERS } from "../cycle/runners.js";

/**
 * Freezing (design §4): what a gate approves is pinned by sha256 hashes of file texts, and a test
 * file is frozen once its RED is verified. Pure functions: the machine and the app share them.
 */

/** Line endings normalised so a checkout on Windows does not look like a change. */
function normaliseLineEndings(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** sha256 hex of a frozen file's text after CRLF/CR → LF. */
export function hashFrozenText(text: string): string {
  return createHash("sha256").update(normaliseLineEndings(text), "utf8").digest("hex");
}

/**
 * The git blob id of a text (sha-1 of `blob <bytes>\0<bytes>`): what a tree lists for a file holding
 * exactly that text, so a frozen file is checked at a commit by one tree read, without its content.
 */
export function gitBlobId(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1")
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest("hex");
}

/** One hash over a set of already-hashed files, stable over the order the paths come in. */
export function manifestHashFromHashes(hashes: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const path of Object.keys(hashes).sort()) hash.update(`${path}\u0000${hashes[path]}\n`, "utf8");
  return hash.digest("hex");
}

/** One hash over a set of files (path → text), stable over the order the paths come in. */
export function manifestHash(files: Record<string, string>): string {
  const hashes: Record<string, string> = {};
  for (const [path, text] of Object.entries(files)) hashes[path] = hashFrozenText(text);
  return manifestHashFromHashes(hashes);
}

/**
 * Markers that skip, focus, invert or defer a test in the common runners. Adding one to a frozen
 * test silences it as surely as deleting it, so it counts as a change.
 */
const SKIP_OR_FOCUS_MARKERS: Array<{ marker: string; pattern: RegExp }> = [
  { marker: ".skip", pattern: /(?<!mark)\.skip(?:If)?\s*[(.`]/ },
  { marker: ".only", pattern: /\.only\s*[(.`]/ },
  { marker: ".todo", pattern: /\.todo\s*[(.`]/ },
  { marker: ".fails", pattern: /\.fails\s*[(.`]/ },
  { marker: ".runIf", pattern: /\.runIf\s*\(/ },
  { marker: "xit", pattern: /(?<![\w.$])x(?:it|test|describe|context|specify)\s*\(\s*['"`]/ },
  { marker: "fit", pattern: /(?<![\w.$])f(?:it|test|describe|context)\s*\(\s*['"`]/ },
  { marker: "@pytest.mark.skip", pattern: /@pytest\.mark\.(?:skip|skipif|xfail)\b/ },
  { marker: "pytest.skip(", pattern: /\bpytest\.(?:skip|xfail)\s*\(/ },
  { marker: "@unittest.skip", pattern: /@unittest\.(?:skip|skipIf|skipUnless|expectedFailure)\b/ },
  { marker: "skipTest(", pattern: /\.skipTest\s*\(/ },
  { marker: "t.Skip(", pattern: /\bt\.Skip(?:Now|f)?\s*\(/ },
  { marker: "@Disabled", pattern: /@(?:Disabled|Ignore)\b/ },
  { marker: "#[ignore]", pattern: /#\[ignore\b/ },
  { marker: "skip:", pattern: /\{\s*skip\s*:\s*true\b/ },
];

/** The skip or focus markers a line carries (empty when none). */
export function skipOrFocusMarkers(line: string): string[] {
  return SKIP_OR_FOCUS_MARKERS.filter(({ pattern }) => pattern.test(line)).map(({ marker }) => marker);
}

const lines = (text: string) => normaliseLineEndings(text).split("\n");
const excerpt = (line: string) => (line.trim().length > 60 ? `${line.trim().slice(0, 57)}...` : line.trim());

export interface FrozenTestFileCheck {
  path: string;
  /** The text frozen when the file's last RED was verified. */
  frozen: string;
  /** The text now; `undefined` when the file was deleted (or renamed away). */
  current: string | undefined;
  /** `red`: a later RED may add to the file; `other`: every other step must leave it identical. */
  step: "red" | "other";
}

/**
 * The test-file rule (design §4). A RED step may only add: every frozen line still there, in order,
 * and no added line skips or focuses a test. Any other step must leave the file identical.
 */
export function checkFrozenTestFile(input: FrozenTestFileCheck): { ok: boolean; reasons: string[] } {
  const { path, frozen, current, step } = input;
  if (current === undefined) {
    return {
      ok: false,
      reasons: [`${path}: a frozen test file was deleted; restore it (a verified RED test may never be removed)`],
    };
  }
  if (hashFrozenText(current) === hashFrozenText(frozen)) return { ok: true, reasons: [] };

  const frozenLines = lines(frozen);
  const currentLines = lines(current);
  // Greedy subsequence match: each frozen line at the earliest place after the previous one.
  let at = 0;
  let missing: { line: string; number: number } | undefined;
  for (let i = 0; i < frozenLines.length; i++) {
    const wanted = frozenLines[i]!;
    let found = -1;
    for (let j = at; j < currentLines.length; j++) {
      if (currentLines[j] === wanted) {
        found = j;
        break;
      }
    }
    if (found === -1) {
      missing = { line: wanted, number: i + 1 };
      break;
    }
    at = found + 1;
  }

  const reasons: string[] = [];
  if (step === "other") {
    reasons.push(
      `${path}: a frozen test file changed; outside a RED step it must stay exactly as verified (restore it)`,
    );
  } else if (missing) {
    reasons.push(
      `${path}: frozen line ${missing.number} (\`${excerpt(missing.line)}\`) was changed or removed; a RED step may only add lines to a frozen test file`,
    );
  }
  // A marker counts as added when the file now has more lines carrying it than the frozen text had
  // (so a marker edited into a frozen line is caught as well as one on an inserted line).
  for (const { marker, pattern } of SKIP_OR_FOCUS_MARKERS) {
    const before = frozenLines.filter((line) => pattern.test(line)).length;
    const carrying = currentLines.map((line, i) => ({ line, number: i + 1 })).filter(({ line }) => pattern.test(line));
    if (carrying.length > before) {
      const frozenSet = new Set(frozenLines);
      const where = carrying.find(({ line }) => !frozenSet.has(line)) ?? carrying.at(-1)!;
      reasons.push(
        `${path}: line ${where.number} adds the skip/focus marker \`${marker}\`; a frozen or new test may not be skipped or focused`,
      );
    }
  }
  return { ok: reasons.length === 0, reasons };
}

/**
 * The test runner's configuration, frozen once the test-list gate opens (design §4): which test
 * passes is decided by it as much as by the tests. The runners and their files, keys and packages
 * are listed once, in src/cycle/runners.ts; this is the rule that reads them.
 */

const DEPENDENCY_SECTIONS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "overrides",
  "resolutions",
] as const;

const RUNNER_FILES = RUNNERS.flatMap((r) => r.configFiles);
const isRunnerFile = picomatch(
  RUNNER_FILES.map((f) => f.path),
  { dot: true },
);
const PACKAGE_KEYS = new Set(RUNNERS.flatMap((r) => r.packageKeys));
const isRunnerPackage = (name: string) =>
  RUNNERS.some((r) => r.packages.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p)));

/** True for a file whose text (or part of it) configures a supported runner: package.json and the runners' own files. */
export function isRunnerConfigPath(path: string): boolean {
  return path === "package.json" || isRunnerFile(path);
}

/** npm, pnpm, yarn and bun subcommands that are not scripts. */
const NOT_SCRIPTS = new Set(["install", "i", "ci", "add", "exec", "x", "dlx", "create", "init", "publish", "audit"]);

/** The package.json scripts a command line calls: `npm test`, `npm run x`, `yarn x`, `pnpm run x`… */
function scriptsCalled(command: string): string[] {
  const out: string[] = [];
  const call = /\b(npm|pnpm|yarn|bun)\s+(?:--?[\w-]+(?:=\S+)?\s+)*(?:(run|run-script)\s+)?([\w:.@/-]+)/g;
  for (const match of command.matchAll(call)) {
    const [, tool, run, name] = match;
    if (!name || (!run && NOT_SCRIPTS.has(name))) continue;
    out.push(tool === "npm" && !run && name === "t" ? "test" : name);
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const scriptOf = (pkg: Record<string, unknown>, name: string) =>
  isObject(pkg.scripts) && typeof pkg.scripts[name] === "string" ? pkg.scripts[name] : undefined;

function packageJsonChanges(before: string | null, after: string | null, commands: readonly string[]): string[] {
  const parse = (text: string | null): Record<string, unknown> | undefined => {
    if (text === null) return {};
    try {
      const value: unknown = JSON.parse(text);
      return isObject(value) ? value : undefined;
    } catch {
      return undefined;
    }
  };
  const b = parse(before);
  const a = parse(after);
  if (!b || !a) return ["its text is not a JSON object, so which keys changed cannot be told"];
  const changed: string[] = [];
  // The scripts the configured commands call, what those call in turn, and their pre/post scripts,
  // as either side of the change has them.
  const called = new Set<string>();
  const queue = commands.flatMap(scriptsCalled);
  while (queue.length > 0 && called.size < 200) {
    const name = queue.shift()!;
    if (called.has(name)) continue;
    called.add(name);
    queue.push(`pre${name}`, `post${name}`);
    for (const pkg of [b, a]) {
      const body = scriptOf(pkg, name);
      if (body) queue.push(...scriptsCalled(body));
    }
  }
  for (const name of [...called].sort())
    if (!same(scriptOf(b, name), scriptOf(a, name))) changed.push(`scripts.${name}`);
  for (const key of [...PACKAGE_KEYS].sort()) if (!same(b[key], a[key])) changed.push(key);
  for (const section of DEPENDENCY_SECTIONS) {
    const before = isObject(b[section]) ? b[section] : {};
    const after = isObject(a[section]) ? a[section] : {};
    const names = new Set([...Object.keys(before), ...Object.keys(after)].filter(isRunnerPackage));
    for (const name of [...names].sort()) if (!same(before[name], after[name])) changed.push(`${section}.${name}`);
  }
  return changed;
}

/** The `[section]` blocks (INI) or tables (TOML) whose name is, or starts a dotted name with, one of `sections`. */
function sectionsText(text: string | null, sections: readonly string[]): string {
  if (text === null) return "";
  const kept: string[] = [];
  let keep = false;
  for (const line of normaliseLineEndings(text).split("\n")) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$/.exec(line)?.[1];
    if (header !== undefined)
      keep = sections.some((s) => header === s || header.startsWith(`${s}.`) || header.startsWith(`${s}:`));
    if (keep) kept.push(line);
  }
  return kept.join("\n").trim();
}

/** The `<plugin>` blocks of a pom.xml whose artifactId is `artifactId`. */
function mavenPluginText(text: string | null, artifactId: string): string {
  if (text === null) return "";
  const blocks = normaliseLineEndings(text).match(/<plugin>[\s\S]*?<\/plugin>/g) ?? [];
  return blocks.filter((block) => block.includes(`<artifactId>${artifactId}</artifactId>`)).join("\n");
}

/**
 * What of a runner configuration file a change alters: the keys (package.json), the sections
 * (pyproject.toml, tox.ini, setup.cfg), the plugin (pom.xml) or the whole file. Empty when the
 * change leaves the runner's configuration as it was (a new, unrelated dependency). `before` and
 * `after` are the file's text (null where it does not exist); `commands` the configured commands,
 * whose scripts are part of the configuration.
 */
export function runnerConfigChanges(input: {
  path: string;
  before: string | null;
  after: string | null;
  commands: readonly string[];
}): string[] {
  const { path, before, after, commands } = input;
  if (path === "package.json") return packageJsonChanges(before, after, commands);
  const norm = (text: string | null) => (text === null ? null : normaliseLineEndings(text));
  const changed: string[] = [];
  for (const file of RUNNER_FILES) {
    if (!picomatch.isMatch(path, file.path, { dot: true })) continue;
    const part = file.part;
    if (part.kind === "whole") {
      if (norm(before) !== norm(after))
        changed.push(before === null ? "the file, added" : after === null ? "the file, removed" : "the whole file");
    } else if (part.kind === "section") {
      if (sectionsText(before, part.sections) !== sectionsText(after, part.sections))
        changed.push(`[${part.sections.join("], [")}]`);
    } else if (mavenPluginText(before, part.artifactId) !== mavenPluginText(after, part.artifactId)) {
      changed.push(`the ${part.artifactId} plugin`);
    }
  }
  return [...new Set(changed)];
}
