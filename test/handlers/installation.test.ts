import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { createHarness, mockInstallationToken, type Harness } from "./harness.js";
import { refAt } from "./fake-repo.js";

let h: Harness;
beforeEach(() => {
  h = createHarness();
  mockInstallationToken(h.github, 957387);
});
afterEach(() => h.github.dispose());

const TREE = "1".repeat(40);
const COMMIT = "2".repeat(40);

/** The state branch's creation in `owner/repo`: not there yet, its orphan commit, then the ref (answered with `refReply`). */
function expectStateBranchCreated(
  owner: string,
  repo: string,
  refReply: [number, unknown] = [
    201,
    { ref: "refs/heads/consort/state", node_id: "R", url: "", object: { type: "commit", sha: COMMIT, url: "" } },
  ],
) {
  h.github
    .on("GET", `/repos/${owner}/${repo}/git/ref/heads%2Fconsort%2Fstate`, [404, { message: "Not Found" }])
    .on("POST", `/repos/${owner}/${repo}/git/trees`, [201, { sha: TREE, url: "", tree: [], truncated: false }])
    .on("POST", `/repos/${owner}/${repo}/git/commits`, [
      201,
      {
        sha: COMMIT,
        node_id: "C",
        url: "",
        html_url: "",
        author: { name: "a", email: "a", date: "" },
        committer: { name: "a", email: "a", date: "" },
        message: "",
        tree: { sha: TREE, url: "" },
        parents: [],
        verification: { verified: true, reason: "valid", signature: null, payload: null, verified_at: null },
      },
    ])
    .on("POST", `/repos/${owner}/${repo}/git/refs`, refReply);
}

describe("installation", () => {
  it("creates consort/state, as an orphan commit, in every repository the app is installed on", async () => {
    expectStateBranchCreated("Codertocat", "Hello-World");
    await h.receive("installation", webhookPayload("installation", "created"));
    h.github.verify();
    const [tree, commit, ref] = [
      h.github.calls("POST", /git\/trees$/)[0]!,
      h.github.calls("POST", /git\/commits$/)[0]!,
      h.github.calls("POST", /git\/refs$/)[0]!,
    ];
    expect(tree.body).toEqual({
      tree: [{ path: "README.md", mode: "100644", type: "blob", content: expect.stringContaining("# consort/state") }],
    });
    expect(commit.body).toEqual({ message: "consort: start the state branch", tree: TREE, parents: [] });
    expect(ref.body).toEqual({ ref: "refs/heads/consort/state", sha: COMMIT });
  });

  it("leaves an existing state branch alone", async () => {
    h.github.on("GET", "/repos/Codertocat/Hello-World/git/ref/heads%2Fconsort%2Fstate", refAt("consort/state", COMMIT));
    await h.receive("installation", webhookPayload("installation", "created"));
    h.github.verify();
  });

  it("a repository added to the installation gets its state branch too", async () => {
    expectStateBranchCreated("Codertocat", "Space");
    await h.receive("installation_repositories", webhookPayload("installation_repositories", "added"));
    h.github.verify();
  });

  it("another replica creating the branch first is not an error", async () => {
    expectStateBranchCreated("Codertocat", "Space", [422, { message: "Reference already exists" }]);
    await h.receive("installation_repositories", webhookPayload("installation_repositories", "added"));
    h.github.verify();
  });
});
