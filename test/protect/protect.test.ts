import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { asTyped } from "../../src/cli/invocation.js";
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

/** What `GET /repos/acme/shop/rules/branches/consort%2Fstate` answers: the rules in force, each with its ruleset. */
const rulesOnState = (types: string[], ruleset = { id: 43, source_type: "Repository", source: "acme/shop" }) =>
  types.map((type) => ({
    type,
    ruleset_source_type: ruleset.source_type,
    ruleset_source: ruleset.source,
    ruleset_id: ruleset.id,
  }));
const STATE_RULES = /^\/repos\/acme\/shop\/rules\/branches\/consort(%2F|\/)state$/;
const protectionOf = (branch: "main" | "consort/state") =>
  new RegExp(`^/repos/acme/shop/branches/${branch.replace("/", "(%2F|/)")}/protection$`);
const NOT_PROTECTED: [number, unknown] = [
  404,
  { message: "Branch not protected", documentation_url: "https://docs.github.com/rest" },
];

/**
 * What else applies, as GitHub answers it: the repository (its visibility and owner), the branch
 * protection rules of main and consort/state (none: 404), and the rules in force on consort/state.
 */
function otherProtection({
  repository = {},
  onMain = NOT_PROTECTED,
  onState = NOT_PROTECTED,
  stateRules = [],
}: {
  repository?: Record<string, unknown>;
  onMain?: [number, unknown];
  onState?: [number, unknown];
  stateRules?: unknown[];
} = {}): void {
  github
    .on("GET", "/repos/acme/shop", [
      200,
      {
        id: 4242,
        name: "shop",
        full_name: "acme/shop",
        private: false,
        visibility: "public",
        default_branch: "main",
        owner: { login: "acme", id: 7, type: "Organization" },
        ...repository,
      },
    ])
    .on("GET", protectionOf("main"), onMain)
    .on("GET", protectionOf("consort/state"), onState)
    .on("GET", STATE_RULES, [200, stateRules]);
}

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
    expect(github.calls("GET", LIST)[0]!.query).toEqual({ includes_parents: "true", per_page: "100" });
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
    otherProtection();
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
    otherProtection();
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
      .on("GET", `${LIST}/43`, [200, stored(43, stateBranchBody())]);
    otherProtection({ stateRules: rulesOnState(["creation", "update", "non_fast_forward", "deletion"]) });

    const { code, out } = await check();

    github.verify();
    expect(code).toBe(0);
    expect(github.requests.every((r) => r.method === "GET")).toBe(true);
    expect(out).toContain("consort/state: protected (creation, update, non_fast_forward, deletion in force)");
  });

  it("--check exits 1 and says how to restore consort/state's ruleset when its rules are gone", async () => {
    github.on("GET", LIST, [200, []]);
    otherProtection({ stateRules: rulesOnState(["non_fast_forward"]) });

    const { code, err } = await check();

    github.verify();
    expect(code).toBe(1);
    expect(github.requests.every((r) => r.method === "GET")).toBe(true);
    expect(err).toContain(
      `consort: ${asTyped(unprotectedStateBranch("acme/shop", ["creation", "update", "deletion"]))}\n  → npx --no-install consort protect --repo acme/shop --app-id ${TEST_APP_ID}`,
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

describe("consort protect sees all protection that applies", () => {
  /** `consort protect --check` on acme/shop, with Consort's own rulesets in place and in force. */
  async function checkWith(other: Parameters<typeof otherProtection>[0] = {}) {
    github
      .on("GET", LIST, [200, [listed(42, DEFAULT_BRANCH_RULESET), listed(43, STATE_BRANCH_RULESET)]])
      .on("GET", `${LIST}/42`, [200, stored(42, defaultBranchBody())])
      .on("GET", `${LIST}/43`, [200, stored(43, stateBranchBody())]);
    otherProtection({ ...other, stateRules: [...OURS_ON_STATE, ...(other.stateRules ?? [])] });
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
    github.verify();
    expect(github.requests.every((r) => r.method === "GET")).toBe(true);
    return { code, out: out.join(""), err: err.join("") };
  }
  const OURS_ON_STATE = rulesOnState(["creation", "update", "non_fast_forward", "deletion"]);

  /** A classic branch protection rule as GitHub answers it, with `settings` on. */
  const legacyRule = (settings: Record<string, unknown>): [number, unknown] => [
    200,
    {
      url: "https://api.github.com/repos/acme/shop/branches/x/protection",
      enforce_admins: { url: "", enabled: false },
      required_linear_history: { enabled: false },
      allow_force_pushes: { enabled: false },
      allow_deletions: { enabled: false },
      ...settings,
    },
  ];

  it("passes when nothing else applies to the two branches", async () => {
    const { code, out } = await checkWith();
    expect(code).toBe(0);
    expect(out).toContain("No other protection applies to the default branch or consort/state.");
    expect(out).toContain("No conflicts: the rulesets protect the gates and consort/state as they say.");
  });

  it("fails while a branch protection rule also matches consort/state: the app's ruleset bypass does not lift it", async () => {
    const { code, out, err } = await checkWith({
      onState: legacyRule({
        required_pull_request_reviews: { url: "", dismiss_stale_reviews: false, required_approving_review_count: 1 },
      }),
    });
    expect(code).toBe(1);
    expect(out).toContain("consort/state: a branch protection rule (required_pull_request_reviews)");
    expect(err).toContain(
      `consort: 1 conflict(s) with other protection remain on acme/shop:\n- a branch protection rule matches consort/state (required_pull_request_reviews); the app's bypass in the ruleset "${STATE_BRANCH_RULESET}" does not lift a branch protection rule, so GitHub refuses the app's writes and no track can move\n  → under Settings → Branches, change the pattern of the rule that matches consort/state so it no longer does, or delete it (for a rule made for that branch alone: gh api -X DELETE repos/acme/shop/branches/consort%2Fstate/protection); the ruleset "${STATE_BRANCH_RULESET}" keeps the branch the app's alone`,
    );
  });

  it("a branch protection rule on consort/state that only forbids force pushes and deletion is seen, not a conflict", async () => {
    const { code, out } = await checkWith({ onState: legacyRule({}) });
    expect(code).toBe(0);
    expect(out).toContain("consort/state: a branch protection rule (no settings)");
  });

  it("fails while a branch protection rule on the default branch requires a Consort check from another app", async () => {
    const { code, err } = await checkWith({
      onMain: legacyRule({
        required_status_checks: {
          url: "",
          strict: false,
          contexts: ["consort/build"],
          checks: [{ context: "consort/build", app_id: 15368 }],
        },
      }),
    });
    expect(code).toBe(1);
    expect(err).toContain(
      `the branch protection rule on main requires consort/build from app 15368, which only the Consort app (id ${TEST_APP_ID}) posts, so no pull request can merge\n  → under Settings → Branches, edit the rule that matches main: remove those checks from "Require status checks to pass" (the ruleset "${DEFAULT_BRANCH_RULESET}" requires them from the app)`,
    );
  });

  /** The organisation's ruleset 900, as the repository's ruleset endpoint answers it with its parents. */
  const orgRuleset = (bypass: unknown[]): [number, unknown] => [
    200,
    {
      id: 900,
      name: "org: protect every branch",
      target: "branch",
      source_type: "Organization",
      source: "acme",
      enforcement: "active",
      bypass_actors: bypass,
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "update" }, { type: "non_fast_forward" }],
    },
  ];
  const ORG_RULES = rulesOnState(["update", "non_fast_forward"], {
    id: 900,
    source_type: "Organization",
    source: "acme",
  });

  it("fails while an organisation ruleset applies to consort/state without letting the app bypass it", async () => {
    github.on(
      "GET",
      `${LIST}/900`,
      orgRuleset([{ actor_id: 1, actor_type: "OrganizationAdmin", bypass_mode: "always" }]),
    );
    const { code, out, err } = await checkWith({ stateRules: ORG_RULES });
    expect(code).toBe(1);
    expect(github.calls("GET", `${LIST}/900`)[0]!.query).toEqual({ includes_parents: "true" });
    expect(out).toContain("consort/state: ruleset 900 of the organisation acme (update, non_fast_forward)");
    expect(err).toContain(
      `- the ruleset "org: protect every branch" of the organisation acme applies update to consort/state and does not let the app bypass it, so GitHub refuses the app's writes and no track can move\n  → add the Consort app (GitHub App id ${TEST_APP_ID}) to the bypass list of that ruleset, mode Always (https://github.com/organizations/acme/settings/rules/900), or exclude refs/heads/consort/state from its target branches`,
    );
  });

  it("an organisation ruleset on consort/state that the app bypasses is seen, not a conflict", async () => {
    github.on(
      "GET",
      `${LIST}/900`,
      orgRuleset([{ actor_id: TEST_APP_ID, actor_type: "Integration", bypass_mode: "always" }]),
    );
    const { code, out } = await checkWith({ stateRules: ORG_RULES });
    expect(code).toBe(0);
    expect(out).toContain("consort/state: ruleset 900 of the organisation acme (update, non_fast_forward)");
  });

  const PRIVATE = { private: true, visibility: "private" };
  const organisation = (plan?: string): [number, unknown] => [
    200,
    { login: "acme", id: 7, ...(plan ? { plan: { name: plan, space: 976562499, private_repos: 999999 } } : {}) },
  ];

  it("fails on a private repository of an organisation on GitHub Free, where rulesets are not enforced", async () => {
    github.on("GET", "/orgs/acme", organisation("free"));
    const { code, err } = await checkWith({ repository: PRIVATE });
    expect(code).toBe(1);
    expect(err).toContain(
      "- acme/shop is private and acme is on GitHub Free, where rulesets on private repositories are not enforced: the seven checks are not required and consort/state is not protected, whatever the rulesets say\n  → make acme/shop public, or move acme to GitHub Team or Enterprise; then run npx --no-install consort protect --check again",
    );
  });

  it("passes on a private repository of an organisation on GitHub Team", async () => {
    github.on("GET", "/orgs/acme", organisation("team"));
    expect((await checkWith({ repository: PRIVATE })).code).toBe(0);
  });

  it("fails closed on a private repository whose owner's plan GitHub does not show", async () => {
    github.on("GET", "/orgs/acme", organisation());
    const { code, err } = await checkWith({ repository: PRIVATE });
    expect(code).toBe(1);
    expect(err).toContain(
      "- acme/shop is private, and GitHub did not show the plan of acme, so Consort cannot tell whether its rulesets are enforced (on GitHub Free they are not, and the gates would only advise)\n  → run npx --no-install consort protect --check with the token of an owner of the organisation acme (GitHub shows an organisation's plan only to its owners)",
    );
  });

  it("reads a user's plan for a private repository a user owns", async () => {
    github.on("GET", "/users/acme", [
      200,
      { login: "acme", id: 7, type: "User", plan: { name: "free", space: 1, private_repos: 10000, collaborators: 0 } },
    ]);
    const { code, err } = await checkWith({
      repository: { ...PRIVATE, owner: { login: "acme", id: 7, type: "User" } },
    });
    expect(code).toBe(1);
    expect(err).toContain(
      "  → make acme/shop public, or move acme to GitHub Pro; then run npx --no-install consort protect --check again",
    );
  });
});
