import { describe, expect, it } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { checkStates } from "../../src/gates/checks.js";
import type { PushedCommit } from "../../src/orchestrator/types.js";
import { maintenanceSim } from "../orchestrator/helpers/reach.js";
import { sha } from "../orchestrator/helpers/track.js";

/**
 * A maintenance branch is verified by the default branch's frozen suite and skips the design and
 * build lanes, so it is a tempting back door: a "dependency bump" that carries application code,
 * edits or skips a frozen test, rewrites the test list, or changes what `npm test` runs. Each is
 * refused by name, nothing is dispatched, and every check the refusal touches fails.
 */

const PACKAGE = { name: "shop", scripts: { test: "vitest run" }, dependencies: { pg: "8.16.0" } };
const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const BUMPED = text({ ...PACKAGE, dependencies: { pg: "8.16.3" } });

/** Dependabot's commit: the bump, plus whatever it smuggles. */
function smuggling(files: Record<string, string | null>, packageAfter = BUMPED): PushedCommit {
  const all = { "package.json": packageAfter, "package-lock.json": "{}", ...files };
  return {
    sha: sha(2),
    authorLogin: "dependabot[bot]",
    message: "Bump pg from 8.16.0 to 8.16.3\n",
    changes: Object.entries(all).map(([path, body]) => ({
      path,
      status: body === null ? ("removed" as const) : ("modified" as const),
    })),
    files: all,
    before: { "package.json": text(PACKAGE) },
  };
}

const short = sha(2).slice(0, 7);

function expectRefused(commit: PushedCommit, reason: string, config = ConsortConfig.parse({})) {
  const sim = maintenanceSim(config);
  const result = sim.pushCommits(commit);
  expect(result.rejection?.reasons).toEqual([`${short}: ${reason}`]);
  expect(sim.stage).toBe("maintenance");
  expect(result.effects.filter((e) => e.type === "dispatchCycle")).toEqual([]);
  const failing = checkStates(sim.snapshot).filter((c) => c.status === "failure");
  expect(failing.map((c) => c.name)).toEqual(["consort/design", "consort/test-list", "consort/discipline"]);
  expect(checkStates(sim.snapshot).some((c) => c.status === "success")).toBe(false);
}

describe("a maintenance branch smuggling", () => {
  it("application code beside the bump is refused", () => {
    expectRefused(
      smuggling({ "src/services/stock.ts": "export const backdoor = true;\n" }),
      "src/services/stock.ts is application code: a maintenance branch changes only dependency manifests and lockfiles (package.json, package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml, pyproject.toml, requirements*.txt, requirements/*.txt, constraints*.txt, poetry.lock, uv.lock, pdm.lock) and maintenance.paths (.github/dependabot.yml, .github/renovate.json, renovate.json); make this change on a feature branch, or widen maintenance.paths in .github/consort.yml on the default branch",
    );
  });

  it("a migration beside the bump is refused", () => {
    expectRefused(
      smuggling({ "migrations/0009_drop.up.sql": "DROP TABLE stock_records;\n" }),
      "migrations/0009_drop.up.sql is application code: a maintenance branch changes only dependency manifests and lockfiles (package.json, package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml, pyproject.toml, requirements*.txt, requirements/*.txt, constraints*.txt, poetry.lock, uv.lock, pdm.lock) and maintenance.paths (.github/dependabot.yml, .github/renovate.json, renovate.json); make this change on a feature branch, or widen maintenance.paths in .github/consort.yml on the default branch",
    );
  });

  it("a skipped frozen test is refused", () => {
    expectRefused(
      smuggling({ "test/stock.test.ts": 'test.skip("files stock", () => {});\n' }),
      "test/stock.test.ts: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)",
    );
  });

  it("a deleted frozen test is refused", () => {
    expectRefused(
      smuggling({ "test/stock.test.ts": null }),
      "test/stock.test.ts: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)",
    );
  });

  it("a rewritten test list is refused", () => {
    expectRefused(
      smuggling({ ".consort/test-list.json": "{}" }),
      ".consort/test-list.json: a maintenance branch never changes the design artifacts or the test list; make this change on a feature branch (a track)",
    );
  });

  it("a test script that passes anything is refused", () => {
    expectRefused(
      smuggling({}, text({ ...PACKAGE, scripts: { test: "exit 0" }, dependencies: { pg: "8.16.3" } })),
      "package.json: changes scripts; a maintenance branch changes only its dependency sections (dependencies, devDependencies, optionalDependencies, peerDependencies, overrides, resolutions, packageManager), since the rest decides what the frozen suite runs",
    );
  });

  it("a test file under maintenance.paths is refused all the same", () => {
    expectRefused(
      smuggling({ "test/stock.test.ts": "" }),
      "test/stock.test.ts: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)",
      ConsortConfig.parse({ maintenance: { paths: ["test/**", "renovate.json"] } }),
    );
  });

  it("a workflow change is refused", () => {
    expectRefused(
      smuggling({ ".github/workflows/consort-deploy.yml": "on: push\n" }),
      "touches protected path .github/workflows/consort-deploy.yml: workflows, .github/consort.yml and CODEOWNERS never change on a maintenance branch (change them on the default branch)",
    );
  });
});
