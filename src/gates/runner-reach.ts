import { posix } from "node:path";
import picomatch from "picomatch";
import { DEPENDENCY_FILES, RUNNERS } from "../contracts/runners.js";
import { normaliseLineEndings } from "./hash.js";
import { DEPENDENCY_SECTIONS, dependencyEntryChanges, isObject, pythonName, same } from "./runner-deps.js";

/**
 * The test runner's configuration, frozen once the test-list gate opens (docs/ARCHITECTURE.md, Gates): which test
 * passes is decided by it as much as by the tests. The runners and their files, keys and packages
 * are listed once, in src/contracts/runners.ts; this is the rule that reads them.
 */

const RUNNER_FILES = RUNNERS.flatMap((r) => r.configFiles);
const matches = (patterns: readonly string[], name: string) =>
  patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
const PACKAGE_KEYS = new Set(RUNNERS.flatMap((r) => r.packageKeys));
const NPM_PACKAGES = RUNNERS.filter((r) => r.ecosystem === "npm").flatMap((r) => r.packages);
const PYTHON_PACKAGES = RUNNERS.filter((r) => r.ecosystem === "python").flatMap((r) => r.packages);
/** package.json names every runner's packages (as it did before ecosystems were told apart). */
const isRunnerPackage = (name: string) =>
  matches(
    RUNNERS.flatMap((r) => r.packages),
    name,
  );
const isPythonRunnerPackage = (name: string) => matches(PYTHON_PACKAGES, pythonName(name));
/** The bare names a requirements line may carry inside a URL or a path (`pytest` of `pytest-*`). */
const PYTHON_WORDS = [...new Set(PYTHON_PACKAGES.map((p) => p.replace(/[-*]+$/, "")))];

const isPackageJson = (path: string) => path === "package.json" || path.endsWith("/package.json");
const DEPENDENCY_MATCHERS = DEPENDENCY_FILES.map((file) => ({
  file,
  matches: picomatch([file.path, `**/${file.path}`], { dot: true }),
}));
const anyDependencyFile = picomatch(
  DEPENDENCY_FILES.flatMap((file) => [file.path, `**/${file.path}`]),
  { dot: true },
);
const dependencyFile = (path: string) =>
  anyDependencyFile(path) ? DEPENDENCY_MATCHERS.find(({ matches }) => matches(path))?.file : undefined;
const RUNNER_MATCHERS = RUNNER_FILES.map((file) => ({ file, matches: picomatch(file.path, { dot: true }) }));
/**
 * The runner package a path is installed for under node_modules/ (by its last node_modules/
 * folder), if any: committed, such a file is run as the runner wherever the install does not
 * replace node_modules. Any change to one is refused without reading it.
 */
export function installedRunnerPackage(path: string): string | undefined {
  // Asked for every path of every commit: most name no node_modules folder at all.
  if (!path.includes("node_modules/")) return undefined;
  const found = [...path.matchAll(/(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)(?=\/|$)/g)].at(-1)?.[1];
  return found !== undefined && isRunnerPackage(found) ? found : undefined;
}

/**
 * A change that may touch what the test command runs: anything outside `.consort/` (the app's own
 * artifacts, which gates freeze). Only for such a commit is the root package.json read before it.
 */
export const touchesBeyondConsort = (change: { path: string; previousPath?: string | undefined }) =>
  !change.path.startsWith(".consort/") ||
  (change.previousPath !== undefined && !change.previousPath.startsWith(".consort/"));

/** The configured commands (`commands` of .github/consort.yml) that are set, by name. */
export const configuredCommands = (commands: Readonly<Record<string, unknown>>): Record<string, string> =>
  Object.fromEntries(Object.entries(commands).filter((e): e is [string, string] => typeof e[1] === "string"));

/**
 * The folders the configured commands run in besides the root (`cd api && npm test`,
 * `npm --prefix api test`): a runner's configuration files there are frozen as at the root.
 */
export function commandFolders(commands: readonly string[]): string[] {
  const key = commands.join("\u0000");
  const known = FOLDERS_OF.get(key);
  if (known) return known;
  const folders = foldersOf(commands);
  if (FOLDERS_OF.size > 100) FOLDERS_OF.clear();
  FOLDERS_OF.set(key, folders);
  return folders;
}
/** commandFolders is asked once per changed path: the commands are parsed once. */
const FOLDERS_OF = new Map<string, string[]>();

function foldersOf(commands: readonly string[]): string[] {
  const out = new Set<string>();
  for (const command of commands)
    for (const segment of segments(command, "", "")) if (segment.cwd) out.add(segment.cwd);
  return [...out].sort();
}

/** The runner file a path is, relative to the root or a command's folder. */
function runnerFilesOf(path: string, folders: readonly string[]) {
  const relative = ["", ...folders].flatMap((dir) =>
    dir === "" ? [path] : path.startsWith(`${dir}/`) ? [path.slice(dir.length + 1)] : [],
  );
  return RUNNER_MATCHERS.filter(({ matches }) => relative.some((rel) => matches(rel))).map(({ file }) => file);
}

/**
 * True for a file whose text (or part of it) configures a supported runner: every package.json,
 * the runners' own files at the root (or where a command runs, given `commands`), the dependency
 * files that pin the runner's packages. Nothing under node_modules/ (see installedRunnerPackage).
 */
export function isRunnerConfigPath(path: string, commands: readonly string[] = []): boolean {
  // Asked for every path of every commit, and the same paths and commands recur push after push.
  const commandsKey = commands.join("\u0000");
  let known = runnerConfigPaths.get(commandsKey);
  const answered = known?.get(path);
  if (answered !== undefined) return answered;
  const answer =
    !/(?:^|\/)node_modules\//.test(path) &&
    (isPackageJson(path) ||
      dependencyFile(path) !== undefined ||
      runnerFilesOf(path, commandFolders(commands)).length > 0);
  if (!known || known.size >= 4096) {
    // One key a path, not commands and path run together: building that string per path cost more than the answer.
    if (runnerConfigPaths.size >= 16) runnerConfigPaths.clear();
    known = new Map();
    runnerConfigPaths.set(commandsKey, known);
  }
  known.set(path, answer);
  return answer;
}

/** isRunnerConfigPath's answers by commands, then path (a pure function of the two). */
const runnerConfigPaths = new Map<string, Map<string, boolean>>();

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

/** One simple command of a command line: the folder it runs in, its words, and its text. */
interface Segment {
  cwd: string;
  words: string[];
  text: string;
  source: string;
}

/** A path inside the repository, from `word` as written in folder `cwd`; undefined when it leaves it. */
function resolvePath(cwd: string, word: string): string | undefined {
  if (word.startsWith("/")) return undefined;
  const path = posix.normalize(posix.join(cwd || ".", word)).replace(/\/$/, "");
  return path === "." || path.startsWith("../") || path === ".." ? undefined : path;
}

/**
 * A command line cut into its simple commands (at `&&`, `||`, `;`, `|`, newlines), quotes and
 * parentheses dropped, and `cd DIR` taken as the folder of what follows it. Read conservatively:
 * it need not run, only name what it may run.
 */
function segments(command: string, cwd: string, source: string): Segment[] {
  const out: Segment[] = [];
  let dir = cwd;
  for (const text of command.split(/&&|\|\||[;|\n]/)) {
    const words = text
      .replace(/["'`()]/g, " ")
      .split(/\s+/)
      .filter(Boolean)
      // `--config=x.ts`, `NODE_OPTIONS=--require=./hack.js`: what follows `=` is named too.
      .flatMap((word) =>
        /^(?:-|[A-Za-z_]\w*=)/.test(word) && word.includes("=") ? [word, ...word.split("=").slice(1)] : [word],
      );
    if (words[0] === "cd" && words[1] !== undefined) {
      dir = resolvePath(dir, words[1]) ?? "";
      continue;
    }
    // `npm --prefix api test`, `yarn --cwd api test`, `pnpm -C api test`: the scripts are api's.
    const prefix = /(?:--prefix|--cwd|--dir|-C)(?:=|\s+)(\S+)/.exec(text)?.[1];
    out.push({ cwd: prefix ? (resolvePath(dir, prefix.replace(/["']/g, "")) ?? dir) : dir, words, text, source });
  }
  return out;
}

/** A word that may name a file: it has a folder or an extension, and is no option, URL, variable or glob. */
const pathLike = (word: string) =>
  !word.startsWith("-") &&
  !word.includes("://") &&
  !/[$*?{}[\]<>~=]/.test(word) &&
  (word.includes("/") || /\.[A-Za-z][A-Za-z0-9]{0,5}$/.test(word));

const scriptOf = (pkg: Record<string, unknown>, name: string) =>
  isObject(pkg.scripts) && typeof pkg.scripts[name] === "string" ? pkg.scripts[name] : undefined;
const parsePackage = (text: string | null | undefined): Record<string, unknown> | undefined => {
  if (text === null) return {};
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
};
/** Every string inside a JSON value (a `jest` block's reporters, transforms, setup files…). */
const stringsIn = (value: unknown): string[] =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsIn)
      : isObject(value)
        ? Object.values(value).flatMap(stringsIn)
        : [];

/** What the frozen runner configuration reaches beyond its own keys (shared by every caller that asks about the same texts: read only). */
export interface RunnerReach {
  /** Files the configured commands, the scripts they call and the runners' package.json blocks name (path → who names it). */
  files: ReadonlyMap<string, string>;
  /** Packages the commands, scripts and blocks name that a package.json depends on: the runner's plugins. */
  plugins: ReadonlySet<string>;
}

/**
 * What the configured commands reach: the package.json scripts they call (and their pre/post
 * scripts, in the folder each runs in), every file those name (each path-like word, resolved
 * from the folder it runs in), the files and packages the runners' package.json blocks name, and
 * the dependencies among the words (a reporter, a transform, `--import tsx`). `packages` holds the
 * package.json texts known (path → texts, before and after a change); a folder whose package.json
 * is not among them contributes only the command's own words.
 */
export function runnerReach(
  commands: Readonly<Record<string, string>>,
  packages: Readonly<Record<string, ReadonlyArray<string | null>>>,
): RunnerReach {
  // Every commit of a push, and of the pushes after it, mostly asks about the same texts.
  let commandsKey = commandsKeys.get(commands);
  if (commandsKey === undefined) {
    commandsKey = JSON.stringify(commands);
    commandsKeys.set(commands, commandsKey);
  }
  const key = `${commandsKey}\u0000${JSON.stringify(packages)}`;
  const known = reachOfTexts.get(key);
  if (known) return known;
  const reach = computeRunnerReach(commands, packages);
  reachOfTexts.set(key, reach);
  if (reachOfTexts.size > REACH_CACHE_SIZE) reachOfTexts.delete(reachOfTexts.keys().next().value!);
  return reach;
}

/** Each commands object's text, for the key above: the same object comes with every commit of a push. */
const commandsKeys = new WeakMap<Readonly<Record<string, string>>, string>();

/** The reaches worked out last, by their commands and package.json texts (oldest first). */
const reachOfTexts = new Map<string, RunnerReach>();
const REACH_CACHE_SIZE = 32;

function computeRunnerReach(
  commands: Readonly<Record<string, string>>,
  packages: Readonly<Record<string, ReadonlyArray<string | null>>>,
): RunnerReach {
  const parsed = new Map<string, Array<Record<string, unknown>>>();
  for (const [path, texts] of Object.entries(packages))
    parsed.set(
      path,
      texts.map(parsePackage).filter((p): p is Record<string, unknown> => p !== undefined),
    );
  const files = new Map<string, string>();
  const words = new Set<string>();
  const named = (dir: string, file: string, source: string) => {
    const path = resolvePath(dir, file);
    if (path !== undefined && !files.has(path)) files.set(path, source);
  };
  const name = (dir: string, word: string, source: string) => {
    words.add(word);
    const file = word.replace(/^<rootDir>\//, "");
    if (pathLike(file)) named(dir, file, source);
  };
  const queue: Array<{ dir: string; script: string }> = [];
  const visit = (segment: Segment) => {
    for (const word of segment.words) name(segment.cwd, word, segment.source);
    if (segment.words[0] === "make" || segment.words[0] === "gmake")
      for (const file of ["Makefile", "makefile", "GNUmakefile"]) named(segment.cwd, file, segment.source);
    for (const script of scriptsCalled(segment.text)) queue.push({ dir: segment.cwd, script });
  };
  for (const [key, command] of Object.entries(commands))
    for (const segment of segments(command, "", `.github/consort.yml commands.${key}`)) visit(segment);
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < 500) {
    const { dir, script } = queue.shift()!;
    const path = dir ? `${dir}/package.json` : "package.json";
    if (seen.has(`${path}\u0000${script}`)) continue;
    seen.add(`${path}\u0000${script}`);
    queue.push({ dir, script: `pre${script}` }, { dir, script: `post${script}` });
    for (const pkg of parsed.get(path) ?? []) {
      const body = scriptOf(pkg, script);
      if (body) for (const segment of segments(body, dir, `${path} scripts.${script}`)) visit(segment);
    }
  }
  for (const [path, versions] of parsed) {
    const dir = posix.dirname(path) === "." ? "" : posix.dirname(path);
    for (const pkg of versions)
      for (const key of PACKAGE_KEYS) for (const text of stringsIn(pkg[key])) name(dir, text, `${path} ${key}`);
  }
  const plugins = new Set<string>();
  for (const versions of parsed.values())
    for (const pkg of versions)
      for (const section of DEPENDENCY_SECTIONS)
        for (const dep of Object.keys(isObject(pkg[section]) ? pkg[section] : {}))
          if ([...words].some((w) => w === dep || w.startsWith(`${dep}/`))) plugins.add(dep);
  return { files, plugins };
}

function packageJsonChanges(
  before: string | null,
  after: string | null,
  commands: readonly string[],
  plugins: ReadonlySet<string>,
): string[] {
  const b = parsePackage(before);
  const a = parsePackage(after);
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
    const names = new Set(
      [...Object.keys(before), ...Object.keys(after)].filter((n) => isRunnerPackage(n) || plugins.has(n)),
    );
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
    // A comment may follow a header (TOML, and pytest's ini reader, iniconfig, drops `#` and `;` ones).
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:[#;].*)?$/.exec(line)?.[1];
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
 * (pyproject.toml, tox.ini, setup.cfg), the plugin (pom.xml), the runner's entries (lockfiles,
 * pyproject's dependency tables, requirements files) or the whole file. Empty when the change
 * leaves the runner's configuration as it was (a new, unrelated dependency). `before` and `after`
 * are the file's text (null where it does not exist); `commands` the configured commands, whose
 * scripts are part of the configuration; `plugins` the packages the configuration names
 * (runnerReach), frozen like the runner's own.
 */
export function runnerConfigChanges(input: {
  path: string;
  before: string | null;
  after: string | null;
  commands: readonly string[];
  plugins?: ReadonlySet<string>;
}): string[] {
  const { path, before, after, commands } = input;
  const plugins = input.plugins ?? new Set<string>();
  if (isPackageJson(path)) return packageJsonChanges(before, after, commands, plugins);
  const norm = (text: string | null) => (text === null ? null : normaliseLineEndings(text));
  const changed: string[] = [];
  for (const file of runnerFilesOf(path, commandFolders(commands))) {
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
  const dependencies = dependencyFile(path);
  if (dependencies) {
    const frozen =
      dependencies.ecosystem === "python"
        ? isPythonRunnerPackage
        : (name: string) => matches(NPM_PACKAGES, name) || plugins.has(name);
    changed.push(
      ...dependencyEntryChanges({ format: dependencies.format, before, after, frozen, pythonWords: PYTHON_WORDS }),
    );
  }
  return [...new Set(changed)];
}
