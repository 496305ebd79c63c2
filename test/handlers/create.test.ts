import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { contentFile, DEFAULT_BRANCH, type FakeStateBranch, inRepo, INSTALLATION_ID, refAt } from "./fake-repo.js";
import { testDatabase, type TestDatabase } from "./database.js";
import pg from "pg";
import { TEST_APP_ID } from "../helpers/github.js";
import { postgresUrl } from "../helpers/postgres.js";
import { expectForkPoint, NOW } from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let db: TestDatabase;
let branch: string;
const HEAD = "ab".repeat(20);

beforeEach(() => {
  db = testDatabase();
  ({ h, state, branch } = trackRepo({ openProvider: db.openProvider }));
});
afterEach(async () => {
  h.github.dispose();
  await db.cleanup([branch]);
});

function createPayload(ref: string, refType: "branch" | "tag" = "branch") {
  return inRepo({ ...webhookPayload("create"), ref, ref_type: refType });
}

describe("create", () => {
  it("starts a track: forks its database branch from trunk's, writes the signed initial state, creates the checks that have a conclusion", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectForkPoint(h.github, HEAD);
    h.github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, refAt(branch, HEAD))
      .on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", contentFile(".github/consort.yml", db.configYaml))
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on(
        "POST",
        "/repos/acme/shop/check-runs",
        (r) => [
          201,
          {
            id: 100 + h.github.calls("POST", "/repos/acme/shop/check-runs").length,
            name: (r.body as { name: string }).name,
          },
        ],
        2,
      )
      .on("GET", "/repos/acme/shop/pulls", [200, []]);

    await h.receive("create", createPayload(branch));
    h.github.verify();

    // The configuration came from the default branch, never from the new branch.
    expect(h.github.calls("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml")[0]!.query).toEqual({
      ref: DEFAULT_BRANCH,
    });
    // The database branch is real, forked from the root (trunk's pair).
    expect(await db.branchExists(branch)).toBe(true);
    const written = state.state(branch)!;
    expect(written).toMatchObject({
      trackId: branch,
      repository: "acme/shop",
      branch,
      cycles: [],
      updatedAt: NOW.toISOString(),
    });
    // The approvals that count live once, in the snapshot's gates.
    expect(written).not.toHaveProperty("approvals");
    expect(written.snapshot).toMatchObject({
      stage: "stories",
      context: { head: HEAD, databaseBranch: branch, parentDatabaseBranch: db.root },
    });
    expect(written.processedDeliveries).toHaveLength(1);

    const checks = h.github.calls("POST", "/repos/acme/shop/check-runs").map((c) => c.body as Record<string, unknown>);
    // The gates and the build only wait on a new track: a missing required check blocks the merge as
    // an in-progress one would, so only the two checks that have a conclusion are written, completed.
    expect(checks.map((c) => c.name)).toEqual(["consort/discipline", "consort/schema"]);
    expect(checks[0]!).toEqual({
      name: "consort/discipline",
      head_sha: HEAD,
      status: "completed",
      conclusion: "success",
      output: {
        title: "Every commit was the step in turn, by its role, on its own paths",
        summary: expect.stringContaining(`Track \`${branch}\``),
      },
      actions: [],
    });
    // Nothing is ever neutral or skipped.
    for (const check of checks) expect(["neutral", "skipped"]).not.toContain(check.conclusion);
  });

  it("a redelivered create changes nothing", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectForkPoint(h.github, HEAD, HEAD, 2);
    h.github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, refAt(branch, HEAD), 2)
      .on(
        "GET",
        "/repos/acme/shop/contents/.github%2Fconsort.yml",
        contentFile(".github/consort.yml", db.configYaml),
        2,
      )
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], 2)
      .on("GET", "/repos/acme/shop/pulls", [200, []]);
    const delivery = await h.receive("create", createPayload(branch));
    const head = state.head;
    await h.receive("create", createPayload(branch), delivery);
    h.github.verify();
    expect(state.head).toBe(head);
    expect(state.updates.filter((u) => u.accepted)).toHaveLength(0); // the first write created the branch; the redelivery wrote nothing
  });

  it("an invalid configuration fails every check naming the problem and starts nothing", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    h.github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, refAt(branch, HEAD))
      .on(
        "GET",
        "/repos/acme/shop/contents/.github%2Fconsort.yml",
        contentFile(".github/consort.yml", "repairBound: 99\n"),
      )
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], 7);
    await h.receive("create", createPayload(branch));
    h.github.verify();
    const checks = h.github
      .calls("POST", "/repos/acme/shop/check-runs")
      .map((c) => c.body as { conclusion: string; output: { title: string; summary: string } });
    for (const check of checks) {
      expect(check.conclusion).toBe("failure");
      expect(check.output.title).toBe("Invalid .github/consort.yml");
      expect(check.output.summary).toContain("repairBound:");
    }
    expect(state.head).toBeUndefined();
    expect(await db.branchExists(branch)).toBe(false);
  });

  it("tags, the default branch and the state branch are never tracks", async () => {
    await h.receive("create", createPayload("v1.0.0", "tag"));
    await h.receive("create", createPayload(DEFAULT_BRANCH));
    await h.receive("create", createPayload("consort/state"));
    h.github.verify();
    expect(h.github.requests).toHaveLength(0);
  });

  it("a database branch that cannot be created fails consort/discipline saying what failed, with a Retry button; the state says so; Retry by a writer creates it", async () => {
    // The database provider refuses the fork: a database by the track's name exists that Consort did not make.
    await adminSql(`CREATE DATABASE "${branch}"`);
    mockInstallationToken(h.github, INSTALLATION_ID);
    expectForkPoint(h.github, HEAD);
    h.github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, refAt(branch, HEAD))
      .on(
        "GET",
        "/repos/acme/shop/contents/.github%2Fconsort.yml",
        contentFile(".github/consort.yml", db.configYaml),
        2,
      )
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }], 2)
      .on(
        "POST",
        "/repos/acme/shop/check-runs",
        (r) => [
          201,
          {
            id: 100 + h.github.calls("POST", "/repos/acme/shop/check-runs").length,
            name: (r.body as { name: string }).name,
          },
        ],
        4,
      )
      .on("GET", "/repos/acme/shop/pulls", [200, []], 2);

    // The delivery fails (GitHub shows it), and the checks say what failed and what to do.
    await expect(h.receive("create", createPayload(branch))).rejects.toThrow(/forkDatabase/);
    const failed = postedChecks();
    const discipline = failed["consort/discipline"]!;
    expect(discipline).toMatchObject({
      status: "completed",
      conclusion: "failure",
      output: { title: "Database branch step failed" },
    });
    expect(discipline.output.summary).toContain(`Database branch \`${branch}\` was not created from \`${db.root}\``);
    expect(discipline.output.summary).toContain("is not a Consort branch");
    expect(discipline.output.summary).toContain("presses Retry");
    expect(discipline.actions).toEqual([
      { label: "Retry", description: "Redo the failed database branch step", identifier: "retry-database" },
    ]);
    expect(failed["consort/schema"]).toMatchObject({ conclusion: "failure" });
    for (const check of Object.values(failed)) expect(["neutral", "skipped"]).not.toContain(check.conclusion);
    // The state does not pretend the branch exists: its problems name the failed fork.
    const problems = (state.state(branch)!.snapshot as { context: { lastProblem: string[] } }).context.lastProblem;
    expect(problems.join("\n")).toContain(`Database branch \`${branch}\` was not created`);

    // A reader's click changes nothing.
    permission("drive-by", "read");
    await h.receive("check_run", retryClick("drive-by"));
    expect(await db.branchExists(branch)).toBe(false);

    // The cause is fixed; a writer presses Retry: the branch is forked, the problem cleared, the check passes.
    await adminSql(`DROP DATABASE "${branch}"`);
    permission("lead-human", "write");
    await h.receive("check_run", retryClick("lead-human"));
    h.github.verify();
    expect(await db.branchExists(branch)).toBe(true);
    expect((state.state(branch)!.snapshot as { context: { lastProblem: string[] } }).context.lastProblem).toEqual([]);
    const after = postedChecks();
    expect(after["consort/discipline"]).toMatchObject({ conclusion: "success", actions: [] });
    expect(after["consort/schema"]).toMatchObject({ conclusion: "success" });
  });
});

async function adminSql(sql: string) {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The check runs last posted, by name. */
function postedChecks(): Record<
  string,
  { status: string; conclusion?: string; output: { title: string; summary: string }; actions: unknown[] }
> {
  return Object.fromEntries(
    h.github.calls("POST", "/repos/acme/shop/check-runs").map((c) => [(c.body as { name: string }).name, c.body]),
  ) as never;
}

const permission = (user: string, level: string) =>
  h.github.on("GET", `/repos/acme/shop/collaborators/${user}/permission`, [
    200,
    { permission: level, role_name: level, user: { login: user } },
  ]);

/** A click on consort/discipline's Retry button. */
function retryClick(sender: string) {
  const example = webhookPayload("check_run", "requested_action");
  return inRepo({
    ...example,
    sender: { ...example.sender, login: sender },
    check_run: {
      ...example.check_run,
      name: "consort/discipline",
      head_sha: HEAD,
      app: { ...example.check_run.app, id: TEST_APP_ID },
      check_suite: { ...example.check_run.check_suite, head_branch: branch },
    },
    requested_action: { identifier: "retry-database" },
  });
}
