import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { trackReport } from "../../src/app/report-view.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { renderCheckRuns } from "../../src/report/index.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { type Harness, mockInstallationToken, trackRepo } from "../handlers/harness.js";
import { type FakeStateBranch, INSTALLATION_ID } from "../handlers/fake-repo.js";
import {
  createdChecks,
  expectChecks,
  expectDefaultConfig,
  expectStickyComment,
  pullRequestPayload,
  stateOf,
  trackAtGate,
} from "../handlers/scenario.js";

/**
 * The deploy and promote checks while their gates wait: never `success` before a person approved
 * (design §4). Shown as the app shows a track when its PR opens: a gate waiting for approval is
 * written in progress (it says what to approve); a gate not reached yet only holds a place and is
 * left absent on a head with none of its runs (a missing required check blocks the merge).
 */

let h: Harness;
let state: FakeStateBranch;
let branch: string;

beforeEach(() => {
  ({ h, state, branch } = trackRepo());
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
  it("writes consort/deploy in progress on the head, never success, waiting for an approval at the release's hash", async () => {
    const { written, rendered, pending } = await checksAt("deploy");
    expect([written["consort/deploy"]?.status, written["consort/deploy"]?.conclusion]).toEqual([
      "in_progress",
      undefined,
    ]);
    expect(written["consort/deploy"]?.output.title).toBe(`Waiting for approval at ${pending.slice(0, 7)}`);
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
  it("writes consort/promote in progress on the head, never success, waiting for an approval at the release's hash", async () => {
    const { written, rendered, pending } = await checksAt("promote");
    expect([written["consort/promote"]?.status, written["consort/promote"]?.conclusion]).toEqual([
      "in_progress",
      undefined,
    ]);
    expect(written["consort/promote"]?.output.title).toBe(`Waiting for approval at ${pending.slice(0, 7)}`);
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
