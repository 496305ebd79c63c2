import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";
import {
  DEFAULT_BRANCH_RULESET,
  protectRepository,
  STATE_BRANCH_RULESET,
  unprotectedStateBranch,
} from "../../src/protect/index.js";
import { GitHubMock, TEST_APP_ID } from "../helpers/github.js";
import { octokit } from "../state/helpers.js";

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const LIST = "/repos/acme/shop/rulesets";
const SEVEN = [
  "consort/design",
  "consort/test-list",
  "consort/build",
  "consort/deploy",
  "consort/promote",
  "consort/discipline",
  "consort/schema",
];

const defaultBranchBody = (approvals = 1) => ({
  name: DEFAULT_BRANCH_RULESET,
  target: "branch",
  enforcement: "active",
  conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
  bypass_actors: [],
  rules: [
    {
      type: "required_status_checks",
      parameters: {
        strict_required_status_checks_policy: false,
        do_not_enforce_on_create: false,
        required_status_checks: SEVEN.map((context) => ({ context, integration_id: TEST_APP_ID })),
      },
    },
    {
      type: "pull_request",
      parameters: {
        required_approving_review_count: approvals,
        dismiss_stale_reviews_on_push: false,
        require_code_owner_review: true,
        require_last_push_approval: true,
        required_review_thread_resolution: false,
      },
    },
    { type: "non_fast_forward" },
    { type: "deletion" },
  ],
});

const stateBranchBody = () => ({
  name: STATE_BRANCH_RULESET,
  target: "branch",
  enforcement: "active",
  conditions: { ref_name: { include: ["refs/heads/consort/state"], exclude: [] } },
  bypass_actors: [{ actor_id: TEST_APP_ID, actor_type: "Integration", bypass_mode: "always" }],
  rules: [
    { type: "creation" },
    { type: "update", parameters: { update_allows_fetch_and_merge: false } },
    { type: "non_fast_forward" },
    { type: "deletion" },
  ],
});

/** A ruleset as GitHub returns it. */
const stored = (id: number, body: object) => ({
  id,
  source_type: "Repository",
  source: "acme/shop",
  node_id: `RRS_${id}`,
  current_user_can_bypass: "never",
  created_at: "2026-11-01T00:00:00Z",
  updated_at: "2026-11-01T00:00:00Z",
  ...body,
});

/** The default-branch ruleset someone loosened: no approvals, consort/schema dropped, an admin bypass, their own lint check, squash only. */
function loosened() {
  const body = defaultBranchBody(0);
  const checks = body.rules[0]!.parameters as {
    required_status_checks: Array<{ context: string; integration_id?: number }>;
  };
  checks.required_status_checks = [
    ...checks.required_status_checks.filter((c) => c.context !== "consort/schema"),
    { context: "ci/lint" },
  ];
  (body.rules[1]!.parameters as Record<string, unknown>).allowed_merge_methods = ["squash"];
  (body.rules[1]!.parameters as Record<string, unknown>).required_review_thread_resolution = true;
  return stored(42, { ...body, bypass_actors: [{ actor_id: 5, actor_type: "RepositoryRole", bypass_mode: "always" }] });
}

/** A ruleset as the repository's listing names it (the listing leaves out its rules). */
const listed = (id: number, name: string) => ({ id, name, source_type: "Repository", enforcement: "active" });

/** `consort protect` on acme/shop for the test app, one approval, writing. */
const protectShop = () =>
  protectRepository(octokit(), {
    owner: "acme",
    repo: "shop",
    settings: { appId: TEST_APP_ID, approvals: 1 },
    dryRun: false,
  });

describe("consort protect", () => {
  it("creates both rulesets on a repository that has none, with whole bodies", async () => {
    github
      .on("GET", LIST, [200, []])
      .on("POST", LIST, [201, stored(42, defaultBranchBody())])
      .on("POST", LIST, [201, stored(43, stateBranchBody())]);
    const result = await protectShop();
    github.verify();
    expect(github.calls("GET", LIST)[0]!.query).toEqual({ includes_parents: "false", per_page: "100" });
    expect(github.calls("POST", LIST).map((c) => c.body)).toEqual([defaultBranchBody(), stateBranchBody()]);
    expect(result.rulesets.map((r) => [r.name, r.action, r.id])).toEqual([
      [DEFAULT_BRANCH_RULESET, "create", 42],
      [STATE_BRANCH_RULESET, "create", 43],
    ]);
  });

  it("restores a loosened default-branch ruleset, keeping the repository's own settings, and leaves a sound one alone", async () => {
    github
      .on("GET", LIST, [200, [listed(42, DEFAULT_BRANCH_RULESET), listed(43, STATE_BRANCH_RULESET)]])
      .on("GET", `${LIST}/42`, [200, loosened()])
      .on("GET", `${LIST}/43`, [200, stored(43, stateBranchBody())])
      .on("PUT", `${LIST}/42`, [200, stored(42, defaultBranchBody())]);
    const result = await protectShop();
    github.verify();
    const expected = defaultBranchBody();
    const checks = expected.rules[0]!.parameters as { required_status_checks: unknown[] };
    checks.required_status_checks.push({ context: "ci/lint" });
    Object.assign(expected.rules[1]!.parameters!, {
      allowed_merge_methods: ["squash"],
      required_review_thread_resolution: true,
    });
    expect(github.calls("PUT", `${LIST}/42`)[0]!.body).toEqual(expected);
    expect(result.rulesets.map((r) => r.action)).toEqual(["update", "unchanged"]);
    expect(result.rulesets[0]!.changes).toEqual([
      {
        op: "add",
        path: "rules[required_status_checks].parameters.required_status_checks[consort/schema].integration_id",
        to: TEST_APP_ID,
      },
      { op: "change", path: "rules[pull_request].parameters.required_approving_review_count", from: 0, to: 1 },
      { op: "remove", path: "bypass_actors[RepositoryRole:5].bypass_mode", from: "always" },
    ]);
  });

  it("does not ask GitHub to dismiss stale approvals, and keeps a repository's own choice to", async () => {
    const theirs = defaultBranchBody();
    (theirs.rules[1]!.parameters as Record<string, unknown>).dismiss_stale_reviews_on_push = true;
    github
      .on("GET", LIST, [200, [listed(42, DEFAULT_BRANCH_RULESET), listed(43, STATE_BRANCH_RULESET)]])
      .on("GET", `${LIST}/42`, [200, stored(42, theirs)])
      .on("GET", `${LIST}/43`, [200, stored(43, stateBranchBody())]);
    const result = await protectShop();
    github.verify();
    expect((defaultBranchBody().rules[1]!.parameters as Record<string, unknown>).dismiss_stale_reviews_on_push).toBe(
      false,
    );
    expect(result.rulesets.map((r) => [r.action, r.changes])).toEqual([
      ["unchanged", []],
      ["unchanged", []],
    ]);
  });

  it("--dry-run prints the difference and writes nothing", async () => {
    github.on("GET", LIST, [200, [listed(42, DEFAULT_BRANCH_RULESET)]]).on("GET", `${LIST}/42`, [200, loosened()]);
    vi.stubEnv("GITHUB_TOKEN", "ghp_test");
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const code = await runCli([
      "node",
      "consort",
      "protect",
      "--repo",
      "acme/shop",
      "--app-id",
      String(TEST_APP_ID),
      "--dry-run",
    ]);
    github.verify();
    expect(code).toBe(0);
    expect(github.requests.every((r) => r.method === "GET")).toBe(true);
    const text = out.join("");
    expect(text).toContain(`acme/shop, app ${TEST_APP_ID} (dry run: nothing written)`);
    expect(text).toContain(
      [
        `ruleset "${DEFAULT_BRANCH_RULESET}": update (id 42)`,
        `  + rules[required_status_checks].parameters.required_status_checks[consort/schema].integration_id: ${TEST_APP_ID}`,
        "  ~ rules[pull_request].parameters.required_approving_review_count: 0 → 1",
        '  - bypass_actors[RepositoryRole:5].bypass_mode: "always"',
      ].join("\n"),
    );
    expect(text).toContain(
      `ruleset "${STATE_BRANCH_RULESET}": create\n  + target: "branch"\n  + enforcement: "active"\n  + conditions.ref_name.include: ["refs/heads/consort/state"]`,
    );
    expect(text).toContain(`  + bypass_actors[Integration:${TEST_APP_ID}].bypass_mode: "always"`);
  });

  it("--json prints one plan a program can read", async () => {
    github.on("GET", LIST, [200, []]);
    vi.stubEnv("GITHUB_TOKEN", "ghp_test");
    vi.stubEnv("CONSORT_APP_ID", String(TEST_APP_ID));
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    expect(
      await runCli(["node", "consort", "protect", "--repo", "acme/shop", "--dry-run", "--json", "--approvals", "2"]),
    ).toBe(0);
    github.verify();
    const plan = JSON.parse(out.join("")) as {
      dryRun: boolean;
      appId: number;
      rulesets: Array<{ name: string; action: string; changes: Array<{ path: string; to: unknown }> }>;
    };
    expect(plan).toMatchObject({ repository: "acme/shop", appId: TEST_APP_ID, dryRun: true });
    expect(plan.rulesets.map((r) => [r.name, r.action])).toEqual([
      [DEFAULT_BRANCH_RULESET, "create"],
      [STATE_BRANCH_RULESET, "create"],
    ]);
    expect(plan.rulesets[0]!.changes).toContainEqual({
      op: "add",
      path: "rules[pull_request].parameters.required_approving_review_count",
      to: 2,
    });
  });

  /** What `GET /repos/acme/shop/rules/branches/consort%2Fstate` answers: the rules in force, each with its ruleset. */
  const rulesOnState = (types: string[]) =>
    types.map((type) => ({ type, ruleset_source_type: "Repository", ruleset_source: "acme/shop", ruleset_id: 43 }));
  const STATE_RULES = /^\/repos\/acme\/shop\/rules\/branches\/consort(%2F|\/)state$/;

  /** `consort protect --check` on acme/shop: its exit code, what it printed and what it said on stderr. */
  async function check(): Promise<{ code: number; out: string; err: string }> {
    vi.stubEnv("GITHUB_TOKEN", "ghp_test");
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (err.push(String(chunk)), true));
    const code = await runCli([
      "node",
      "consort",
      "protect",
      "--repo",
      "acme/shop",
      "--app-id",
      String(TEST_APP_ID),
      "--check",
    ]);
    return { code, out: out.join(""), err: err.join("") };
  }

  it("--check says consort/state is protected when its rules are in force, and writes nothing", async () => {
    github
      .on("GET", LIST, [200, [listed(43, STATE_BRANCH_RULESET)]])
      .on("GET", `${LIST}/43`, [200, stored(43, stateBranchBody())])
      .on("GET", STATE_RULES, [200, rulesOnState(["creation", "update", "non_fast_forward", "deletion"])]);

    const { code, out } = await check();

    github.verify();
    expect(code).toBe(0);
    expect(github.requests.every((r) => r.method === "GET")).toBe(true);
    expect(out).toContain("consort/state: protected (creation, update, non_fast_forward, deletion in force)");
  });

  it("--check exits 1 and says how to restore consort/state's ruleset when its rules are gone", async () => {
    github.on("GET", LIST, [200, []]).on("GET", STATE_RULES, [200, rulesOnState(["non_fast_forward"])]);

    const { code, err } = await check();

    github.verify();
    expect(code).toBe(1);
    expect(github.requests.every((r) => r.method === "GET")).toBe(true);
    expect(err).toContain(
      `consort: ${unprotectedStateBranch("acme/shop", ["creation", "update", "deletion"])}\n  → consort protect --repo acme/shop --app-id ${TEST_APP_ID}`,
    );
  });

  it("says which permission is missing when GitHub refuses, and writes nothing", async () => {
    github.on("GET", LIST, [403, { message: "Resource not accessible by personal access token" }]);
    vi.stubEnv("GITHUB_TOKEN", "ghp_test");
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (err.push(String(chunk)), true));
    expect(await runCli(["node", "consort", "protect", "--repo", "acme/shop", "--app-id", "7"])).toBe(1);
    github.verify();
    expect(err.join("")).toContain(
      "consort: Could not read the rulesets of acme/shop: Resource not accessible by personal access token (HTTP 403)\n  → the token needs the repository's Administration: write permission",
    );
  });

  it("refuses an approvals count that would let a gate pass without a person", async () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (err.push(String(chunk)), true));
    expect(
      await runCli(["node", "consort", "protect", "--repo", "acme/shop", "--app-id", "7", "--approvals", "0"]),
    ).toBe(1);
    expect(err.join("")).toContain("--approvals must be at least 1: a gate needs a person");
    github.verify();
    expect(github.requests).toEqual([]);
  });
});
