import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubMock, type RecordedRequest } from "../helpers/github.js";
import {
  createStateStore,
  openStateFile,
  sealState,
  serialiseStateFile,
  type TrackState,
} from "../../src/state/index.js";
import { FILE_PATH, KEY, octokit, OWNER, REPO, sha, TRACK, trackState } from "./helpers.js";

/**
 * Several replicas update one track at once against a GitHub double that keeps the Contents API's
 * compare-and-swap for the calls the store makes: a write names the blob sha it replaces and is
 * refused with 409 when the file changed since, so a replica that read an old version loses and
 * must re-read and re-apply. No update is lost.
 */

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

/** A blob's id as git computes it, so a write names exactly the version it read. */
const blobOf = (text: string) =>
  createHash("sha1")
    .update(`blob ${Buffer.byteLength(text)}\0${text}`)
    .digest("hex");

function simulatedRepository(initial: string) {
  let text = initial;
  let commits = 0;
  const contents = `/repos/${OWNER}/${REPO}/contents/${encodeURIComponent(FILE_PATH)}`;
  const body = (r: RecordedRequest) => r.body as { content: string; sha?: string; branch: string };
  github
    .on(
      "GET",
      contents,
      (r) =>
        r.query.ref === "consort/state"
          ? [
              200,
              { type: "file", encoding: "base64", content: Buffer.from(text).toString("base64"), sha: blobOf(text) },
            ]
          : [404, { message: `No commit found for the ref ${r.query.ref ?? ""}` }],
      Infinity,
    )
    .on(
      "PUT",
      contents,
      (r) => {
        if (body(r).branch !== "consort/state") return [422, { message: "the store writes only consort/state" }];
        if (body(r).sha !== blobOf(text)) return [409, { message: `${FILE_PATH} does not match ${body(r).sha}` }];
        text = Buffer.from(body(r).content, "base64").toString("utf8");
        commits += 1;
        return [200, { content: { path: FILE_PATH, sha: blobOf(text) }, commit: { sha: sha(String(commits % 10)) } }];
      },
      Infinity,
    );
  return { fileAtHead: () => text };
}

describe("many replicas, one track", () => {
  it("applies every one of five concurrent deliveries exactly once", async () => {
    const start = trackState({ processedDeliveries: [] });
    const repo = simulatedRepository(serialiseStateFile(sealState(start, KEY)));

    const record =
      (n: number) =>
      (current: TrackState | undefined): TrackState => ({
        ...current!,
        cycles: [
          ...current!.cycles,
          {
            dispatchId: `T${n}-red`,
            runId: 1000 + n,
            step: "red-verify",
            commit: sha("c"),
            verdict: null,
            dispatchedAt: "2026-11-30T06:00:00.000Z",
            completedAt: null,
          },
        ],
      });
    // Each replica has its own client, as separate processes would.
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        createStateStore({
          octokit: octokit(),
          owner: OWNER,
          repo: REPO,
          key: KEY,
          maxAttempts: 10,
          retryDelayMs: 1,
        }).update(TRACK, `delivery-${n}`, record(n)),
      ),
    );

    github.verify();
    expect(results.every((r) => r.outcome === "written")).toBe(true);
    const final = openStateFile(repo.fileAtHead(), KEY, { trackId: TRACK, path: FILE_PATH });
    expect(final.cycles.map((c) => c.dispatchId).sort()).toEqual(["T1-red", "T2-red", "T3-red", "T4-red", "T5-red"]);
    expect([...final.processedDeliveries].sort()).toEqual([
      "delivery-1",
      "delivery-2",
      "delivery-3",
      "delivery-4",
      "delivery-5",
    ]);
    // The races really happened: some replica lost at least once.
    expect(
      github.calls("PUT", `/repos/${OWNER}/${REPO}/contents/${encodeURIComponent(FILE_PATH)}`).length,
    ).toBeGreaterThan(5);
  });
});
