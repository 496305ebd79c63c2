import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { createHarness, mockInstallationToken, NOW, type Harness } from "./harness.js";
import { contentFile, DEFAULT_BRANCH, FakeStateBranch, inRepo, INSTALLATION_ID } from "./fake-repo.js";
import { testDatabase, type TestDatabase } from "./database.js";
import { randomBytes } from "node:crypto";

let h: Harness;
let state: FakeStateBranch;
let db: TestDatabase;
let branch: string;
const HEAD = "ab".repeat(20);

beforeEach(() => {
  db = testDatabase();
  branch = `feature-${randomBytes(3).toString("hex")}`;
  h = createHarness({ openProvider: db.openProvider });
  state = new FakeStateBranch(h.github);
});
afterEach(async () => {
  h.github.dispose();
  await db.cleanup([branch]);
});

function createPayload(ref: string, refType: "branch" | "tag" = "branch") {
  return inRepo({ ...webhookPayload("create"), ref, ref_type: refType });
}

describe("create", () => {
  it("starts a track: forks its database branch from trunk's, writes the signed initial state, creates the seven checks", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    h.github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, [200, { ref: `refs/heads/${branch}`, node_id: "R", url: "", object: { type: "commit", sha: HEAD, url: "" } }])
      .on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", contentFile(".github/consort.yml", db.configYaml))
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", (r) => [201, { id: 100 + h.github.calls("POST", "/repos/acme/shop/check-runs").length, name: (r.body as { name: string }).name }], 7)
      .on("GET", "/repos/acme/shop/pulls", [200, []]);

    await h.receive("create", createPayload(branch));
    h.github.verify();

    // The configuration came from the default branch, never from the new branch.
    expect(h.github.calls("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml")[0]!.query).toEqual({ ref: DEFAULT_BRANCH });
    // The database branch is real, forked from the root (trunk's pair).
    expect(await db.branchExists(branch)).toBe(true);
    const written = state.state(branch)!;
    expect(written).toMatchObject({ trackId: branch, repository: "acme/shop", branch, approvals: [], cycles: [], updatedAt: NOW.toISOString() });
    expect(written.snapshot).toMatchObject({ stage: "stories", context: { head: HEAD, databaseBranch: branch, parentDatabaseBranch: db.root } });
    expect(written.processedDeliveries).toHaveLength(1);

    const checks = h.github.calls("POST", "/repos/acme/shop/check-runs").map((c) => c.body as Record<string, unknown>);
    expect(checks.map((c) => c.name)).toEqual(["consort/design", "consort/test-list", "consort/build", "consort/deploy", "consort/promote", "consort/discipline", "consort/schema"]);
    const design = checks[0]!;
    expect(design).toEqual({
      name: "consort/design",
      head_sha: HEAD,
      status: "in_progress",
      output: { title: "Not reached yet", summary: expect.stringContaining(`Track \`${branch}\``) },
      actions: [],
    });
    // Nothing is ever neutral or skipped.
    for (const check of checks) expect(["neutral", "skipped"]).not.toContain(check.conclusion);
  });

  it("a redelivered create changes nothing", async () => {
    mockInstallationToken(h.github, INSTALLATION_ID);
    h.github
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, [200, { ref: `refs/heads/${branch}`, node_id: "R", url: "", object: { type: "commit", sha: HEAD, url: "" } }], 2)
      .on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", contentFile(".github/consort.yml", db.configYaml), 2)
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], 7)
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
      .on("GET", `/repos/acme/shop/git/ref/heads%2F${branch}`, [200, { ref: `refs/heads/${branch}`, node_id: "R", url: "", object: { type: "commit", sha: HEAD, url: "" } }])
      .on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", contentFile(".github/consort.yml", "repairBound: 99\n"))
      .on("GET", `/repos/acme/shop/commits/${HEAD}/check-runs`, [200, { total_count: 0, check_runs: [] }])
      .on("POST", "/repos/acme/shop/check-runs", [201, { id: 1 }], 7);
    await h.receive("create", createPayload(branch));
    h.github.verify();
    const checks = h.github.calls("POST", "/repos/acme/shop/check-runs").map((c) => c.body as { conclusion: string; output: { title: string; summary: string } });
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
});
