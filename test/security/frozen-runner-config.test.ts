import { describe, expect, it } from "vitest";
import type { PushedCommit } from "../../src/orchestrator/types.js";
import { reach } from "../orchestrator/helpers/reach.js";
import type { TrackSim } from "../orchestrator/helpers/track.js";

/**
 * Which test passes is decided by the runner's configuration as much as by the tests. A driver at
 * GREEN seeking a shortcut changes what `npm test` runs, points the runner's own package at a fake,
 * or rewrites its configuration block: each is refused by name and withdraws the test-list gate.
 * Other dependencies stay the driver's to change.
 */

const PACKAGE = {
  name: "shop",
  scripts: { test: "npm run unit", unit: "vitest run --reporter=junit --outputFile=junit.xml", build: "tsc" },
  dependencies: { pg: "^8.0.0" },
  devDependencies: { vitest: "~4.1", typescript: "~5.9" },
  jest: { testEnvironment: "node" },
};
const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function atGreen(paths?: { code: string[] }): TrackSim {
  const sim = reach("green", { commands: { test: "npm test" }, ...(paths ? { paths } : {}) });
  expect(sim.context.gates["test-list"].status).toBe("approved");
  return sim;
}

/** The driver's GREEN commit changing `path` from `before` to `after`, with both texts as the app reads them. */
function pushChange(sim: TrackSim, path: string, before: string | null, after: string | null, withBefore = true) {
  const commit: PushedCommit = sim.commit({
    role: "driver",
    files: { [path]: after, "src/services/stock.ts": "export const ok = 1;\n" },
  });
  commit.changes = commit.changes.map((c) =>
    c.path === path ? { ...c, status: after === null ? "removed" : "modified" } : c,
  );
  if (withBefore) commit.before = { [path]: before };
  return sim.send({
    type: "push",
    at: "2026-12-01T10:00:00Z",
    before: sim.context.head,
    after: commit.sha,
    forced: false,
    commits: [commit],
  });
}

const reasons = (sim: TrackSim) => (sim.last.rejection?.reasons ?? []).map((r) => r.replace(/^c[0-9a-f]{6}: /, ""));
const refusal = (keys: string, path = "package.json") =>
  `${path}: changes the test runner's configuration (${keys}), frozen at the test-list gate because it decides which tests pass: ` +
  "restore it (other dependencies may change), or ask a person to renegotiate the test list";

describe("the runner's configuration, frozen at the test-list gate", () => {
  it("a GREEN that changes a script the test command calls is refused, naming the key, and the test-list gate is withdrawn", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, scripts: { ...PACKAGE.scripts, unit: "exit 0" } }),
    );
    expect(reasons(sim)).toEqual([refusal("scripts.unit")]);
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
  });

  it("adding a pretest script to the called test script is refused", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, scripts: { ...PACKAGE.scripts, pretest: "node fake.js" } }),
    );
    expect(reasons(sim)).toEqual([refusal("scripts.pretest")]);
  });

  it("pointing the runner's own dependency at a local folder is refused", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, devDependencies: { ...PACKAGE.devDependencies, vitest: "file:../always-green" } }),
    );
    expect(reasons(sim)).toEqual([refusal("devDependencies.vitest")]);
  });

  it("an override of the runner's package is refused", () => {
    const sim = atGreen();
    pushChange(sim, "package.json", text(PACKAGE), text({ ...PACKAGE, overrides: { vitest: "npm:fake-vitest@1" } }));
    expect(reasons(sim)).toEqual([refusal("overrides.vitest")]);
  });

  it("a change to the jest block is refused", () => {
    const sim = atGreen();
    pushChange(
      sim,
      "package.json",
      text(PACKAGE),
      text({ ...PACKAGE, jest: { testEnvironment: "node", testMatch: [] } }),
    );
    expect(reasons(sim)).toEqual([refusal("jest")]);
  });

  it("a package.json that is not JSON after the change is refused: which keys changed cannot be told", () => {
    const sim = atGreen();
    pushChange(sim, "package.json", text(PACKAGE), "{ not json");
    expect(reasons(sim)).toEqual([refusal("its text is not a JSON object, so which keys changed cannot be told")]);
  });

  it("a commit whose runner file texts were not provided is refused (fail closed)", () => {
    const sim = atGreen();
    pushChange(sim, "package.json", text(PACKAGE), text(PACKAGE), false);
    expect(reasons(sim)[0]).toMatch(
      /^the text of runner configuration file package\.json before and after c[0-9a-f]{6} was not provided, so the frozen runner configuration cannot be checked \(fail closed\)$/,
    );
  });

  it("the driver may still add and change other dependencies and unrelated scripts", () => {
    const sim = atGreen();
    const after = {
      ...PACKAGE,
      scripts: { ...PACKAGE.scripts, build: "tsc -p ." },
      dependencies: { pg: "^8.1.0", zod: "^4.0.0" },
    };
    sim.expectAccepted(pushChange(sim, "package.json", text(PACKAGE), text(after)));
  });

  it("pytest's table in pyproject.toml is frozen, its other tables are not (where code globs let the driver edit it)", () => {
    const code = ["src/**", "pyproject.toml"];
    const pyproject =
      '[project]\nname = "shop"\ndependencies = ["psycopg"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    const sim = atGreen({ code });
    pushChange(
      sim,
      "pyproject.toml",
      pyproject,
      pyproject.replace('addopts = "-q"', 'addopts = "-q -p no:terminal --deselect tests"'),
    );
    expect(reasons(sim)).toEqual([refusal("[tool.pytest]", "pyproject.toml")]);
    const other = atGreen({ code });
    other.expectAccepted(
      pushChange(other, "pyproject.toml", pyproject, pyproject.replace('["psycopg"]', '["psycopg", "httpx"]')),
    );
  });

  it("a runner config file the code globs cover is frozen whole", () => {
    const sim = atGreen({ code: ["src/**", "vitest.config.ts"] });
    pushChange(
      sim,
      "vitest.config.ts",
      "export default {};\n",
      "export default { test: { passWithNoTests: true } };\n",
    );
    expect(reasons(sim)).toEqual([refusal("the whole file", "vitest.config.ts")]);
  });
});
