import type { ConsortConfig } from "../config/consort-config.js";
import { DEPENDENCY_FILES } from "../contracts/runners.js";
import { DEPENDENCY_SECTIONS } from "../gates/runner-deps.js";
import { globMatcher } from "./globs.js";
import { PROTECTED_PATHS } from "./roles.js";

/**
 * The maintenance lane's path rule (docs/ARCHITECTURE.md §10, Branch kinds): a maintenance branch
 * (a dependency bump) changes dependency manifests and lockfiles, and the files
 * `maintenance.paths` names, nothing else. No test, no design artifact, no application code: the
 * default branch's frozen suite is what verifies it, so it may not change what that suite is.
 */

/**
 * The dependency manifests and lockfiles a maintenance branch may change, in any folder: every
 * package.json and the one list of dependency files the runner rule reads too (src/contracts/runners.ts).
 */
const MAINTENANCE_FILES: readonly string[] = ["package.json", ...DEPENDENCY_FILES.map((file) => file.path)].flatMap(
  (path) => [path, `**/${path}`],
);

/**
 * The package.json keys a dependency bump changes (the runner rule's sections, and the pinned
 * package manager). Every other key (scripts above all: `"test": "exit 0"` would pass any suite)
 * decides what the frozen suite runs, so it stays as it is.
 */
const BUMPED_KEYS = new Set<string>([...DEPENDENCY_SECTIONS, "packageManager"]);

const isPackageJson = (path: string) => path === "package.json" || path.endsWith("/package.json");

/** The package.json keys other than the dependency sections that differ between two texts; undefined when either does not parse. */
function nonDependencyChanges(before: string | null, after: string | null): string[] | undefined {
  const parse = (text: string | null): Record<string, unknown> | undefined => {
    if (text === null) return {};
    try {
      const value: unknown = JSON.parse(text);
      return value && typeof value === "object" && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  };
  const [was, now] = [parse(before), parse(after)];
  if (!was || !now) return undefined;
  const keys = new Set([...Object.keys(was), ...Object.keys(now)]);
  return [...keys].filter((key) => !BUMPED_KEYS.has(key) && JSON.stringify(was[key]) !== JSON.stringify(now[key]));
}

/** What the rule reads of a pushed commit (the machine's PushedCommit has these fields). */
interface MaintenanceCommit {
  sha: string;
  changes: ReadonlyArray<{ path: string; previousPath?: string | undefined }>;
  /** Texts after the commit, by path (package.json among them). */
  files: Readonly<Record<string, string | null>>;
  /** Texts before the commit, by path (package.json among them). */
  before?: Readonly<Record<string, string | null>> | undefined;
}

/**
 * Why `commit` is not a maintenance change under `config` (empty when it is one). Every reason is
 * reported, each naming the file and what to do, as the track's classifier does.
 */
export function maintenanceCommitProblems(
  commit: MaintenanceCommit,
  config: Pick<ConsortConfig, "paths" | "maintenance">,
): string[] {
  const short = commit.sha.slice(0, 7);
  const isProtected = globMatcher(PROTECTED_PATHS);
  const isTest = globMatcher(config.paths.tests);
  const isDependencyFile = globMatcher(MAINTENANCE_FILES);
  const widened = globMatcher(config.maintenance.paths);
  const reasons: string[] = [];
  const paths = new Set<string>();
  for (const change of commit.changes) {
    paths.add(change.path);
    if (change.previousPath) paths.add(change.previousPath);
  }
  for (const path of paths) {
    if (isProtected(path)) {
      reasons.push(
        `touches protected path ${path}: workflows, .github/consort.yml and CODEOWNERS never change on a maintenance branch (change them on the default branch)`,
      );
    } else if (path.startsWith(".consort/")) {
      reasons.push(
        `${path}: a maintenance branch never changes the design artifacts or the test list; make this change on a feature branch (a track)`,
      );
    } else if (isTest(path)) {
      reasons.push(
        `${path}: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)`,
      );
    } else if (widened(path)) {
      continue;
    } else if (!isDependencyFile(path)) {
      reasons.push(
        `${path} is application code: a maintenance branch changes only dependency manifests and lockfiles (package.json, ${DEPENDENCY_FILES.map((file) => file.path).join(", ")}) and maintenance.paths (${config.maintenance.paths.join(", ") || "none"}); ` +
          "make this change on a feature branch, or widen maintenance.paths in .github/consort.yml on the default branch",
      );
    } else if (isPackageJson(path)) {
      const before = commit.before?.[path];
      const after = commit.files[path];
      const changed = before === undefined || after === undefined ? undefined : nonDependencyChanges(before, after);
      if (changed === undefined)
        reasons.push(
          `the texts of ${path} before and after ${short} were not provided or do not parse, so whether it changes only dependencies cannot be told (fail closed)`,
        );
      else if (changed.length > 0)
        reasons.push(
          `${path}: changes ${changed.join(", ")}; a maintenance branch changes only its dependency sections (${[...BUMPED_KEYS].join(", ")}), since the rest decides what the frozen suite runs`,
        );
    }
  }
  return reasons.map((reason) => `${short}: ${reason}`);
}
