import type { ConsortConfig } from "../config/consort-config.js";
import { checkFrozenTestFile, type FrozenState } from "../gates/freeze.js";
import { hashFrozenText } from "../gates/hash.js";
import {
  configuredCommands,
  installedRunnerPackage,
  isRunnerConfigPath,
  runnerConfigChanges,
  runnerReach,
  touchesBeyondConsort,
  type RunnerReach,
} from "../gates/runner-reach.js";
import type { GateName } from "../contracts/gates.js";
import type { Stage } from "../contracts/stages.js";
import type { PushedCommit } from "../contracts/track.js";
import { globMatcher } from "./globs.js";
import type { RoleName } from "../contracts/roles.js";
import { PROTECTED_PATHS, ROLES, ownershipAt, waitingFor } from "./roles.js";
import { testCodeIn } from "./test-code.js";
import { readRoleTrailer } from "./trailer.js";

/**
 * Commit classification (docs/ARCHITECTURE.md, Tracks, artifacts and roles; Gates): is this commit the step the machine expects, by the right
 * role and author, touching only what that role owns now and nothing frozen or protected? Every
 * reason is reported, not just the first, so one push tells the agent everything to fix.
 */

export interface ClassifyInput {
  commit: PushedCommit;
  stage: Stage;
  /** The build unit in turn, when the stage is in the build lane. */
  unit: string | null;
  config: ConsortConfig;
  frozen: FrozenState;
  /** Who pushed the commit (the push's `sender`); undefined when not known. */
  pusher?: string | undefined;
}

export interface Classification {
  accepted: boolean;
  /** The role the trailer claims (null when missing or invalid). */
  role: RoleName | null;
  reasons: string[];
  /** Gate-frozen files the commit changed: their gates must be withdrawn. */
  frozenTouched: Array<{ path: string; gate: GateName }>;
}

const isProtected = globMatcher(PROTECTED_PATHS);

/** Every path a commit touches, a rename counting as both its old and its new path. */
function touchedPaths(commit: PushedCommit): Array<{ path: string; removed: boolean; added: boolean }> {
  const out: Array<{ path: string; removed: boolean; added: boolean }> = [];
  for (const change of commit.changes) {
    // The new path of a rename did not exist before it: it is added, and the old path removed.
    const renamed = change.previousPath !== undefined && change.previousPath !== change.path;
    out.push({ path: change.path, removed: change.status === "removed", added: change.status === "added" || renamed });
    if (change.previousPath && change.previousPath !== change.path)
      out.push({ path: change.previousPath, removed: true, added: false });
  }
  return out;
}

/**
 * A test-glob file the track never pushed, changed after a verified RED: it is frozen as it is at
 * the base, and its frozen text is not held, so no change to it can be checked as only adding.
 */
function baseTestChanged(path: string, removed: boolean, by: string): string {
  return (
    `${path} ${removed ? "was removed" : "changed"}: it is under the test globs and existed before the track (a helper, fixture, setup file, snapshot or conftest.py), ` +
    `so ${by}'s verified RED froze it as it is at the base; restore it, and put new helpers in new files`
  );
}

/**
 * What the frozen runner configuration reaches at this commit, from the package.json texts the
 * handler read before it (and after it, where it changed them); undefined when the root's text
 * before the commit was not provided, so what the test command runs cannot be told.
 */
function reachOf(commit: PushedCommit, commands: Record<string, string>): RunnerReach | undefined {
  if (commit.before?.["package.json"] === undefined) return undefined;
  const packages: Record<string, Array<string | null>> = {};
  const isPackage = (path: string) => path === "package.json" || path.endsWith("/package.json");
  for (const [path, text] of Object.entries(commit.before)) if (isPackage(path)) packages[path] = [text];
  for (const [path, text] of Object.entries(commit.files))
    if (isPackage(path) && text !== undefined) packages[path] = [...(packages[path] ?? []), text];
  return runnerReach(commands, packages);
}

/** The configured commands of a configuration, worked out once for every commit it classifies. */
const commandsByConfig = new WeakMap<ConsortConfig, { commands: Record<string, string>; commandLines: string[] }>();
function commandsOf(config: ConsortConfig): { commands: Record<string, string>; commandLines: string[] } {
  let known = commandsByConfig.get(config);
  if (!known) {
    const commands = configuredCommands(config.commands);
    known = { commands, commandLines: Object.values(commands) };
    commandsByConfig.set(config, known);
  }
  return known;
}

type Ownership = {
  owner: ReturnType<typeof ownershipAt>;
  owned: (path: string) => boolean;
  excluded: (path: string) => boolean;
};
/** What a step owns, with its matchers, per configuration: every commit of a push asks for the same. */
const ownershipByConfig = new WeakMap<ConsortConfig, Map<string, Ownership>>();
function ownershipOf(stage: Stage, config: ConsortConfig, unit: string | null): Ownership {
  let known = ownershipByConfig.get(config);
  if (!known) ownershipByConfig.set(config, (known = new Map()));
  const key = `${stage}\u0000${unit ?? ""}`;
  let ownership = known.get(key);
  if (!ownership) {
    const owner = ownershipAt(stage, config, unit);
    ownership = { owner, owned: globMatcher(owner.paths), excluded: globMatcher(owner.except) };
    if (known.size >= 64) known.clear();
    known.set(key, ownership);
  }
  return ownership;
}

const runnerConfigRefusal = (path: string, changed: readonly string[]) =>
  `${path}: changes the test runner's configuration (${changed.join(", ")}), frozen at the test-list gate because it decides which tests pass: ` +
  "restore it (other dependencies may change), or ask a person to renegotiate the test list";

export function classifyCommit({ commit, stage, unit, config, frozen, pusher }: ClassifyInput): Classification {
  const reasons: string[] = [];
  const frozenTouched: Array<{ path: string; gate: GateName }> = [];
  const short = commit.sha.slice(0, 7);
  const claim = readRoleTrailer(commit.message);
  const role = claim.ok ? claim.role : null;
  const { owner, owned, excluded } = ownershipOf(stage, config, unit);

  if (!claim.ok) reasons.push(claim.reason);
  if (owner.role === null) {
    reasons.push(`no role's turn: the track is at ${stage}, waiting for ${waitingFor(stage)}`);
  } else if (role && role !== owner.role) {
    reasons.push(
      `not this role's turn: the track is at ${stage}, which is the ${ROLES[owner.role].title}'s (${owner.role}); the commit claims ${role}`,
    );
  }

  if (role) {
    const bound = config.roles[role];
    const author = commit.authorLogin?.toLowerCase();
    if (bound && bound.length > 0) {
      if (author === undefined)
        reasons.push(
          `role ${role} is bound to ${bound.join(", ")}, and the author of ${short} has no GitHub account linked`,
        );
      // GitHub logins ignore case: the configuration may spell one differently from the API.
      else if (!bound.some((login) => login.toLowerCase() === author))
        reasons.push(
          `author ${commit.authorLogin} is not bound to role ${role} (roles.${role} in .github/consort.yml: ${bound.join(", ")})`,
        );
      // `git commit --author` writes any author; who pushed is GitHub's own record, so it must be bound too.
      if (pusher === undefined)
        reasons.push(
          `role ${role} is bound to ${bound.join(", ")}, and who pushed ${short} is not known (found after the push, not in its webhook): push it again as a bound identity`,
        );
      else if (!bound.some((login) => login.toLowerCase() === pusher.toLowerCase()))
        reasons.push(
          `${short} was pushed by ${pusher}, who is not bound to role ${role} (roles.${role} in .github/consort.yml: ${bound.join(", ")}); a bound identity must push its own commits`,
        );
    }
  }

  const isTest = globMatcher(config.paths.tests);
  const known = new Set(frozen.baseTests?.known ?? []);
  const frozenStep = stage === "red" && role === "navigator" ? "red" : "other";
  // The driver's steps: production code may not carry test code (see test-code.ts).
  const checksTestCode = stage === "green" || stage === "repair" || stage === "refactor";
  const isCode = globMatcher(config.paths.code);
  const { commands, commandLines } = commandsOf(config);
  const readsPackage = frozen.runnerConfig === true && commit.changes.some(touchesBeyondConsort);
  const reach = readsPackage ? reachOf(commit, commands) : undefined;
  if (readsPackage && !reach)
    reasons.push(
      `the text of package.json before ${short} was not provided, so which files the frozen test command runs cannot be told (fail closed)`,
    );
  for (const { path, removed, added } of touchedPaths(commit)) {
    if (isProtected(path)) {
      reasons.push(
        `touches protected path ${path}: workflows, .github/consort.yml and CODEOWNERS never change on a track (change them on the default branch)`,
      );
      continue;
    }
    const gated = frozen.gated[path];
    if (gated) {
      const text = removed ? undefined : commit.files[path];
      if (removed || text === undefined || text === null || hashFrozenText(text) !== gated.hash) {
        frozenTouched.push({ path, gate: gated.gate });
        reasons.push(
          `touches frozen file ${path}, approved at the ${gated.gate} gate: reset the branch, or ask a person to renegotiate`,
        );
        continue;
      }
    }
    // A file the frozen commands or scripts name (`node scripts/run-tests.js`, `./test.sh`) runs as
    // part of the test command. Test files keep their own rule, and runner files their keys'.
    const namedBy = reach?.files.get(path);
    if (namedBy !== undefined && !isTest(path) && !isRunnerConfigPath(path, commandLines)) {
      frozenTouched.push({ path, gate: "test-list" });
      reasons.push(
        `${path}: ${removed ? "removes" : added ? "adds" : "changes"} a file the test command runs (named by ${namedBy}), frozen at the test-list gate because it decides which tests pass: ` +
          "restore it, or ask a person to renegotiate the test list",
      );
      continue;
    }
    // A package.json or dependency file among a fixture's test files keeps the test-file rule.
    const nestedTestFile = path !== "package.json" && isTest(path);
    const installed = frozen.runnerConfig ? installedRunnerPackage(path) : undefined;
    if (installed !== undefined) {
      frozenTouched.push({ path, gate: "test-list" });
      reasons.push(runnerConfigRefusal(path, [`a file of the installed ${installed} package`]));
      continue;
    }
    if (frozen.runnerConfig && isRunnerConfigPath(path, commandLines) && !nestedTestFile) {
      const before = commit.before?.[path];
      const after = removed ? null : commit.files[path];
      if (before === undefined || after === undefined) {
        reasons.push(
          `the text of runner configuration file ${path} before and after ${short} was not provided, so the frozen runner configuration cannot be checked (fail closed)`,
        );
        continue;
      }
      const changed = runnerConfigChanges({ path, before, after, commands: commandLines, plugins: reach?.plugins });
      if (changed.length > 0) {
        frozenTouched.push({ path, gate: "test-list" });
        reasons.push(runnerConfigRefusal(path, changed));
        continue;
      }
    }
    const frozenTest = frozen.tests[path];
    if (frozenTest !== undefined) {
      const provided = commit.files[path];
      if (!removed && provided === undefined) {
        reasons.push(
          `the text of frozen test file ${path} after ${short} was not provided, so the test-file rule cannot be checked (fail closed)`,
        );
        continue;
      }
      const check = checkFrozenTestFile({
        path,
        frozen: frozenTest,
        current: removed || provided === null ? undefined : provided,
        step: frozenStep,
      });
      if (!check.ok) {
        reasons.push(...check.reasons);
        continue;
      }
    } else if (frozen.baseTests && !added && !known.has(path) && isTest(path)) {
      reasons.push(baseTestChanged(path, removed, frozen.baseTests.by));
      continue;
    }
    if (checksTestCode && !removed && isCode(path)) {
      const text = commit.files[path];
      const found = typeof text === "string" ? testCodeIn(path, text) : undefined;
      if (found) reasons.push(found);
    }
    if (owner.role !== null && (!owned(path) || excluded(path))) {
      const who = role ?? owner.role;
      reasons.push(
        `path ${path} is not ${who}'s to change at ${stage} (allowed now: ${owner.paths.join(", ") || "nothing"}${owner.except.length ? `; never: ${owner.except.join(", ")}` : ""})`,
      );
    }
  }

  return { accepted: reasons.length === 0, role, reasons: reasons.map((r) => `${short}: ${r}`), frozenTouched };
}
