import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import type { DependencyFormat } from "../contracts/runners.js";

/**
 * The runner's own entries in the files that say which package is installed (docs/ARCHITECTURE.md, Gates): npm's,
 * yarn's and pnpm's lockfiles, pyproject.toml's dependency tables, requirements files and the
 * Python lockfiles. Pointing `vitest` at a local folder in package-lock.json, or `pytest` at a fake
 * wheel in requirements.txt, decides which tests pass as surely as editing the runner's config.
 * The files and their formats are listed once, in src/contracts/runners.ts (DEPENDENCY_FILES); this
 * reads them. Every other entry stays the driver's to add and change.
 */

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** package.json's sections that name dependencies (and what replaces them). */
export const DEPENDENCY_SECTIONS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "overrides",
  "resolutions",
] as const;

/** PEP 503: Python package names compare lowercased, with runs of `-`, `_` and `.` as one `-`. */
export const pythonName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");
/** The name a PEP 508 requirement (`pytest>=8; python_version>"3.9"`, `pytest @ file:///x`) starts with. */
const requirementName = (text: string) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(text)?.[1];

type Entries = Map<string, unknown>;

/** npm's lockfile (v1's nested `dependencies`, v2/v3's `packages` by install folder). */
function npmLockEntries(lock: Record<string, unknown>, frozen: (name: string) => boolean): Entries {
  const out: Entries = new Map();
  for (const [key, entry] of Object.entries(isObject(lock.packages) ? lock.packages : {})) {
    if (key === "") {
      // The root's own entry repeats package.json's dependency sections.
      for (const section of DEPENDENCY_SECTIONS) {
        const deps = isObject(entry) && isObject(entry[section]) ? entry[section] : {};
        for (const [name, spec] of Object.entries(deps))
          if (frozen(name)) out.set(`packages[""].${section}.${name}`, spec);
      }
      continue;
    }
    const at = key.lastIndexOf("node_modules/");
    if (at !== -1 && frozen(key.slice(at + "node_modules/".length))) out.set(`packages["${key}"]`, entry);
  }
  const walk = (deps: unknown, prefix: string) => {
    if (!isObject(deps)) return;
    for (const [name, entry] of Object.entries(deps)) {
      if (frozen(name)) out.set(`${prefix}.${name}`, entry);
      if (isObject(entry)) walk(entry.dependencies, `${prefix}.${name}.dependencies`);
    }
  };
  walk(lock.dependencies, "dependencies");
  return out;
}

/** A package name from a yarn descriptor (`vitest@^4.1.0`, `@vitest/runner@npm:4.1.0`). */
const descriptorName = (descriptor: string) => {
  const at = descriptor.indexOf("@", descriptor.startsWith("@") ? 1 : 0);
  return at === -1 ? descriptor : descriptor.slice(0, at);
};

/** yarn.lock, classic or berry: one block per entry, its header the descriptors it resolves. */
function yarnLockEntries(text: string, frozen: (name: string) => boolean): Entries {
  const out: Entries = new Map();
  let header: string | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    if (!/^\s/.test(line)) {
      header = line.replace(/:\s*$/, "").replace(/"/g, "");
      const names = header.split(/,\s*/).map((d) => descriptorName(d.trim()));
      if (!names.some(frozen)) header = undefined;
      else out.set(`"${header}"`, "");
    } else if (header !== undefined) out.set(`"${header}"`, `${out.get(`"${header}"`) as string}${line.trim()}\n`);
  }
  return out;
}

/** A package name from a pnpm lockfile key (`/vitest@4.1.0`, `vitest@4.1.0(@types/node@20.0.0)`, `/@vitest/runner/1.0.0`). */
const pnpmKeyName = (key: string) => /^\/?(@[^/@]+\/[^/@(]+|[^/@(]+)/.exec(key)?.[1] ?? key;

function pnpmLockEntries(lock: Record<string, unknown>, frozen: (name: string) => boolean): Entries {
  const out: Entries = new Map();
  for (const section of ["packages", "snapshots", "patchedDependencies"]) {
    const table = isObject(lock[section]) ? lock[section] : {};
    for (const [key, entry] of Object.entries(table))
      if (frozen(pnpmKeyName(key))) out.set(`${section}["${key}"]`, entry);
  }
  // An override's key may be `vitest`, `vitest@4` or `parent>vitest`.
  for (const [key, entry] of Object.entries(isObject(lock.overrides) ? lock.overrides : {}))
    if (frozen(descriptorName(key.split(">").at(-1)!))) out.set(`overrides["${key}"]`, entry);
  const importers: Record<string, unknown> = isObject(lock.importers) ? { ...lock.importers } : {};
  // Lockfile v5 of a single project keeps the importer's sections at the top.
  importers["(top)"] = lock;
  for (const [dir, importer] of Object.entries(importers)) {
    if (!isObject(importer)) continue;
    const prefix = dir === "(top)" ? "" : `importers["${dir}"].`;
    for (const section of ["dependencies", "devDependencies", "optionalDependencies", "specifiers"]) {
      const deps = isObject(importer[section]) ? importer[section] : {};
      for (const [name, spec] of Object.entries(deps)) if (frozen(name)) out.set(`${prefix}${section}.${name}`, spec);
    }
  }
  // A .pnpmfile.cjs may rewrite any package as it is installed, the runner's among them.
  if (lock.pnpmfileChecksum !== undefined) out.set("pnpmfileChecksum", lock.pnpmfileChecksum);
  return out;
}

/** pyproject.toml's dependency lists and tables (PEP 621, PEP 735, Poetry, uv, PDM, Hatch) and pytest's entry points. */
function pyprojectEntries(doc: Record<string, unknown>, frozen: (name: string) => boolean): Entries {
  const out: Entries = new Map();
  const at = (value: unknown, ...keys: string[]): unknown =>
    keys.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), value);
  const list = (label: string, value: unknown) => {
    if (!Array.isArray(value)) return;
    const byName = new Map<string, string[]>();
    for (const item of value) {
      if (typeof item !== "string") continue;
      const name = requirementName(item);
      if (name && frozen(pythonName(name)))
        byName.set(pythonName(name), [...(byName.get(pythonName(name)) ?? []), item]);
    }
    for (const [name, items] of byName) out.set(`${label}: ${name}`, items.sort());
  };
  const table = (label: string, value: unknown) => {
    if (!isObject(value)) return;
    for (const [name, spec] of Object.entries(value)) if (frozen(pythonName(name))) out.set(`${label} ${name}`, spec);
  };
  const each = (value: unknown, visit: (key: string, inner: unknown) => void) => {
    if (isObject(value)) for (const [key, inner] of Object.entries(value)) visit(key, inner);
  };
  list("[project] dependencies", at(doc, "project", "dependencies"));
  each(at(doc, "project", "optional-dependencies"), (extra, v) => list(`[project.optional-dependencies] ${extra}`, v));
  each(at(doc, "dependency-groups"), (group, v) => list(`[dependency-groups] ${group}`, v));
  table("[tool.poetry.dependencies]", at(doc, "tool", "poetry", "dependencies"));
  table("[tool.poetry.dev-dependencies]", at(doc, "tool", "poetry", "dev-dependencies"));
  each(at(doc, "tool", "poetry", "group"), (group, v) =>
    table(`[tool.poetry.group.${group}.dependencies]`, at(v, "dependencies")),
  );
  table("[tool.uv.sources]", at(doc, "tool", "uv", "sources"));
  for (const key of ["dev-dependencies", "override-dependencies", "constraint-dependencies"])
    list(`[tool.uv] ${key}`, at(doc, "tool", "uv", key));
  each(at(doc, "tool", "pdm", "dev-dependencies"), (group, v) => list(`[tool.pdm.dev-dependencies] ${group}`, v));
  each(at(doc, "tool", "hatch", "envs"), (env, v) => {
    list(`[tool.hatch.envs.${env}] dependencies`, at(v, "dependencies"));
    list(`[tool.hatch.envs.${env}] extra-dependencies`, at(v, "extra-dependencies"));
  });
  // A project that registers a pytest plugin (the `pytest11` entry point) runs its own code inside pytest.
  const plugins = at(doc, "project", "entry-points", "pytest11");
  if (plugins !== undefined) out.set("[project.entry-points.pytest11]", plugins);
  const poetryPlugins = at(doc, "tool", "poetry", "plugins", "pytest11");
  if (poetryPlugins !== undefined) out.set('[tool.poetry.plugins."pytest11"]', poetryPlugins);
  return out;
}

/** poetry.lock, uv.lock, pdm.lock: one `[[package]]` table per installed package. */
function pythonLockEntries(doc: Record<string, unknown>, frozen: (name: string) => boolean): Entries {
  const out: Entries = new Map();
  for (const entry of Array.isArray(doc.package) ? doc.package : []) {
    if (!isObject(entry) || typeof entry.name !== "string" || !frozen(pythonName(entry.name))) continue;
    const key = `[[package]] ${pythonName(entry.name)}`;
    out.set(key, [...((out.get(key) as string[] | undefined) ?? []), JSON.stringify(entry)].sort());
  }
  return out;
}

/**
 * A requirements file's lines that decide the runner: lines naming it (by requirement name, or a
 * URL, path or egg naming it), and every option line (`-e`, `-r`, `-c`, `--index-url`,
 * `--find-links`…), since each may change where the runner comes from.
 */
function requirementsEntries(text: string, frozen: (name: string) => boolean, words: readonly string[]): Entries {
  const out: Entries = new Map();
  for (const raw of text.replace(/\\\n/g, " ").split("\n")) {
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") continue;
    const name = requirementName(line);
    const key = line.startsWith("-")
      ? line.split(/[\s=]/)[0]!
      : name && frozen(pythonName(name))
        ? pythonName(name)
        : words.find((w) => line.toLowerCase().includes(w));
    if (key !== undefined) out.set(key, [...((out.get(key) as string[] | undefined) ?? []), line].sort());
  }
  return out;
}

/** Which of two entry sets differ: a field of an entry both have, or the entry itself. */
function entryChanges(before: Entries, after: Entries): string[] {
  const changed: string[] = [];
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const b = before.get(key);
    const a = after.get(key);
    if (same(b, a)) continue;
    if (isObject(b) && isObject(a)) {
      for (const field of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort())
        if (!same(b[field], a[field])) changed.push(`${key}.${field}`);
    } else changed.push(key);
  }
  return changed;
}

const FORMAT_NAME: Record<DependencyFormat, string> = {
  "package-lock": "JSON",
  "yarn-lock": "a yarn lockfile",
  "pnpm-lock": "YAML",
  pyproject: "TOML",
  requirements: "a requirements file",
  "python-lock": "TOML",
};

/**
 * The runner's entries a change of a dependency file alters (empty when it changes other entries
 * only). `frozen` says which package names are the runner's (npm names as written, Python names
 * normalised); `before`/`after` are the file's text, null where it does not exist. A text that
 * does not parse is one change: which entries changed cannot be told.
 */
export function dependencyEntryChanges(input: {
  format: DependencyFormat;
  before: string | null;
  after: string | null;
  frozen: (name: string) => boolean;
  /** Lowercase names a requirements line may carry in a URL or path (`pytest` in `./wheels/pytest-8.whl`). */
  pythonWords: readonly string[];
}): string[] {
  const { format, frozen } = input;
  const norm = (text: string | null) => (text === null ? "" : text.replace(/\r\n?/g, "\n"));
  const before = norm(input.before);
  const after = norm(input.after);
  if (before === after) return [];
  const entries = (text: string): Entries | undefined => {
    if (format === "yarn-lock") return yarnLockEntries(text, frozen);
    if (format === "requirements") return requirementsEntries(text, frozen, input.pythonWords);
    try {
      const doc: unknown =
        text.trim() === ""
          ? {}
          : format === "package-lock"
            ? JSON.parse(text)
            : format === "pnpm-lock"
              ? parseYaml(text)
              : parseToml(text);
      if (!isObject(doc)) return undefined;
      if (format === "package-lock") return npmLockEntries(doc, frozen);
      if (format === "pnpm-lock") return pnpmLockEntries(doc, frozen);
      return format === "pyproject" ? pyprojectEntries(doc, frozen) : pythonLockEntries(doc, frozen);
    } catch {
      return undefined;
    }
  };
  const b = entries(before);
  const a = entries(after);
  if (!b || !a) return [`its text is not ${FORMAT_NAME[format]}, so which entries changed cannot be told`];
  return entryChanges(b, a);
}
