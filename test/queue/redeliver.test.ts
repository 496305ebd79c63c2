import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { redeliverFailed } from "../../src/queue/redeliver.js";
import { EXAMPLE } from "../e2e/support/feature.js";
import { GitRepo } from "../e2e/support/git-repo.js";
import { GitHubWorld } from "../e2e/support/github-world.js";

/** On boot the app asks GitHub again for the deliveries that failed before it could store them. */

let world: GitHubWorld | undefined;
afterEach(() => {
  world?.dispose();
  world?.git.remove();
  world = undefined;
});

describe("redelivering failed deliveries on boot", () => {
  it("asks again for each delivery whose every attempt failed and that the queue never stored, and for nothing else", async () => {
    const w = (world = new GitHubWorld(GitRepo.fromDirectory(EXAMPLE, { leaveOut: ["test"] })));
    w.recordDelivery({ guid: "answered", event: "push", statusCode: 202 });
    w.recordDelivery({ guid: "timed-out", event: "push", statusCode: 0 });
    w.recordDelivery({ guid: "crashed", event: "workflow_run", action: "completed", statusCode: 500 });
    w.recordDelivery({ guid: "crashed", event: "workflow_run", action: "completed", statusCode: 502 });
    w.recordDelivery({ guid: "failed-then-answered", event: "push", statusCode: 500 });
    w.recordDelivery({ guid: "failed-then-answered", event: "push", statusCode: 202 });
    w.recordDelivery({ guid: "stored-before-a-crash", event: "push", statusCode: 0 });
    const octokit = new Octokit({ auth: "app-jwt", request: { retries: 0 } });
    const queue = {
      stored: async (ids: readonly string[]) => new Set(ids.filter((id) => id === "stored-before-a-crash")),
    };

    const asked = await redeliverFailed(octokit, queue);

    expect(asked.sort()).toEqual(["crashed", "timed-out"]);
    expect(w.redeliveries.sort()).toEqual(["crashed", "timed-out"]);
    // The newest attempt is the one redelivered.
    const crashed = w.hookDeliveries.filter((d) => d.guid === "crashed").at(-1)!;
    expect(
      w.mock.requests.some((r) => r.method === "POST" && r.path === `/app/hook/deliveries/${crashed.id}/attempts`),
    ).toBe(true);
    expect(w.mock.violations).toEqual([]);
  });
});
