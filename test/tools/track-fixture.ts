import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { simpleGit } from "simple-git";
import { expect } from "vitest";
import { type ConsortConfig, type RoleName } from "../../src/config/consort-config.js";
import { readCheckoutConfig } from "../../src/config/load.js";
import { createTrack, transition, type TrackSnapshot } from "../../src/orchestrator/index.js";
import { sanitiseBranchName } from "../../src/substrate/index.js";
import { emptyTrackState, sealState, serialiseStateFile, trackIdForBranch } from "../../src/state/index.js";
import { localPushes } from "../../src/tools/local-push.js";
import { STOCKFLOW, stockflowCheckout, type StockflowCheckout } from "./fixture.js";

export const STATE_KEY = "tools-test-state-key-0123456789abcdef";
export const REPOSITORY = "acme/stockflow";

export interface StockflowTrack {
  checkout: StockflowCheckout;
  trackId: string;
  config: ConsortConfig;
  snapshot: TrackSnapshot;
  /** Commit as `role` with the files given (path → text), like an agent would. */
  commitAs: (role: RoleName | null, subject: string, files: Record<string, string>) => Promise<string>;
  /** Push the checkout's new commits through the real machine, as the app would on a push. */
  push: () => Promise<ReturnType<typeof transition>>;
  /** Write the current snapshot as a bare snapshot file; returns its path. */
  writeSnapshotFile: () => Promise<string>;
  /** Write the current snapshot inside a signed state file (as stored on consort/state); returns its text. */
  signedStateText: (key?: string) => string;
}

let clock = Date.parse("2026-11-30T06:00:00Z");
const tick = () => new Date((clock += 60_000)).toISOString();

/**
 * A StockFlow track driven through the real orchestrator: the Product Owner, Spec Author,
 * Architect, DBA and Test Strategist commit the example's design on the track, a person approves
 * the design and test-list gates, and the track stands at RED for T1.
 */
export async function stockflowTrack(): Promise<StockflowTrack> {
  const checkout = await stockflowCheckout({ designOnTrack: true });
  const git = simpleGit(checkout.path);
  const { config } = readCheckoutConfig(checkout.path);
  const trackId = trackIdForBranch(checkout.branch);
  const head = (await git.revparse(["HEAD"])).trim();
  let snapshot = createTrack(
    {
      trackId,
      branch: checkout.branch,
      baseBranch: "main",
      head,
      databaseBranch: sanitiseBranchName(checkout.branch),
      parentDatabaseBranch: checkout.rootDatabase,
      at: tick(),
    },
    config,
  ).snapshot;

  const commitAs = async (role: RoleName | null, subject: string, files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(checkout.path, path)), { recursive: true });
      await writeFile(join(checkout.path, path), text);
    }
    await git.add(Object.keys(files)).commit(role ? `${subject}\n\nConsort-Role: ${role}` : subject);
    return (await git.revparse(["HEAD"])).trim();
  };
  const push = async () => {
    const pushed = await localPushes(checkout.path, snapshot, config, {
      at: tick(),
      defaultBranch: snapshot.context.baseBranch,
    });
    snapshot = pushed.snapshot;
    return pushed.steps.at(-1)!.result;
  };
  const accept = async () => {
    const result = await push();
    expect(result.rejection?.reasons ?? [], `push at ${result.snapshot.stage}`).toEqual([]);
  };
  const approve = (gate: "design" | "test-list") => {
    const pending = snapshot.context.gates[gate].pendingHash;
    expect(pending, `${gate} gate pending`).toBeTruthy();
    const result = transition(
      snapshot,
      {
        type: "gate.approved",
        at: tick(),
        gate,
        manifestHash: pending!,
        approver: "warehouse-lead",
        reviewId: gate === "design" ? 101 : 102,
        commit: snapshot.context.head,
      },
      config,
    );
    expect(result.rejection?.reasons ?? []).toEqual([]);
    snapshot = result.snapshot;
  };

  const design = async (name: string) => readFile(join(STOCKFLOW, ".consort", name), "utf8");
  const spec = JSON.parse(await design("spec.json")) as Record<string, unknown>;
  const { nfrs: _nfrs, ...stories } = spec;
  await commitAs("product-owner", "Stories and acceptance criteria for F1", {
    ".consort/spec.json": `${JSON.stringify(stories, null, 2)}\n`,
  });
  await accept();
  await commitAs("spec-author", "Spec text and NFRs for F1", { ".consort/spec.json": await design("spec.json") });
  await accept();
  await commitAs("architect", "Layers, modules and persistence invariants", {
    ".consort/architecture.json": await design("architecture.json"),
  });
  await accept();
  await commitAs("dba", "stock_records and its migration plan", {
    ".consort/db-design.json": await design("db-design.json"),
  });
  await accept();
  expect(snapshot.stage).toBe("design-gate");
  approve("design");
  await commitAs("test-strategist", "Test list T1-T8", { ".consort/test-list.json": await design("test-list.json") });
  await accept();
  approve("test-list");
  expect(snapshot.stage).toBe("red");

  return {
    checkout,
    trackId,
    config,
    get snapshot() {
      return snapshot;
    },
    commitAs,
    push,
    writeSnapshotFile: async () => {
      const path = join(checkout.path, "..", `${trackId}-snapshot-${Date.now()}.json`);
      await writeFile(path, JSON.stringify(snapshot, null, 2));
      return path;
    },
    signedStateText: (key = STATE_KEY) =>
      serialiseStateFile(
        sealState(
          emptyTrackState({ trackId, repository: REPOSITORY, branch: checkout.branch, snapshot, now: new Date(clock) }),
          key,
        ),
      ),
  };
}
