import { CHECK_NAMES, type CheckName } from "../../../src/gates/names.js";
import type { CheckRun, GitHubWorld } from "./github-world.js";

/**
 * The seven Consort checks on a commit as branch protection sees them: each one's conclusion once
 * completed, else its status (`in_progress`), or `missing` when the app wrote none.
 */
export function checkTable(world: GitHubWorld, sha: string): Record<CheckName, string> {
  const runs = world.checksOn(sha);
  return Object.fromEntries(
    CHECK_NAMES.map((name) => {
      const run = runs.get(name);
      return [name, run ? (run.conclusion ?? run.status) : "missing"];
    }),
  ) as Record<CheckName, string>;
}

/** A check run's summary as a person reads it, without the hidden content marker the app appends. */
export function summaryOf(run: CheckRun): string {
  return (run.output.summary ?? "").replace(/\n\n<!-- consort:content [0-9a-f]{64} -->$/, "");
}

/** What the discipline check lists under "What happened", one entry per violation, as plain text. */
export function violationsOn(run: CheckRun): string[] {
  return summaryOf(run)
    .split("\n")
    .filter((line) => line.startsWith("| ["))
    .map((row) => {
      const cells = row.split(/(?<!\\)\|/);
      return cells[cells.length - 2]!.trim().replace(/\\\|/g, "|").replace(/&lt;/g, "<");
    });
}
