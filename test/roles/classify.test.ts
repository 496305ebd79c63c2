import { describe, expect, it } from "vitest";
import { ConsortConfig, defaultConfig } from "../../src/config/consort-config.js";
import { classifyCommit, type FrozenState } from "../../src/roles/classify.js";
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
