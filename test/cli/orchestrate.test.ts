import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runConsort } from "../helpers/cli.js";
import type { NextAction } from "../../src/orchestrator/types.js";
import { edited, stockflowText } from "../orchestrator/fixtures/stockflow.js";
import { reach } from "../orchestrator/helpers/reach.js";
import { LONG_TRACK_TESTS_PER_UNIT } from "../orchestrator/helpers/track.js";
import { compactStateBranch } from "../board/compact-state-branch.js";
import { localRepo, type LocalRepo } from "../board/local-repo.js";
import { describeLane } from "../../src/orchestrator/index.js";
import { checkStates } from "../../src/gates/checks.js";
import { simpleGit } from "simple-git";

const bin = new URL("../../bin/consort.js", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "consort-orchestrate-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function checkout(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}
const stockflow = () => ({
  ".consort/spec.json": stockflowText.spec,
  ".consort/architecture.json": stockflowText.architecture,
  ".consort/db-design.json": stockflowText.dbDesign,
  ".consort/ux.json": stockflowText.ux,
  ".consort/test-list.json": stockflowText.testList,
  ".consort/reviews/T1.json": stockflowText.reviewT1,
});
/** The real binary, in a child process (slow: used once, for the exit code a shell sees). */
const consortBinary = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" });

/** The same program in-process: stdout, stderr and the exit code. */
const consort = runConsort;

describe("consort validate", () => {
  it("passes StockFlow's artifacts and exits 0", async () => {
    const run = await consort("validate", "-C", checkout("valid", stockflow()));
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^✓ 6 artifact file\(s\) valid as of test-list/);
    expect(run.status).toBe(0);
  });

  it("lists every problem, in artifacts and configuration, and the binary exits 1", () => {
    const dir = checkout("broken", {
      ...stockflow(),
      ".consort/test-list.json": edited(stockflowText.testList, (j) => (j.tests[6].ac = "S2-AC9")),
      ".consort/reviews/T1.json": JSON.stringify({ unit: "T2", verdict: "accept" }),
      ".github/consort.yml": "granularity: story\nrepairBound: 0\n",
    });
    const run = consortBinary("validate", "-C", dir, "--json");
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as { ok: boolean; issues: Array<{ file: string; path: string }> };
    expect(report.ok).toBe(false);
    expect(report.issues.map((i) => `${i.file} ${i.path}`)).toEqual([
      ".github/consort.yml $.granularity",
      ".github/consort.yml $.repairBound",
      ".consort/test-list.json $.tests[6].ac",
      ".consort/test-list.json $.tests",
      ".consort/reviews/T1.json $.unit",
    ]);
  });
});

describe("consort next and status", () => {
  const sim = reach("green");
  const stateFile = join(work, "track.json");
  writeFileSync(stateFile, JSON.stringify({ schemaVersion: 1, trackId: sim.context.trackId, snapshot: sim.snapshot }));
  const dir = checkout("config", { ".github/consort.yml": "repairBound: 2\n" });

  it("gives an agent its NextAction as JSON, from a consort/state track file", async () => {
    const run = await consort("next", "--state", stateFile, "-C", dir, "--json");
    expect(run.status).toBe(0);
    const action = JSON.parse(run.stdout) as NextAction;
    expect(action).toMatchObject({
      stage: "green",
      actor: "agent",
      role: "driver",
      unit: "T1",
      trailer: "Consort-Role: driver",
      frozenPaths: [{ path: "test/stock.test.ts", rule: "unchanged" }],
    });
    expect(action.allowedPaths).toContain("src/**");
  });

  it("tells a person the same in words", async () => {
    const run = await consort("next", "--state", stateFile, "-C", dir);
    expect(run.stdout).toContain("next: agent (driver)");
    expect(run.stdout).toContain("every commit ends with the trailer: Consort-Role: driver");
  });

  it("shows the whole lane and the checks", async () => {
    const run = await consort("status", "--state", stateFile);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("▶ T1: green");
    expect(run.stdout).toContain(
      `✓ consort/design: Approved by @lead-human at ${sim.context.gates.design.approvedHash!.slice(0, 7)}`,
    );
    expect(run.stdout).toContain("… consort/build: T1 (1 of 2): green");
  });

  it("refuses a state file of an unknown version with a clear error", async () => {
    const bad = join(work, "future.json");
    writeFileSync(bad, JSON.stringify({ ...sim.snapshot, schemaVersion: 7 }));
    const run = await consort("status", "--state", bad);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("track snapshot schema version 7 is not supported");
    expect(run.stderr).toContain("upgrade Consort");
  });
});

describe("consort status on a compact state file of a 50-unit track", () => {
  const KEY = "status-compact-key-0123456789abcdef0123456789";
  let repo: LocalRepo | undefined;
  afterAll(() => repo?.cleanup());

  it("reads its texts and every finished unit's record from the clone's git and shows the whole lane", async () => {
    repo = await localRepo("feature/elsewhere");
    const { sim, text } = await compactStateBranch(repo.path, 50, LONG_TRACK_TESTS_PER_UNIT, KEY);
    const file = join(work, "compact-50.json");
    writeFileSync(file, text);
    const run = await consort("status", "--state", file, "-C", repo.path, "--json");
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const shown = JSON.parse(run.stdout) as { stage: string; lane: unknown; checks: unknown };
    expect(shown.stage).toBe("red-verify");
    expect(shown.lane).toEqual(describeLane(sim.snapshot));
    expect((shown.lane as { done: string[] }).done.filter((step) => /^S\d+-AC\d+/.test(step))).toHaveLength(49);
    expect(shown.checks).toEqual(JSON.parse(JSON.stringify(checkStates(sim.snapshot))));
  }, 120_000);

  it("says which clone lacks the records, and how to fetch them", async () => {
    const empty = await localRepo("feature/empty");
    try {
      const { text } = await compactStateBranch(empty.path, 3, LONG_TRACK_TESTS_PER_UNIT, KEY);
      await simpleGit(empty.path).raw(["update-ref", "-d", "refs/remotes/origin/consort/state"]);
      const file = join(work, "compact-3.json");
      writeFileSync(file, text);
      const elsewhere = checkout("no-state", stockflow());
      const run = await consort("status", "--state", file, "-C", elsewhere);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`does not hold`);
      expect(run.stderr).toContain("git fetch origin consort/state");
    } finally {
      await empty.cleanup();
    }
  }, 120_000);
});
