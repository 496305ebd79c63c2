import { describe, expect, it } from "vitest";
import { ConsortConfig, defaultConfig } from "../../src/config/consort-config.js";
import { authorOf, ownershipAt } from "../../src/roles/roles.js";

/** What each step gives whom (src/roles/roles.ts), exactly: a path too many is a role touching another's files. */

const config = defaultConfig();

describe("the author of each design artifact", () => {
  it.each([
    ["stories", "product-owner"],
    ["spec", "spec-author"],
    ["architecture", "architect"],
    ["db-design", "dba"],
    ["ux", "ux-designer"],
    ["test-list", "test-strategist"],
  ] as const)("%s is written by the %s", (step, role) => {
    expect(authorOf(step)).toBe(role);
  });
});

describe("ownership at the build steps", () => {
  it("gives the navigator the test globs at RED, never Consort's own files", () => {
    const tests = ConsortConfig.parse({ paths: { tests: ["spec/**"] } });
    expect(ownershipAt("red", tests, "T1")).toEqual({ role: "navigator", paths: ["spec/**"], except: [".consort/**"] });
  });
  it("gives the navigator only the review file of the unit in turn at review, and nothing without one", () => {
    expect(ownershipAt("review", config, "T3")).toEqual({
      role: "navigator",
      paths: [".consort/reviews/T3.json"],
      except: [],
    });
    expect(ownershipAt("review", config, null)).toEqual({ role: "navigator", paths: [], except: [] });
  });
  it.each(["green", "repair", "refactor"] as const)(
    "gives the driver code and migrations at %s, never a test file or Consort's own files",
    (stage) => {
      const paths = ConsortConfig.parse({ paths: { code: ["src/**"], migrations: ["db/**"], tests: ["spec/**"] } });
      expect(ownershipAt(stage, paths, "T1")).toEqual({
        role: "driver",
        paths: ["src/**", "db/**"],
        except: ["spec/**", ".consort/**"],
      });
    },
  );
});
