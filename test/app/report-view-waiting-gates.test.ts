import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookPayload } from "../helpers/webhooks.js";
import { createHarness, mockInstallationToken, type Harness } from "../handlers/harness.js";
import { FakeStateBranch, INSTALLATION_ID } from "../handlers/fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  newBranch,
  pullRequestPayload,
  stateOf,
  trackAtGate,
} from "../handlers/scenario.js";

/**
 * The deploy and promote checks while their gates wait: never `success` before a person approved
 * (design §4). Shown as the app shows a track when its PR opens: the check runs it writes on the head.
 */

let h: Harness;
let state: FakeStateBranch;
let branch: string;

beforeEach(() => {
  h = createHarness();
  state = new FakeStateBranch(h.github);
  branch = newBranch();
  mockInstallationToken(h.github, INSTALLATION_ID);
});
afterEach(() => h.github.dispose());

/** The seven checks the app writes on the head of a track at `gate`'s gate when its PR opens. */
async function checksAt(gate: "deploy" | "promote") {
  const track = trackAtGate(branch, gate);
  state.seed(stateOf(branch, track.snapshot));
  const head = track.context.head;
  expectDefaultConfig(h.github);
  expectChecks(h.github, head);
  expectStickyComment(h.github, branch, head);
  await h.receive("pull_request", pullRequestPayload(webhookPayload("pull_request", "opened"), branch, head));
  h.github.verify();
  return { checks: createdChecks(h.github), pending: track.context.gates[gate].pendingHash! };
}

/** The reason line under a gate check's heading, e.g. "### Deploy gate\n\n<reason>". */
const reasonUnder = (summary: string, heading: string) => summary.split(`### ${heading}\n\n`)[1]!.split("\n")[0];

describe("a track waiting at the deploy gate", () => {
  it("shows consort/deploy in progress, waiting for an approval at the release's hash", async () => {
    const { checks, pending } = await checksAt("deploy");
    const deploy = checks["consort/deploy"]!;
    expect([deploy.status, deploy.conclusion, deploy.output.title]).toEqual([
      "in_progress",
      undefined,
      `Waiting for approval at ${pending.slice(0, 7)}`,
    ]);
    expect(reasonUnder(deploy.output.summary, "Deploy gate")).toBe(
      `Waiting for an approving review by an approver at manifest ${pending.slice(0, 12)}.`,
    );
  });

  it("shows consort/promote in progress, not reached yet", async () => {
    const { checks } = await checksAt("deploy");
    const promote = checks["consort/promote"]!;
    expect([promote.status, promote.conclusion, promote.output.title]).toEqual([
      "in_progress",
      undefined,
      "Not reached yet",
    ]);
    expect(reasonUnder(promote.output.summary, "Promote gate")).toBe("The track has not reached the promote gate yet.");
  });
});

describe("a track waiting at the promote gate", () => {
  it("shows consort/promote in progress, waiting for an approval at the release's hash", async () => {
    const { checks, pending } = await checksAt("promote");
    const promote = checks["consort/promote"]!;
    expect([promote.status, promote.conclusion, promote.output.title]).toEqual([
      "in_progress",
      undefined,
      `Waiting for approval at ${pending.slice(0, 7)}`,
    ]);
    expect(reasonUnder(promote.output.summary, "Promote gate")).toBe(
      `Waiting for an approving review by an approver at manifest ${pending.slice(0, 12)}.`,
    );
  });
});
