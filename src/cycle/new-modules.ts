import { posix } from "node:path";
import type { Missing } from "./junit/types.js";

/**
 * A module the approved architecture declares and the track creates (docs/ARCHITECTURE.md, Cycles): a RED whose test
 * fails only because it, or a name it declares in `exports`, is not written yet at the commit under
 * test is "behaviour missing". Which modules are new is read from git: those absent from the tree
 * the design gate approved. Everything else a failure says is missing stays a crash.
 */

export interface NewModule {
  path: string;
  /** Whether the commit under test holds the module. */
  written: boolean;
  /** The names it declares in `exports` that the module's text at the commit does not mention. */
  unwritten: string[];
  exports: string[];
}

export type NewModules =
  | {
      ok: true;
      modules: NewModule[];
      /** Declared modules that existed when the design gate was approved: not new, no pass. */
      existing: string[];
    }
  | { ok: false; reason: string };

/** Where a RED may turn for a module or a name nobody wrote yet. */
export const DECLARE_A_MODULE =
  "declare it in .consort/architecture.json modules (architect, before the design gate; a name the test imports goes in the module's exports), or test through an existing seam";

/** The judgement of one failure that names something missing. */
export type MissingJudgement = { declared: true; says: string } | { declared: false; why: string };

const SCRIPT_EXTENSION = /\.(c|m)?(j|t)sx?$/;
/** A JavaScript path without its script extension or a trailing /index: how an import names a module. */
const moduleKey = (path: string) => path.replace(SCRIPT_EXTENSION, "").replace(/\/index$/, "");

/** The module a JavaScript import names, as an absolute-looking path: relative specifiers resolve against the importer. */
function importedPath(specifier: string, importer: string | undefined, testFile: string): string | undefined {
  const from = importer?.replace(/^file:\/\//, "") ?? testFile;
  if (specifier.startsWith(".")) return posix.resolve("/", posix.dirname(from), specifier);
  // vite names a module under its root as /src/pricing.js; node and mocha write the absolute path.
  if (specifier.startsWith("/") || specifier.startsWith("file://")) return specifier.replace(/^file:\/\//, "");
  return undefined; // a package name: never a module the track writes
}

/** The declared modules a failing JavaScript import or Python module name stands for. */
function modulesNamed(missing: Missing, testFile: string, modules: readonly { path: string }[]): string[] {
  if (!missing.module) return [];
  if (missing.language === "python") {
    const dotted = missing.module;
    return modules
      .map((m) => m.path)
      .filter((path) => {
        const name = path
          .replace(/\.py$/, "")
          .replace(/\/(__init__)?$/, "")
          .split("/")
          .join(".");
        return name === dotted || name.endsWith(`.${dotted}`);
      });
  }
  const imported = importedPath(missing.module, missing.importer, testFile);
  if (!imported) return [];
  const key = moduleKey(imported);
  return modules
    .map((m) => m.path)
    .filter((path) => key === `/${moduleKey(path)}` || key.endsWith(`/${moduleKey(path)}`));
}

/**
 * Whether a failure that names a missing module or export is the declared case: a module the
 * approved architecture declares, absent when the design gate was approved and still absent at the
 * commit, or a name declared in its exports that the module, written since, does not have yet.
 */
export function judgeMissing(missing: Missing, testFile: string, newModules: NewModules | undefined): MissingJudgement {
  const what = missing.module ? `'${missing.module}'` : `the name ${missing.export}`;
  if (!newModules)
    return {
      declared: false,
      why: `${what} is missing and the request names no approved architecture to tell a declared module from a crash: ${DECLARE_A_MODULE}`,
    };
  if (!newModules.ok) return { declared: false, why: `${what} is missing, and ${newModules.reason}` };
  const { modules, existing } = newModules;
  const named = modulesNamed(missing, testFile, modules);
  if (missing.module && !missing.export) {
    const [path, ...others] = named;
    if (!path) {
      const old = modulesNamed(
        missing,
        testFile,
        existing.map((p) => ({ path: p })),
      )[0];
      return {
        declared: false,
        why: old
          ? `${what} cannot be loaded, but ${old} existed when the design gate was approved: it is not a module the track creates, so failing to load it proves nothing (fix the import)`
          : `${what} cannot be loaded and the approved architecture declares no new module there: ${DECLARE_A_MODULE}`,
      };
    }
    if (others.length)
      return { declared: false, why: `${what} matches ${named.join(", ")}: the cycle cannot tell which` };
    const module = modules.find((m) => m.path === path)!;
    return module.written
      ? {
          declared: false,
          why: `${what} cannot be loaded, yet ${path} is in the commit: fix the import (a file that does not load proves nothing)`,
        }
      : { declared: true, says: `behaviour missing: ${path} not written yet` };
  }
  const name = missing.export!;
  const candidates = (missing.module ? modules.filter((m) => named.includes(m.path)) : modules).filter(
    (m) => m.written && m.exports.includes(name),
  );
  const lacking = candidates.filter((m) => m.unwritten.includes(name));
  if (lacking.length === 1)
    return { declared: true, says: `behaviour missing: ${name}, declared for ${lacking[0]!.path}, not written yet` };
  if (lacking.length > 1)
    return {
      declared: false,
      why: `${name} is declared for ${lacking.map((m) => m.path).join(" and ")}: the report does not say which module the test called, so the cycle cannot tell`,
    };
  if (candidates.length)
    return {
      declared: false,
      why: `${name} is missing, but ${candidates[0]!.path} at this commit mentions it: the failure is not the declared name being unwritten (fix the test or the import)`,
    };
  return {
    declared: false,
    why: `${name} is not a name the approved architecture declares for a module the track creates: ${DECLARE_A_MODULE}`,
  };
}
