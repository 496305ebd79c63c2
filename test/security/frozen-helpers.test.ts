import { describe, expect, it } from "vitest";
import type { DispatchCycleEffect, PushedCommit } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";
import type { TrackSim } from "../orchestrator/helpers/track.js";

/**
 * A test's result is decided by more than its own file: the helpers it imports, its fixtures, setup
 * files, snapshots and conftest.py. After a verified RED, a navigator seeking a shortcut rewrites
 * those instead of the frozen test. Each attempt must be refused by name; only adding is allowed.
 */

const TEST_FILE = "test/stock.test.ts";
const HELPER = "test/helpers/db.ts";
const CONFTEST = "tests/conftest.py";
const HELPER_TEXT = "export const rows = () => query('select count(*) from stock_records');\n";
const CONFTEST_TEXT = "import pytest\n\n@pytest.fixture\ndef db():\n    return connect()\n";

/** T1's RED verified with a helper and a conftest.py pushed beside its test, then T1 completed: T2's RED is in turn. */
function afterFirstUnit(): TrackSim {
  const sim = reach("red");
  const unit = sim.context.units[0]!;
  sim.expectAccepted(
    sim.push({
      role: "navigator",
      files: {
        [TEST_FILE]: `it(${JSON.stringify(unit.tests[0]!.title)}, () => expect(rows()).toBe(1));\n`,
        [HELPER]: HELPER_TEXT,
        [CONFTEST]: CONFTEST_TEXT,
      },
    }),
  );
  sim.expectAccepted(sim.report("valid"));
  sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "export const step = 1;\n" } }));
  sim.expectAccepted(sim.report("valid"));
  sim.expectAccepted(
    sim.push({
      role: "navigator",
      files: { [`.consort/reviews/${unit.id}.json`]: JSON.stringify({ unit: unit.id, verdict: "accept", notes: [] }) },
    }),
  );
  expect(sim.stage).toBe("red");
  return sim;
}

const reasonsOf = (sim: TrackSim) => (sim.last.rejection?.reasons ?? []).map((r) => r.replace(/^c[0-9a-f]{6}: /, ""));

describe("files under the test globs that a verified RED froze besides its test", () => {
  const hook = "import pytest\n\ndef pytest_runtest_makereport(item, call):\n    call.excinfo = None\n";
  it.each<[string, Record<string, string | null>, string]>([
    [
      "a later RED that rewrites a frozen helper line is refused, naming the file and the line",
      { [HELPER]: "export const rows = () => 1;\n" },
      `${HELPER}: frozen line 1 (\`export const rows = () => query('select count(*) from sto...\`) was changed or removed; a RED step may only add lines to a frozen test file`,
    ],
    [
      "a later RED that makes conftest.py turn failures into passes is refused",
      { [CONFTEST]: hook },
      `${CONFTEST}: frozen line 3 (\`@pytest.fixture\`) was changed or removed; a RED step may only add lines to a frozen test file`,
    ],
    [
      "a later RED that deletes a frozen helper is refused",
      { [HELPER]: null },
      `${HELPER}: a frozen test file was deleted; restore it (a verified RED test may never be removed)`,
    ],
  ])("%s", (_title, files, reason) => {
    const sim = afterFirstUnit();
    sim.push({ role: "navigator", files });
    expect(reasonsOf(sim)).toEqual([reason]);
  });

  it("a later RED may add to a frozen helper and write new helpers", () => {
    const sim = afterFirstUnit();
    const t2 = sim.context.units[1]!.tests[0]!;
    sim.expectAccepted(
      sim.push({
        role: "navigator",
        files: {
          [HELPER]: `${HELPER_TEXT}export const codes = () => query('select code from stock_records');\n`,
          "test/helpers/records.ts": "export const record = { sku: 'A' };\n",
          [TEST_FILE]: `${sim.context.testFiles[TEST_FILE]}it(${JSON.stringify(t2.title)}, () => expect(codes()).toEqual([]));\n`,
        },
      }),
    );
  });

  it("the GREEN after a verified RED carries the helpers to the runner as frozen files, to be re-checked there", () => {
    const sim = afterFirstUnit();
    sim.expectAccepted(
      sim.push({
        role: "navigator",
        files: {
          [TEST_FILE]: `${sim.context.testFiles[TEST_FILE]}it(${JSON.stringify(sim.context.units[1]!.tests[0]!.title)}, () => expect(1).toBe(2));\n`,
        },
      }),
    );
    sim.expectAccepted(sim.report("valid"));
    sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": "export const step = 2;\n" } }));
    const green = sim.effects("dispatchCycle")[0] as DispatchCycleEffect;
    expect(green.step).toBe("green");
    expect(Object.keys(green.frozen)).toEqual(expect.arrayContaining([TEST_FILE, HELPER, CONFTEST]));
  });
});

describe("files under the test globs that existed before the track (the trunk's)", () => {
  it("may change at the first RED, before any RED is verified", () => {
    const sim = reach("red");
    const t1 = sim.context.units[0]!.tests[0]!;
    const pushed = sim.commit({
      role: "navigator",
      files: {
        [TEST_FILE]: `it(${JSON.stringify(t1.title)}, () => expect(1).toBe(2));\n`,
        "test/setup.ts": "beforeAll(() => connect());\n",
      },
    });
    pushed.changes = pushed.changes.map((c) => (c.path === "test/setup.ts" ? { ...c, status: "modified" } : c));
    sim.expectAccepted(sim.pushCommits(pushed));
  });

  const frozenAtBase = (what: string) =>
    `${what}: it is under the test globs and existed before the track (a helper, fixture, setup file, snapshot or conftest.py), ` +
    "so T1's verified RED froze it as it is at the base; restore it, and put new helpers in new files";
  it.each<[string, Record<string, string>, PushedCommit["changes"], string]>([
    [
      "are frozen as they are at the base once a RED is verified: a later RED that edits the trunk's setup file is refused",
      { "test/setup.ts": "beforeAll(() => {});\n" },
      [{ path: "test/setup.ts", status: "modified" }],
      frozenAtBase("test/setup.ts changed"),
    ],
    [
      "a later RED that renames a trunk snapshot away is refused for the old path",
      { "test/__snapshots__/moved.snap": "exports[`x`] = `1`;\n" },
      [
        {
          path: "test/__snapshots__/moved.snap",
          status: "renamed",
          previousPath: "test/__snapshots__/stock.test.ts.snap",
        },
      ],
      frozenAtBase("test/__snapshots__/stock.test.ts.snap was removed"),
    ],
  ])("%s", (_title, files, changes, reason) => {
    const sim = afterFirstUnit();
    const pushed = sim.commit({ role: "navigator", files });
    pushed.changes = changes;
    sim.pushCommits(pushed);
    expect(reasonsOf(sim)).toEqual([reason]);
  });
});
