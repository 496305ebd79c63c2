import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { TEST_APP_ID } from "../helpers/github.js";
import { type Harness, mockInstallationToken, trackRepo } from "./harness.js";
import { type FakeStateBranch, INSTALLATION_ID } from "./fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  pullRequestPayload,
  simulatedTrack,
  stateOf,
} from "./scenario.js";

let h: Harness;
let state: FakeStateBranch;
let branch: string;

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

describe("pull_request opened", () => {
  it("puts the track's checks on the PR head and edits the ONE existing Consort comment instead of adding another", async () => {
    const snapshot = simulatedTrack(branch).snapshot;
    state.seed(stateOf(branch, snapshot));
    const before = state.head;
    const head = snapshot.context.head;
    expectDefaultConfig(h.github);
    expectChecks(h.github, head);
    h.github
      .on("GET", "/repos/acme/shop/pulls", [
        200,
        [{ number: 7, base: { ref: "main" }, head: { ref: branch, sha: head } }],
      ])
      .on("GET", "/repos/acme/shop/issues/7/comments", [
        200,
        [
          // Someone pasted the marker: not ours, never edited.
          {
            id: 70,
            body: `<!-- consort:sticky track=${branch} -->\nfake`,
            user: { login: "mallory" },
            performed_via_github_app: null,
          },
          {
            id: 71,
            body: `<!-- consort:sticky track=${branch} -->\nold text`,
            user: { login: "consort[bot]" },
            performed_via_github_app: { id: TEST_APP_ID },
          },
        ],
      ])
      .on("PATCH", "/repos/acme/shop/issues/comments/71", [200, { id: 71 }]);

    await h.receive("pull_request", pullRequestPayload(webhookPayload("pull_request", "opened"), branch, head));
    h.github.verify();

    expect(state.head).toBe(before); // showing the track writes no state
    // Only the checks with a conclusion are created on a head that has none; the waiting ones stay absent
    // (the schema too: on the default `local` with hosted runners only the release job can compute it).
    expect(Object.keys(createdChecks(h.github)).sort()).toEqual(["consort/discipline"]);
    const edit = h.github.calls("PATCH", "/repos/acme/shop/issues/comments/71")[0]!.body as { body: string };
    expect(edit.body.startsWith(`<!-- consort:sticky track=${branch} -->`)).toBe(true);
    expect(edit.body).toContain("product-owner");
  });

  it("a PR from a fork is never a track: every check fails saying why Consort cannot gate it and to push the branch here", async () => {
    const example = webhookPayload("pull_request", "opened");
    const head = "a".repeat(40);
    const payload = pullRequestPayload(example, branch, head);
    payload.pull_request.head.repo = { ...payload.pull_request.head.repo, id: 999 };
    expectChecks(h.github, head);
    await h.receive("pull_request", payload);
    h.github.verify();

    const checks = createdChecks(h.github);
    expect(Object.keys(checks).sort()).toEqual([...CHECK_NAMES].sort());
    for (const check of Object.values(checks)) {
      expect(check.conclusion).toBe("failure");
      expect(check.output.title).toBe("Pull request from a fork: Consort cannot gate it");
      expect(check.output.summary).toContain(`push the branch to acme/shop (\`git push origin ${branch}\``);
    }
    // Nothing of a track: no config read, no state written.
    expect(h.github.requests.some((r) => r.path.includes("consort.yml"))).toBe(false);
    expect(state.head).toBeUndefined();
  });
});
