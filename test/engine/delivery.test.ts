import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { type Harness, mockInstallationToken, trackRepo } from "../handlers/harness.js";
import { type FakeStateBranch, inRepo, INSTALLATION_ID } from "../handlers/fake-repo.js";
import { commitSha, createdChecks, expectChecks, simulatedTrack, stateOf } from "../handlers/scenario.js";

/**
 * A delivery that fails before its effects could report anything. GitHub stops waiting after ten
 * seconds (Probot has answered 202 by then), so the delivery's own failure is seen by nobody: the
 * head's checks must say it, and fail (a check that cannot decide never passes).
 */

let h: Harness;
let state: FakeStateBranch;
let branch: string;
const START = commitSha("start");
const NEXT = commitSha("next-step");

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
  state.seed(stateOf(branch, simulatedTrack(branch).snapshot));
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

const push = () => {
  const example = webhookPayload("push");
  return inRepo({
    ...example,
    ref: `refs/heads/${branch}`,
    before: START,
    after: NEXT,
    created: false,
    deleted: false,
    forced: false,
    commits: [
      {
        ...example.head_commit,
        id: NEXT,
        message: "A step\n\nConsort-Role: product-owner\n",
        author: { name: "po", email: "po@example.test", username: "po-bot[bot]" },
        added: [".consort/spec.json"],
        modified: [],
        removed: [],
      },
    ],
  });
};

describe("failures that happen before any effect", () => {
  it("a push whose configuration GitHub cannot serve (502) fails every check on the head with the reason, and the delivery fails", async () => {
    h.github.on("GET", "/repos/acme/shop/contents/.github%2Fconsort.yml", [502, { message: "Server Error" }]);
    expectChecks(h.github, NEXT, CHECK_NAMES.length);
    const before = state.head;

    await expect(h.receive("push", push())).rejects.toThrow("Server Error");
    h.github.verify();

    expect(state.head).toBe(before); // nothing was decided
    const checks = createdChecks(h.github);
    expect(Object.keys(checks)).toEqual([...CHECK_NAMES]);
    for (const check of Object.values(checks)) {
      expect([check.status, check.conclusion, check.output.title]).toEqual([
        "completed",
        "failure",
        "Consort could not process this event",
      ]);
      expect(check.output.summary).toContain("Server Error");
      expect(check.output.summary).toContain("Redeliver the webhook");
    }
  });
});
