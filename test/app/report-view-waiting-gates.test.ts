import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { trackReport } from "../../src/app/report-view.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { renderCheckRuns } from "../../src/report/index.js";
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
 * (design §4). Shown as the app shows a track when its PR opens: on a head with none of its runs,
 * a waiting check is left absent (a missing required check blocks the merge), and what it would
 * say is what the view renders for it.
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

/** The checks the app writes on the head of a track at `gate`'s gate when its PR opens, and all seven as rendered. */
async function checksAt(gate: "deploy" | "promote") {
  const track = trackAtGate(branch, gate);
  state.seed(stateOf(branch, track.snapshot));
  const head = track.context.head;
  expectDefaultConfig(h.github);
  expectChecks(h.github, head);
  expectStickyComment(h.github, branch, head);
  await h.receive("pull_request", pullRequestPayload(webhookPayload("pull_request", "opened"), branch, head));
  h.github.verify();
  const report = trackReport({
    repository: "acme/shop",
    snapshot: track.snapshot,
    headSha: head,
    config: defaultConfig(),
  });
  const rendered = Object.fromEntries(renderCheckRuns(report).map((r) => [r.name, r]));
  return { written: createdChecks(h.github), rendered, pending: track.context.gates[gate].pendingHash! };
}

/** The reason line under a gate check's heading, e.g. "### Deploy gate\n\n<reason>". */
const reasonUnder = (summary: string, heading: string) => summary.split(`### ${heading}\n\n`)[1]!.split("\n")[0];

describe("a track waiting at the deploy gate", () => {
  it("leaves consort/deploy absent on the head, never success, and renders it waiting for an approval at the release's hash", async () => {
    const { written, rendered, pending } = await checksAt("deploy");
    expect(written["consort/deploy"]).toBeUndefined();
    const deploy = rendered["consort/deploy"]!;
    expect([deploy.status, "conclusion" in deploy, deploy.output.title]).toEqual([
      "in_progress",
      false,
      `Waiting for approval at ${pending.slice(0, 7)}`,
    ]);
    expect(reasonUnder(deploy.output.summary, "Deploy gate")).toBe(
      `Waiting for an approving review by an approver at manifest ${pending.slice(0, 12)}.`,
    );
  });

  it("leaves consort/promote absent on the head and renders it not reached yet", async () => {
    const { written, rendered } = await checksAt("deploy");
    expect(written["consort/promote"]).toBeUndefined();
    const promote = rendered["consort/promote"]!;
    expect([promote.status, "conclusion" in promote, promote.output.title]).toEqual([
      "in_progress",
      false,
      "Not reached yet",
    ]);
    expect(reasonUnder(promote.output.summary, "Promote gate")).toBe("The track has not reached the promote gate yet.");
  });
});

describe("a track waiting at the promote gate", () => {
  it("leaves consort/promote absent on the head, never success, and renders it waiting for an approval at the release's hash", async () => {
    const { written, rendered, pending } = await checksAt("promote");
    expect(written["consort/promote"]).toBeUndefined();
    const promote = rendered["consort/promote"]!;
    expect([promote.status, "conclusion" in promote, promote.output.title]).toEqual([
      "in_progress",
      false,
      `Waiting for approval at ${pending.slice(0, 7)}`,
    ]);
    expect(reasonUnder(promote.output.summary, "Promote gate")).toBe(
      `Waiting for an approving review by an approver at manifest ${pending.slice(0, 12)}.`,
    );
  });
});
