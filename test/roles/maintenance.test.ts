import { describe, expect, it } from "vitest";
import { ConsortConfig, defaultConfig } from "../../src/config/consort-config.js";
import { checkStates } from "../../src/gates/checks.js";
import { maintenanceCommitProblems } from "../../src/roles/maintenance.js";
import type { PushedCommit } from "../../src/orchestrator/types.js";
import { maintenanceSim } from "../orchestrator/helpers/reach.js";
import { sha } from "../orchestrator/helpers/track.js";

/**
 * The maintenance lane (src/roles/maintenance.ts, the machine's `maintenance` stage, the checks of
 * src/gates/checks.ts): a dependency bump is verified by the release job and promoted by a person.
 */

const PACKAGE_BEFORE = JSON.stringify({ name: "app", scripts: { test: "vitest run" }, dependencies: { zod: "4.0.0" } });
const PACKAGE_AFTER = JSON.stringify({ name: "app", scripts: { test: "vitest run" }, dependencies: { zod: "4.1.0" } });

function bump(files: Record<string, string | null>, n = 7): PushedCommit {
  return {
    sha: sha(n),
    authorLogin: "dependabot[bot]",
    message: "Bump zod from 4.0.0 to 4.1.0\n",
    changes: Object.keys(files).map((path) => ({ path, status: "modified" as const })),
    files,
    before: { "package.json": PACKAGE_BEFORE },
  };
}

const config = defaultConfig();
const short = sha(7).slice(0, 7);

describe("a maintenance commit", () => {
  it("may change package.json's dependencies and the lockfile", () => {
    expect(
      maintenanceCommitProblems(bump({ "package.json": PACKAGE_AFTER, "package-lock.json": "{}" }), config),
    ).toEqual([]);
  });

  it("may change a nested lockfile and the paths maintenance.paths names", () => {
    expect(maintenanceCommitProblems(bump({ "web/yarn.lock": "", ".github/dependabot.yml": "" }), config)).toEqual([]);
  });

  it("may not change package.json's scripts, which decide what the frozen suite runs", () => {
    const scripts = JSON.stringify({ ...JSON.parse(PACKAGE_AFTER), scripts: { test: "exit 0" } });
    expect(maintenanceCommitProblems(bump({ "package.json": scripts }), config)).toEqual([
      `${short}: package.json: changes scripts; a maintenance branch changes only its dependency sections (dependencies, devDependencies, optionalDependencies, peerDependencies, overrides, resolutions, packageManager), since the rest decides what the frozen suite runs`,
    ]);
  });

  it("fails closed when package.json's text before the commit is not known", () => {
    const commit = { ...bump({ "package.json": PACKAGE_AFTER }), before: {} };
    expect(maintenanceCommitProblems(commit, config)).toEqual([
      `${short}: the texts of package.json before and after ${short} were not provided or do not parse, so whether it changes only dependencies cannot be told (fail closed)`,
    ]);
  });

  it("may carry application code only where maintenance.paths widens it", () => {
    const widened = ConsortConfig.parse({ maintenance: { paths: ["src/generated/**"] } });
    expect(maintenanceCommitProblems(bump({ "src/generated/client.ts": "" }), widened)).toEqual([]);
    expect(maintenanceCommitProblems(bump({ "src/generated/client.ts": "" }), config)).toHaveLength(1);
  });

  it("may not change a test even where maintenance.paths names it", () => {
    const widened = ConsortConfig.parse({ maintenance: { paths: ["test/**"] } });
    expect(maintenanceCommitProblems(bump({ "test/stock.test.ts": "" }), widened)).toEqual([
      `${short}: test/stock.test.ts: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)`,
    ]);
  });
});

describe("the maintenance lane", () => {
  const maintenance = () => maintenanceSim(config);
  const bumped = { "package.json": PACKAGE_AFTER, "package-lock.json": "{}" };

  it("starts with no design lane, forking its database branch", () => {
    const sim = maintenance();
    expect(sim.stage).toBe("maintenance");
    expect(sim.created.effects).toContainEqual({ type: "forkDatabase", branch: "dependabot-zod", parent: "main" });
  });

  it("verifies a bump with the release job, then waits for a person at the promote gate; every check passes once approved", () => {
    const sim = maintenance();
    const pushed = sim.pushCommits(bump(bumped, 2));
    expect(sim.stage).toBe("deploying");
    expect(pushed.effects).toContainEqual(expect.objectContaining({ type: "dispatchCycle", step: "release" }));
    sim.report("valid");
    expect(sim.stage).toBe("promote-gate");
    expect(sim.context.gates.promote.authors).toContain("dependabot[bot]");
    const waiting = checkStates(sim.snapshot);
    expect(waiting.find((c) => c.name === "consort/promote")!.status).toBe("pending");
    sim.approve("promote");
    expect(sim.stage).toBe("merging");
    expect(checkStates(sim.snapshot).map((c) => [c.name, c.status])).toEqual([
      ["consort/design", "success"],
      ["consort/test-list", "success"],
      ["consort/build", "success"],
      ["consort/deploy", "success"],
      ["consort/promote", "success"],
      ["consort/discipline", "success"],
    ]);
  });

  it("refuses a bump that also changes a test, and the checks say so", () => {
    const sim = maintenance();
    const result = sim.pushCommits(bump({ ...bumped, "test/stock.test.ts": "it.skip()" }, 2));
    expect(sim.stage).toBe("maintenance");
    expect(result.rejection?.reasons).toEqual([
      `${sha(2).slice(0, 7)}: test/stock.test.ts: a maintenance branch adds and changes no tests (the default branch's frozen suite verifies it); restore the file, or make this change on a feature branch (a track)`,
    ]);
    const checks = checkStates(sim.snapshot);
    expect(checks.find((c) => c.name === "consort/discipline")!.status).toBe("failure");
    expect(checks.some((c) => c.status === "success")).toBe(false);
  });

  it("verifies the release again when the bump is pushed on at the promote gate", () => {
    const sim = maintenance();
    sim.pushCommits(bump(bumped, 2));
    sim.report("valid");
    sim.pushCommits(bump({ "package-lock.json": '{"v":2}' }, 3));
    expect(sim.stage).toBe("deploying");
    expect(checkStates(sim.snapshot).find((c) => c.name === "consort/build")!.status).toBe("pending");
  });

  it("has no design or test list to renegotiate", () => {
    const sim = maintenance();
    sim.pushCommits(bump(bumped, 2));
    const result = sim.send({
      type: "renegotiate",
      at: "2026-12-03T12:05:00Z",
      by: "lead",
      scope: "test-list",
      reason: "x",
    });
    expect(result.rejection?.reasons).toEqual([
      "a maintenance branch has no design or test list to renegotiate: close it, and make the change on a feature branch",
    ]);
    expect(sim.stage).toBe("deploying");
  });
});
