import { describe, expect, it } from "vitest";
import { branchKindOf } from "../../src/config/branch-kind.js";
import { ConsortConfig, defaultConfig } from "../../src/config/consort-config.js";

describe("what a branch is to Consort", () => {
  const config = defaultConfig();

  it("the default branch, the state branch and a merge queue's branches are never tracked", () => {
    expect(branchKindOf("main", "main", config)).toEqual({ kind: "untracked", why: "default branch" });
    expect(branchKindOf("consort/state", "main", config)).toEqual({ kind: "untracked", why: "state branch" });
    expect(branchKindOf("gh-readonly-queue/main/pr-7-abc", "main", config)).toEqual({
      kind: "untracked",
      why: "merge queue",
    });
  });

  it("a branch under experiments.prefix is an experiment, by default experiment/", () => {
    expect(branchKindOf("experiment/try-index", "main", config)).toEqual({ kind: "experiment" });
    expect(branchKindOf("experiments/try-index", "main", config)).toEqual({ kind: "track" });
    const spikes = ConsortConfig.parse({ experiments: { prefix: "spike/" } });
    expect(branchKindOf("spike/plan", "main", spikes)).toEqual({ kind: "experiment" });
    expect(branchKindOf("experiment/plan", "main", spikes)).toEqual({ kind: "track" });
  });

  it("Dependabot's and Renovate's branches are maintenance by default, and the globs are configurable", () => {
    expect(branchKindOf("dependabot/npm_and_yarn/pg-8.13.1", "main", config)).toEqual({ kind: "maintenance" });
    expect(branchKindOf("renovate/pg-8.x", "main", config)).toEqual({ kind: "maintenance" });
    expect(branchKindOf("feature/dependabot", "main", config)).toEqual({ kind: "track" });
    const bumps = ConsortConfig.parse({ maintenance: { branches: ["deps/**"] } });
    expect(branchKindOf("deps/bump-pg", "main", bumps)).toEqual({ kind: "maintenance" });
    expect(branchKindOf("dependabot/npm_and_yarn/pg-8.13.1", "main", bumps)).toEqual({ kind: "track" });
  });

  it("every other branch is a feature's track", () => {
    expect(branchKindOf("feature/stock-adjustments", "trunk", config)).toEqual({ kind: "track" });
    expect(branchKindOf("main", "trunk", config)).toEqual({ kind: "track" });
  });

  it("an experiment prefix that is not a folder-like prefix is refused when the configuration is read", () => {
    expect(ConsortConfig.safeParse({ experiments: { prefix: "exp" } }).success).toBe(false);
    expect(ConsortConfig.safeParse({ experiments: { prefix: "exp/" } }).success).toBe(true);
  });
});
