/**
 * Freezing (docs/ARCHITECTURE.md, Gates): what a gate approves is pinned by sha256 hashes of file texts (hash.ts), and a test
 * file is frozen once its RED is verified (here). Pure functions: the machine and the app share them.
 */

import type { GateName } from "../contracts/gates.js";
import { normaliseLineEndings } from "./hash.js";

// The hashes live in hash.ts and the runner's reach in runner-reach.ts; these stay reachable here
// for the importers that have not moved to them yet (the transition, the push reader, the cycle).
export { hashFrozenText } from "./hash.js";
export { commandFolders, configuredCommands, isRunnerConfigPath, touchesBeyondConsort } from "./runner-reach.js";

/** What is frozen on a track now: what a commit may not change (the machine derives it from its snapshot). */
export interface FrozenState {
  /** Files frozen by a gate (path → sha256 and which gate froze it). */
  gated: Record<string, { hash: string; gate: GateName }>;
  /**
   * Frozen test files: path → the text frozen by its latest verified RED. A verified RED freezes
   * every file under the test globs the track had pushed by then (helpers, fixtures, setup files,
   * snapshots, conftest.py), not only the files of its tests.
   */
  tests: Record<string, string>;
  /**
   * Set once a RED is verified (`by` names its test): the files under the test globs the track
   * never pushed (the trunk's helpers, fixtures, setup files) are frozen as they are at the base.
   * `known` lists the test-glob files the track did push, whose rule is `tests`.
   */
  baseTests?: { by: string; known: readonly string[] };
  /** Set once the test-list gate has opened: the runner's configuration is frozen (see runnerConfigChanges). */
  runnerConfig?: boolean;
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
 * The test-file rule (docs/ARCHITECTURE.md, Gates). A RED step may only add: every frozen line still there, in order,
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
  // The texts hashFrozenText would hash: equal exactly when their hashes are.
  const [frozenText, currentText] = [normaliseLineEndings(frozen), normaliseLineEndings(current)];
  if (currentText === frozenText) return { ok: true, reasons: [] };

  const frozenLines = frozenText.split("\n");
  const currentLines = currentText.split("\n");
  // Greedy subsequence match: each frozen line at the earliest place after the previous one.
  let at = 0;
  let missing: { line: string; number: number } | undefined;
  // The lines of the current text the match passed over: what the step added, when nothing is missing.
  const added: string[] = [];
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
    added.push(...currentLines.slice(at, found));
    at = found + 1;
  }
  if (!missing) added.push(...currentLines.slice(at));

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
    // With every frozen line matched, the file has more lines carrying the marker exactly when an
    // added line carries it: a long frozen file is not scanned fifteen times on every RED.
    if (!missing && !added.some((line) => pattern.test(line))) continue;
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
