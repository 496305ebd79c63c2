import { describe, expect, it } from "vitest";
import { ConsortConfig, defaultConfig } from "../../src/config/consort-config.js";
import type { FrozenState } from "../../src/gates/freeze.js";
import { classifyCommit } from "../../src/roles/classify.js";
import { ownershipAt } from "../../src/roles/roles.js";
import { readRoleTrailer } from "../../src/roles/trailer.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import type { PushedCommit, Stage } from "../../src/orchestrator/types.js";

const config = defaultConfig();
const noneFrozen: FrozenState = { gated: {}, tests: {} };
const frozenTest = 'it("persists one row", () => {\n  expect(rows()).toBe(1);\n});\n';

function commit(
  message: string,
  files: Record<string, string | null>,
  authorLogin: string | null = "driver-bot[bot]",
): PushedCommit {
  return {
    sha: "abc1234def5678900000000000000000000000000",
    authorLogin,
    message,
    changes: Object.entries(files).map(([path, text]) => ({ path, status: text === null ? "removed" : "modified" })),
    files,
  };
}
const as = (role: string) => `Make it so\n\nConsort-Role: ${role}\n`;
const classify = (
  c: PushedCommit,
  stage: Stage,
  options: { frozen?: FrozenState; config?: ConsortConfig; unit?: string; pusher?: string | null } = {},
) =>
  classifyCommit({
    commit: c,
    stage,
    unit: options.unit ?? "T1",
    config: options.config ?? config,
    frozen: options.frozen ?? noneFrozen,
    // By default the author pushed their own commit; `null` is a push nobody named.
    pusher: options.pusher === null ? undefined : (options.pusher ?? c.authorLogin ?? undefined),
  });

describe("the Consort-Role trailer", () => {
  it("is read from the last paragraph, case-insensitively", () => {
    expect(readRoleTrailer("Add T3\n\nBody text.\n\nconsort-role: navigator\nSigned-off-by: A <a@x>")).toEqual({
      ok: true,
      role: "navigator",
    });
  });
  it("is not read from the subject line", () => {
    expect(readRoleTrailer("Consort-Role: driver")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^no Consort-Role trailer/),
    });
  });
  it("names an unknown role", () => {
    expect(readRoleTrailer("x\n\nConsort-Role: reviewer")).toMatchObject({
      ok: false,
      reason: expect.stringContaining('unknown role "reviewer"'),
    });
  });
  it("refuses two different roles on one commit", () => {
    expect(readRoleTrailer("x\n\nConsort-Role: driver\nConsort-Role: navigator")).toMatchObject({
      ok: false,
      reason: expect.stringContaining("claims 2 roles"),
    });
  });
});

describe("commit classification", () => {
  it("accepts the driver's GREEN commit touching code and a migration", () => {
    const result = classify(
      commit(as("driver"), {
        "src/services/stock.ts": "x",
        "migrations/0001_create_stock_records.sql": "create table",
      }),
      "green",
    );
    expect(result).toEqual({ accepted: true, role: "driver", reasons: [], frozenTouched: [] });
  });

  it("rejects a commit without a trailer, naming the fix", () => {
    const result = classify(commit("quick fix", { "src/a.ts": "x" }), "green");
    expect(result.accepted).toBe(false);
    expect(result.reasons).toEqual([
      expect.stringMatching(/^abc1234: no Consort-Role trailer: end the commit message with/),
    ]);
  });

  it("rejects a role whose turn it is not", () => {
    const result = classify(commit(as("driver"), { "test/stock.test.ts": "x" }), "red");
    expect(result.reasons[0]).toBe(
      "abc1234: not this role's turn: the track is at red, which is the Navigator's (navigator); the commit claims driver",
    );
  });

  it("rejects any commit while a gate waits for a person", () => {
    const result = classify(commit(as("architect"), { ".consort/architecture.json": "{}" }), "design-gate");
    expect(result.reasons[0]).toContain(
      "no role's turn: the track is at design-gate, waiting for a person's approving review",
    );
  });

  it("rejects a path the role does not own at this step", () => {
    const result = classify(
      commit(as("navigator"), { "test/stock.test.ts": "x", "src/services/stock.ts": "y" }),
      "red",
    );
    expect(result.reasons).toEqual([
      expect.stringContaining("path src/services/stock.ts is not navigator's to change at red"),
    ]);
  });

  it("never lets the driver touch a test file, even one the code globs also match", () => {
    const result = classify(commit(as("driver"), { "src/services/stock.test.ts": "x" }), "green");
    expect(result.reasons[0]).toMatch(
      /path src\/services\/stock\.test\.ts is not driver's to change at green .*never: test\/\*\*/,
    );
  });

  it("lets the navigator write only the review file of the unit in turn", () => {
    expect(
      classify(commit(as("navigator"), { ".consort/reviews/T2.json": "{}" }), "review", { unit: "T2" }).accepted,
    ).toBe(true);
    expect(
      classify(commit(as("navigator"), { ".consort/reviews/T1.json": "{}" }), "review", { unit: "T2" }).accepted,
    ).toBe(false);
  });

  it.each([".github/workflows/consort-cycle.yml", ".github/consort.yml", "CODEOWNERS", ".github/CODEOWNERS"])(
    "rejects a change to protected %s whatever the globs say",
    (path) => {
      const open = ConsortConfig.parse({ paths: { code: ["**"] } });
      const result = classify(commit(as("driver"), { [path]: "x" }), "green", { config: open });
      expect(result.reasons).toEqual([expect.stringContaining(`touches protected path ${path}`)]);
    },
  );

  it("rejects a frozen design file and says which gate it withdraws", () => {
    const frozen: FrozenState = {
      gated: { ".consort/spec.json": { hash: hashFrozenText("{}"), gate: "design" } },
      tests: {},
    };
    const result = classify(
      commit(as("test-strategist"), { ".consort/spec.json": '{"changed":true}', ".consort/test-list.json": "{}" }),
      "test-list",
      { frozen },
    );
    expect(result.frozenTouched).toEqual([{ path: ".consort/spec.json", gate: "design" }]);
    expect(result.reasons).toEqual([
      expect.stringContaining("touches frozen file .consort/spec.json, approved at the design gate"),
    ]);
  });

  it("lets a later RED append to a frozen test file but not weaken it", () => {
    const frozen: FrozenState = { gated: {}, tests: { "test/stock.test.ts": frozenTest } };
    const appended = `${frozenTest}it("reads back", () => {\n  expect(read()).toEqual(filed);\n});\n`;
    expect(classify(commit(as("navigator"), { "test/stock.test.ts": appended }), "red", { frozen }).accepted).toBe(
      true,
    );
    const weakened = frozenTest.replace("toBe(1)", "toBeGreaterThan(0)");
    expect(
      classify(commit(as("navigator"), { "test/stock.test.ts": weakened }), "red", { frozen }).reasons[0],
    ).toContain("frozen line 2");
  });

  it("rejects a skip marker on a frozen test at RED", () => {
    const frozen: FrozenState = { gated: {}, tests: { "test/stock.test.ts": frozenTest } };
    const skipped = frozenTest.replace('it("persists', 'it.skip("persists');
    expect(
      classify(commit(as("navigator"), { "test/stock.test.ts": skipped }), "red", { frozen }).reasons.join("\n"),
    ).toContain("`.skip`");
  });

  it("rejects deleting a frozen test file", () => {
    const frozen: FrozenState = { gated: {}, tests: { "test/stock.test.ts": frozenTest } };
    expect(classify(commit(as("navigator"), { "test/stock.test.ts": null }), "red", { frozen }).reasons[0]).toContain(
      "a frozen test file was deleted",
    );
  });

  it("rejects renaming a frozen test file away (the old path counts as deleted)", () => {
    const frozen: FrozenState = { gated: {}, tests: { "test/stock.test.ts": frozenTest } };
    const renamed: PushedCommit = {
      ...commit(as("navigator"), { "test/stock2.test.ts": frozenTest }),
      changes: [{ path: "test/stock2.test.ts", status: "renamed", previousPath: "test/stock.test.ts" }],
    };
    expect(classify(renamed, "red", { frozen }).reasons.join("\n")).toContain(
      "test/stock.test.ts: a frozen test file was deleted",
    );
  });

  it("fails closed when the text of a changed frozen test file is missing", () => {
    const frozen: FrozenState = { gated: {}, tests: { "test/stock.test.ts": frozenTest } };
    const c = {
      ...commit(as("navigator"), {}),
      changes: [{ path: "test/stock.test.ts", status: "modified" as const }],
    };
    expect(classify(c, "red", { frozen }).reasons[0]).toContain("was not provided");
  });

  describe("where roles are bound to GitHub identities", () => {
    const bound = ConsortConfig.parse({ roles: { driver: ["driver-bot[bot]"], navigator: ["nav-bot[bot]"] } });
    it("accepts the bound author", () => {
      expect(
        classify(commit(as("driver"), { "src/a.ts": "x" }, "driver-bot[bot]"), "green", { config: bound }).accepted,
      ).toBe(true);
    });
    it("rejects the navigator's agent claiming to be the driver", () => {
      const result = classify(commit(as("driver"), { "src/a.ts": "x" }, "nav-bot[bot]"), "green", { config: bound });
      expect(result.reasons).toEqual([
        "abc1234: author nav-bot[bot] is not bound to role driver (roles.driver in .github/consort.yml: driver-bot[bot])",
        "abc1234: abc1234 was pushed by nav-bot[bot], who is not bound to role driver (roles.driver in .github/consort.yml: driver-bot[bot]); a bound identity must push its own commits",
      ]);
    });
    it("accepts the bound author whatever the case of the login in the configuration (GitHub logins ignore case)", () => {
      const typed = ConsortConfig.parse({ roles: { driver: ["Driver-Bot[bot]"] } });
      expect(
        classify(commit(as("driver"), { "src/a.ts": "x" }, "driver-bot[bot]"), "green", { config: typed }).reasons,
      ).toEqual([]);
    });
    it("rejects a commit whose bound author was set with `git commit --author` but which an unbound identity pushed", () => {
      const forged = commit(as("driver"), { "src/a.ts": "x" }, "driver-bot[bot]");
      expect(classify(forged, "green", { config: bound, pusher: "nav-bot[bot]" }).reasons).toEqual([
        "abc1234: abc1234 was pushed by nav-bot[bot], who is not bound to role driver (roles.driver in .github/consort.yml: driver-bot[bot]); a bound identity must push its own commits",
      ]);
    });
    it("rejects a bound role's commit when who pushed it is not known", () => {
      const found = commit(as("driver"), { "src/a.ts": "x" }, "driver-bot[bot]");
      expect(classify(found, "green", { config: bound, pusher: null }).reasons).toEqual([
        "abc1234: role driver is bound to driver-bot[bot], and who pushed abc1234 is not known (found after the push, not in its webhook): push it again as a bound identity",
      ]);
    });
    it("accepts the bound pusher whatever the case of its login", () => {
      const c = commit(as("driver"), { "src/a.ts": "x" }, "driver-bot[bot]");
      expect(classify(c, "green", { config: bound, pusher: "Driver-Bot[bot]" }).reasons).toEqual([]);
    });
    it("rejects an author with no linked account", () => {
      expect(
        classify(commit(as("driver"), { "src/a.ts": "x" }, null), "green", { config: bound }).reasons[0],
      ).toContain("has no GitHub account linked");
    });
  });

  it("lists every reason at once", () => {
    const result = classify(commit("wip", { ".github/workflows/ci.yml": "x", "README.md": "y" }, null), "red");
    expect(result.reasons).toHaveLength(3);
  });
});

describe("ownership per step", () => {
  it("gives each design step to its role and its file only", () => {
    expect(ownershipAt("db-design", config, null)).toEqual({
      role: "dba",
      paths: [".consort/db-design.json"],
      except: [],
    });
    expect(ownershipAt("stories", config, null).role).toBe("product-owner");
    expect(ownershipAt("spec", config, null).role).toBe("spec-author");
    expect(ownershipAt("ux", config, null).role).toBe("ux-designer");
    expect(ownershipAt("test-list", config, null).role).toBe("test-strategist");
  });
  it("gives nobody anything while a cycle runs", () => {
    expect(ownershipAt("green-verify", config, "T1")).toEqual({ role: null, paths: [], except: [] });
  });
});

/**
 * The rules of classifyCommit one at a time, each outcome exact: which role a commit is, which files
 * it may touch, what is frozen, and where the rule cannot tell (fail closed).
 */
describe("commit classification, rule by rule", () => {
  const sha = "abc1234def5678900000000000000000000000000";
  const DRIVER_PATHS =
    "allowed now: src/**, lib/**, app/**, package.json, package-lock.json, migrations/**, db/migrations/**; " +
    "never: test/**, tests/**, **/*.test.*, **/*.spec.*, **/*_test.*, **/test_*.py, .consort/**";
  const pushed = (
    role: string,
    changes: PushedCommit["changes"],
    files: PushedCommit["files"],
    before?: PushedCommit["before"],
  ): PushedCommit => ({
    sha,
    authorLogin: "driver-bot[bot]",
    message: as(role),
    changes,
    files,
    ...(before ? { before } : {}),
  });
  const runnerFrozen: FrozenState = { gated: {}, tests: {}, runnerConfig: true };
  const pkg = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

  describe("whose turn it is", () => {
    it.each([
      ["green-verify", "a verification cycle to report"],
      ["deploying", "a verification cycle to report"],
      ["test-list-gate", "a person's approving review"],
      ["blocked", "a person to retry, renegotiate or abandon"],
      ["merging", "the pull request to be merged"],
      ["done", "nothing: the track has ended"],
      ["abandoned", "nothing: the track has ended"],
    ] as const)("at %s nobody commits: the track waits for %s", (stage, waiting) => {
      expect(classify(commit(as("driver"), { "src/a.ts": "x" }), stage)).toEqual({
        accepted: false,
        role: "driver",
        reasons: [`abc1234: no role's turn: the track is at ${stage}, waiting for ${waiting}`],
        frozenTouched: [],
      });
    });

    it("names the role that claimed the step, not the one whose step it is, on a path it may not touch", () => {
      expect(classify(commit(as("driver"), { "src/a.ts": "x" }), "red").reasons).toEqual([
        "abc1234: not this role's turn: the track is at red, which is the Navigator's (navigator); the commit claims driver",
        "abc1234: path src/a.ts is not driver's to change at red (allowed now: test/**, tests/**, **/*.test.*, **/*.spec.*, **/*_test.*, **/test_*.py; never: .consort/**)",
      ]);
    });

    it.each([
      ["stories", "product-owner", "Product Owner"],
      ["spec", "spec-author", "Spec Author"],
      ["architecture", "architect", "Architect Reviewer"],
      ["db-design", "dba", "DBA"],
      ["ux", "ux-designer", "UX Designer"],
      ["test-list", "test-strategist", "Test Strategist"],
      ["green", "driver", "Driver"],
    ] as const)("at %s it is the %s's turn, by its title", (stage, role, title) => {
      expect(classify(commit(as("navigator"), {}), stage).reasons).toEqual([
        `abc1234: not this role's turn: the track is at ${stage}, which is the ${title}'s (${role}); the commit claims navigator`,
      ]);
    });

    it("says that nothing may change when the review has no unit in turn", () => {
      const c = commit(as("navigator"), { ".consort/reviews/T1.json": "{}" });
      expect(
        classifyCommit({ commit: c, stage: "review", unit: null, config, frozen: noneFrozen, pusher: c.authorLogin! })
          .reasons,
      ).toEqual([
        "abc1234: path .consort/reviews/T1.json is not navigator's to change at review (allowed now: nothing)",
      ]);
    });

    it("names a design step's one file and nothing it never may touch", () => {
      expect(classify(commit(as("dba"), { ".consort/spec.json": "{}" }), "db-design").reasons).toEqual([
        "abc1234: path .consort/spec.json is not dba's to change at db-design (allowed now: .consort/db-design.json)",
      ]);
    });

    it("never lets the navigator write Consort's own files at RED, even where the test globs match them", () => {
      const wide = ConsortConfig.parse({ paths: { tests: ["**/*.json"] } });
      expect(
        classify(commit(as("navigator"), { ".consort/test-list.json": "{}" }), "red", { config: wide }).reasons,
      ).toEqual([
        "abc1234: path .consort/test-list.json is not navigator's to change at red (allowed now: **/*.json; never: .consort/**)",
      ]);
    });
  });

  describe("who may commit as a bound role", () => {
    const two = ConsortConfig.parse({ roles: { driver: ["driver-bot[bot]", "driver-two[bot]"] } });
    it("accepts any of the role's bound identities, as author and as pusher", () => {
      const c = commit(as("driver"), { "src/a.ts": "x" }, "driver-two[bot]");
      expect(classify(c, "green", { config: two, pusher: "driver-bot[bot]" }).reasons).toEqual([]);
    });
    it("names every bound identity when refusing", () => {
      const c = commit(as("driver"), { "src/a.ts": "x" }, null);
      expect(classify(c, "green", { config: two, pusher: "nav-bot[bot]" }).reasons).toEqual([
        "abc1234: role driver is bound to driver-bot[bot], driver-two[bot], and the author of abc1234 has no GitHub account linked",
        "abc1234: abc1234 was pushed by nav-bot[bot], who is not bound to role driver (roles.driver in .github/consort.yml: driver-bot[bot], driver-two[bot]); a bound identity must push its own commits",
      ]);
      expect(
        classify(commit(as("driver"), { "src/a.ts": "x" }, "nav-bot[bot]"), "green", { config: two, pusher: null })
          .reasons,
      ).toEqual([
        "abc1234: author nav-bot[bot] is not bound to role driver (roles.driver in .github/consort.yml: driver-bot[bot], driver-two[bot])",
        "abc1234: role driver is bound to driver-bot[bot], driver-two[bot], and who pushed abc1234 is not known (found after the push, not in its webhook): push it again as a bound identity",
      ]);
    });
  });

  describe("paths a commit touches", () => {
    it("counts a rename onto its own path once, as a change of a file that existed", () => {
      const frozen: FrozenState = { gated: {}, tests: {}, baseTests: { by: "T1", known: [] } };
      const c = pushed(
        "navigator",
        [{ path: "test/helpers/db.ts", status: "renamed", previousPath: "test/helpers/db.ts" }],
        { "test/helpers/db.ts": "export const db = 2;" },
      );
      expect(classify(c, "red", { frozen }).reasons).toEqual([
        "abc1234: test/helpers/db.ts changed: it is under the test globs and existed before the track (a helper, fixture, setup file, snapshot or conftest.py), so T1's verified RED froze it as it is at the base; restore it, and put new helpers in new files",
      ]);
    });
    it("says a base test file was removed, and lets a file the track pushed change", () => {
      const frozen: FrozenState = { gated: {}, tests: {}, baseTests: { by: "T1", known: ["test/helpers/mine.ts"] } };
      const c = pushed(
        "navigator",
        [
          { path: "test/helpers/db.ts", status: "removed" },
          { path: "test/helpers/mine.ts", status: "modified" },
        ],
        { "test/helpers/db.ts": null, "test/helpers/mine.ts": "export const mine = 2;" },
      );
      expect(classify(c, "red", { frozen }).reasons).toEqual([
        "abc1234: test/helpers/db.ts was removed: it is under the test globs and existed before the track (a helper, fixture, setup file, snapshot or conftest.py), so T1's verified RED froze it as it is at the base; restore it, and put new helpers in new files",
      ]);
    });
  });

  describe("gate-frozen files", () => {
    const frozen: FrozenState = {
      gated: { ".consort/test-list.json": { hash: hashFrozenText("{}"), gate: "test-list" } },
      tests: {},
    };
    const refused = {
      accepted: false,
      role: "test-strategist",
      reasons: [
        "abc1234: touches frozen file .consort/test-list.json, approved at the test-list gate: reset the branch, or ask a person to renegotiate",
      ],
      frozenTouched: [{ path: ".consort/test-list.json", gate: "test-list" }],
    };
    it("lets a commit carry a frozen file whose text is the frozen one (a mode change)", () => {
      const c = pushed("test-strategist", [{ path: ".consort/test-list.json", status: "modified" }], {
        ".consort/test-list.json": "{}",
      });
      expect(classify(c, "test-list", { frozen })).toEqual({
        accepted: true,
        role: "test-strategist",
        reasons: [],
        frozenTouched: [],
      });
    });
    it.each([
      ["removed", { ".consort/test-list.json": null }, "removed"],
      ["emptied to no text", { ".consort/test-list.json": null }, "modified"],
      ["changed, its text not provided", {}, "modified"],
    ] as const)("refuses a frozen file %s", (_, files, status) => {
      const c = pushed("test-strategist", [{ path: ".consort/test-list.json", status }], files);
      expect(classify(c, "test-list", { frozen })).toEqual(refused);
    });
  });

  describe("frozen test files", () => {
    const frozen: FrozenState = { gated: {}, tests: { "test/stock.test.ts": frozenTest } };
    const appended = `${frozenTest}it("reads back", () => {\n  expect(read()).toEqual(filed);\n});\n`;
    const changedOutsideRed =
      "abc1234: test/stock.test.ts: a frozen test file changed; outside a RED step it must stay exactly as verified (restore it)";

    it("only the navigator's RED may add to a frozen test file: the driver's commit at RED may not", () => {
      expect(classify(commit(as("driver"), { "test/stock.test.ts": appended }), "red", { frozen }).reasons).toEqual([
        "abc1234: not this role's turn: the track is at red, which is the Navigator's (navigator); the commit claims driver",
        changedOutsideRed,
      ]);
    });
    it("the navigator may not add to a frozen test file at review", () => {
      expect(
        classify(commit(as("navigator"), { "test/stock.test.ts": appended }), "review", { frozen }).reasons,
      ).toEqual([changedOutsideRed]);
    });
    it("the driver may not add to a frozen test file at GREEN", () => {
      expect(classify(commit(as("driver"), { "test/stock.test.ts": appended }), "green", { frozen }).reasons).toEqual([
        changedOutsideRed,
      ]);
    });
    it("a frozen test file left as verified is still not the driver's to touch (a mode change)", () => {
      expect(classify(commit(as("driver"), { "test/stock.test.ts": frozenTest }), "green", { frozen }).reasons).toEqual(
        [`abc1234: path test/stock.test.ts is not driver's to change at green (${DRIVER_PATHS})`],
      );
    });
    it("a frozen test file with no text after the commit counts as deleted", () => {
      const c = pushed("navigator", [{ path: "test/stock.test.ts", status: "modified" }], {
        "test/stock.test.ts": null,
      });
      expect(classify(c, "red", { frozen }).reasons).toEqual([
        "abc1234: test/stock.test.ts: a frozen test file was deleted; restore it (a verified RED test may never be removed)",
      ]);
    });
  });

  describe("test code in production code", () => {
    const reason = (path: string) =>
      `abc1234: ${path} imports the test framework "vitest" into production code: code under paths.code must not reach into the test run (it could make a test pass from inside); keep test helpers under paths.tests`;
    it.each(["green", "repair", "refactor"] as const)("is refused in the driver's commit at %s", (stage) => {
      expect(classify(commit(as("driver"), { "src/a.ts": 'import { vi } from "vitest";' }), stage).reasons).toEqual([
        reason("src/a.ts"),
      ]);
    });
    it("is not looked for in the navigator's tests at RED, even under the code globs", () => {
      const c = commit(as("navigator"), { "src/a.test.ts": 'import { it } from "vitest";' });
      expect(classify(c, "red").reasons).toEqual([]);
    });
    it("is not looked for in a file the driver removes", () => {
      expect(classify(commit(as("driver"), { "src/a.ts": null }), "green").reasons).toEqual([]);
    });
  });

  describe("the frozen runner configuration", () => {
    const runnerRefusal = (path: string, changed: string) =>
      `abc1234: ${path}: changes the test runner's configuration (${changed}), frozen at the test-list gate because it decides which tests pass: restore it (other dependencies may change), or ask a person to renegotiate the test list`;
    const ranFile = (path: string, verb: string, by: string) =>
      `abc1234: ${path}: ${verb} a file the test command runs (named by ${by}), frozen at the test-list gate because it decides which tests pass: restore it, or ask a person to renegotiate the test list`;
    const noPackage =
      "abc1234: the text of package.json before abc1234 was not provided, so which files the frozen test command runs cannot be told (fail closed)";

    it("refuses a file the package.json of the commit newly has a command script run", () => {
      const c = pushed(
        "driver",
        [
          { path: "package.json", status: "modified" },
          { path: "scripts/seed.js", status: "added" },
        ],
        {
          "package.json": pkg({ scripts: { migrate: "node scripts/migrate.js", premigrate: "node scripts/seed.js" } }),
          "scripts/seed.js": "seed()",
        },
        { "package.json": pkg({ scripts: { migrate: "node scripts/migrate.js" } }) },
      );
      expect(classify(c, "green", { frozen: runnerFrozen })).toEqual({
        accepted: false,
        role: "driver",
        reasons: [
          runnerRefusal("package.json", "scripts.premigrate"),
          ranFile("scripts/seed.js", "adds", "package.json scripts.premigrate"),
        ],
        frozenTouched: [
          { path: "package.json", gate: "test-list" },
          { path: "scripts/seed.js", gate: "test-list" },
        ],
      });
    });
    it("refuses a change to a file the package.json before the commit had a command script run", () => {
      const c = pushed(
        "driver",
        [
          { path: "package.json", status: "modified" },
          { path: "scripts/migrate.js", status: "removed" },
        ],
        { "package.json": pkg({ scripts: { migrate: "node scripts/migrate-v2.js" } }), "scripts/migrate.js": null },
        { "package.json": pkg({ scripts: { migrate: "node scripts/migrate.js" } }) },
      );
      expect(classify(c, "green", { frozen: runnerFrozen }).reasons).toEqual([
        runnerRefusal("package.json", "scripts.migrate"),
        ranFile("scripts/migrate.js", "removes", "package.json scripts.migrate"),
      ]);
    });
    it("reads the package.json of the folder a command runs in", () => {
      const inApi = ConsortConfig.parse({ commands: { test: "cd api && npm test" } });
      const c = pushed(
        "driver",
        [{ path: "api/run.js", status: "modified" }],
        { "api/run.js": "run()" },
        {
          "package.json": pkg({}),
          "api/package.json": pkg({ scripts: { test: "node run.js" } }),
        },
      );
      expect(classify(c, "green", { config: inApi, frozen: runnerFrozen }).reasons).toEqual([
        ranFile("api/run.js", "changes", "api/package.json scripts.test"),
      ]);
    });
    it("fails closed when no text before the commit is provided at all", () => {
      const c = pushed("driver", [{ path: "vitest.config.ts", status: "modified" }], { "vitest.config.ts": "x" });
      expect(classify(c, "green", { frozen: runnerFrozen }).reasons).toEqual([
        noPackage,
        "abc1234: the text of runner configuration file vitest.config.ts before and after abc1234 was not provided, so the frozen runner configuration cannot be checked (fail closed)",
      ]);
    });
    it("fails closed when the text of a runner file after the commit is not provided", () => {
      const c = pushed(
        "driver",
        [{ path: "vitest.config.ts", status: "modified" }],
        {},
        {
          "package.json": pkg({}),
          "vitest.config.ts": "export default {}",
        },
      );
      expect(classify(c, "green", { frozen: runnerFrozen }).reasons).toEqual([
        "abc1234: the text of runner configuration file vitest.config.ts before and after abc1234 was not provided, so the frozen runner configuration cannot be checked (fail closed)",
      ]);
    });
    it("still judges a runner file whose texts are provided when package.json's is not", () => {
      const c = pushed(
        "driver",
        [{ path: "vitest.config.ts", status: "modified" }],
        { "vitest.config.ts": "export default { test: { include: ['x'] } }" },
        { "vitest.config.ts": "export default {}" },
      );
      expect(classify(c, "green", { frozen: runnerFrozen }).reasons).toEqual([
        noPackage,
        runnerRefusal("vitest.config.ts", "the whole file"),
      ]);
    });
    it("asks for package.json when any change reaches beyond .consort/", () => {
      const c = pushed(
        "driver",
        [
          { path: ".consort/reviews/T1.json", status: "modified" },
          { path: "src/a.ts", status: "modified" },
        ],
        { ".consort/reviews/T1.json": "{}", "src/a.ts": "x" },
      );
      expect(classify(c, "green", { frozen: runnerFrozen }).reasons).toEqual([
        noPackage,
        `abc1234: path .consort/reviews/T1.json is not driver's to change at green (${DRIVER_PATHS})`,
      ]);
    });
    it("keeps the test-file rule for a fixture's package.json under the test globs", () => {
      const c = pushed(
        "navigator",
        [{ path: "test/fixtures/app/package.json", status: "modified" }],
        { "test/fixtures/app/package.json": pkg({ devDependencies: { vitest: "file:./x" } }) },
        { "package.json": pkg({}), "test/fixtures/app/package.json": pkg({ devDependencies: { vitest: "^4.1.0" } }) },
      );
      expect(classify(c, "red", { frozen: runnerFrozen }).reasons).toEqual([]);
    });
    it("freezes the root package.json's runner entries even where the test globs match it", () => {
      const wide = ConsortConfig.parse({ paths: { tests: ["test/**", "*.json"] } });
      const c = pushed(
        "navigator",
        [{ path: "package.json", status: "modified" }],
        { "package.json": pkg({ devDependencies: { vitest: "file:./my-vitest" } }) },
        { "package.json": pkg({ devDependencies: { vitest: "^4.1.0" } }) },
      );
      expect(classify(c, "red", { config: wide, frozen: runnerFrozen })).toEqual({
        accepted: false,
        role: "navigator",
        reasons: [runnerRefusal("package.json", "devDependencies.vitest")],
        frozenTouched: [{ path: "package.json", gate: "test-list" }],
      });
    });
  });
});
