import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { restoreSnapshot } from "../../src/orchestrator/index.js";
import { expand, keptTexts, openStateFile, trackIdForBranch, trackPath, unsealed } from "../../src/state/index.js";
import { webhookPayload } from "../helpers/webhooks.js";
import { Scenario } from "./support/scenario.js";

/**
 * Identities that cannot collide (issue #14): a branch literally named like another branch's
 * track id (and database branch id) is another track, with its own database branch, and what
 * happens to it never touches the real one.
 */

const s = new Scenario({ branch: `Feature/Stock-Reserve-${randomBytes(3).toString("hex")}` });

beforeAll(async () => {
  await s.createBranch();
}, 120_000);

afterAll(async () => {
  await s.dispose();
});

/** The snapshot of another track's state file on consort/state. */
function snapshotOf(trackId: string) {
  const text = s.world.stateFileText(trackId);
  if (!text) throw new Error(`no state file for ${trackId}`);
  const state = expand(
    unsealed(
      openStateFile(text, "e2e-state-key-0123456789abcdef0123456789abcdef", {
        trackId,
        path: trackPath(trackId),
        repository: s.world.fullName,
      }),
    ),
    keptTexts,
  ).state;
  return { branch: state.branch, snapshot: restoreSnapshot(state.snapshot) };
}

test("a branch named like another branch's track id is its own track, and deleting it abandons only itself", async () => {
  const real = s.snapshot();
  const lookalike = s.trackId;
  expect(lookalike).toMatch(/^feature-stock-reserve-[0-9a-f]{6}-[0-9a-f]{8}$/);

  s.repo.setBranch(lookalike, s.repo.branchHead("main")!);
  await s.deliver("create", {
    ...webhookPayload("create"),
    ...s.payloadBase,
    ref: lookalike,
    ref_type: "branch",
    master_branch: "main",
    pusher_type: "user",
  });
  const other = snapshotOf(trackIdForBranch(lookalike));
  expect(trackIdForBranch(lookalike)).not.toBe(s.trackId);
  expect(other.branch).toBe(lookalike);

  s.repo.deleteBranch(lookalike);
  await s.deliver("delete", {
    ...webhookPayload("delete"),
    ...s.payloadBase,
    ref: lookalike,
    ref_type: "branch",
    pusher_type: "user",
  });

  expect(snapshotOf(trackIdForBranch(lookalike)).snapshot.stage).toBe("abandoned");
  expect(s.snapshot().stage).toBe(real.stage);
  expect(s.world.mock.violations).toEqual([]);
});
