import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stateStoreFor } from "../../src/engine/track.js";
import type { AppServices } from "../../src/app/services.js";
import type { TrackState } from "../../src/state/index.js";
import { GitHubMock } from "../helpers/github.js";
import {
  contentsUrl,
  fileText,
  KEY,
  mockRead,
  octokit,
  OWNER,
  putReply,
  REPO,
  sha,
  TRACK,
  trackState,
} from "../state/helpers.js";

/** The board's open pages learn of a state write from the app's own store at once (src/board). */

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => github.dispose());

function store(told: string[]) {
  const services: AppServices = {
    appId: 1,
    stateKey: KEY,
    clock: () => new Date("2026-11-30T06:00:00.000Z"),
    openProvider: () => Promise.reject(new Error("no database in this test")),
    onStateWritten: (repository) => told.push(repository),
  };
  return stateStoreFor({
    octokit: octokit(),
    services,
    repo: { owner: OWNER, repo: REPO, fullName: `${OWNER}/${REPO}`, defaultBranch: "main" },
  });
}

const touched = (state: TrackState | undefined): TrackState => ({ ...state!, branch: "feature/orders-2" });

describe("the app's state store tells the board of each write", () => {
  it("names the repository once the compare-and-swap has written", async () => {
    mockRead(github, fileText(trackState()), sha("b"));
    github.on("PUT", contentsUrl(), putReply(sha("4")));
    const told: string[] = [];
    await expect(store(told).update(TRACK, "delivery-9", touched)).resolves.toMatchObject({ outcome: "written" });
    github.verify();
    expect(told).toEqual(["acme/shop"]);
  });

  it("says nothing when the delivery was applied before (nothing was written)", async () => {
    mockRead(github, fileText(trackState()), sha("b"));
    const told: string[] = [];
    await expect(store(told).update(TRACK, "delivery-1", touched)).resolves.toMatchObject({
      outcome: "duplicate-delivery",
    });
    github.verify();
    expect(told).toEqual([]);
  });
});
