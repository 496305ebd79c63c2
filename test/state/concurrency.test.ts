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
 * Several replicas update one track at once against a GitHub double that keeps real git
 * semantics for the calls the store makes: a ref moves only by fast-forward, so a replica that
 * read an old head loses the compare-and-swap and must re-read and re-apply. No update is lost.
 */

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

interface Commit {
  tree: string;
  parents: string[];
}

function simulatedRepository(initial: string) {
  const trees = new Map<string, Map<string, string>>();
  const commits = new Map<string, Commit>();
  const id = (value: unknown) =>
    createHash("sha1").update(JSON.stringify(value)).update(String(Math.random())).digest("hex");
  const rootTree = id("root");
  trees.set(rootTree, new Map([[FILE_PATH, initial]]));
  let head = sha("0");
  commits.set(head, { tree: rootTree, parents: [] });
  const body = (r: RecordedRequest) => r.body as Record<string, unknown>;

  github
    .on(
      "GET",
      `/repos/${OWNER}/${REPO}/git/ref/heads%2Fconsort%2Fstate`,
      () => [200, { ref: "refs/heads/consort/state", object: { sha: head, type: "commit" } }],
      Infinity,
    )
    .on(
      "GET",
      /^\/repos\/acme\/shop\/git\/commits\/[0-9a-f]{40}$/,
      (r) => [200, { sha: r.path.split("/").pop(), tree: { sha: commits.get(r.path.split("/").pop()!)!.tree } }],
      Infinity,
    )
    .on(
      "GET",
      /^\/repos\/acme\/shop\/contents\//,
      (r) => {
        const text = trees
          .get(commits.get(r.query.ref!)!.tree)!
          .get(decodeURIComponent(r.path.split("/contents/")[1]!));
        return text === undefined
          ? [404, { message: "Not Found" }]
          : [200, { type: "file", encoding: "base64", content: Buffer.from(text).toString("base64") }];
      },
      Infinity,
    )
    .on(
      "POST",
      `/repos/${OWNER}/${REPO}/git/trees`,
      (r) => {
        const files = new Map(trees.get(body(r).base_tree as string) ?? []);
        for (const entry of body(r).tree as Array<{ path: string; content: string }>)
          files.set(entry.path, entry.content);
        const treeSha = id(files);
        trees.set(treeSha, files);
        return [201, { sha: treeSha }];
      },
      Infinity,
    )
    .on(
      "POST",
      `/repos/${OWNER}/${REPO}/git/commits`,
      (r) => {
        const commitSha = id(body(r));
        commits.set(commitSha, { tree: body(r).tree as string, parents: body(r).parents as string[] });
        return [201, { sha: commitSha }];
      },
      Infinity,
    )
    .on(
      "PATCH",
      `/repos/${OWNER}/${REPO}/git/refs/heads%2Fconsort%2Fstate`,
      (r) => {
        const next = body(r).sha as string;
        if (body(r).force !== false) return [422, { message: "the store must never force" }];
        if (!commits.get(next)!.parents.includes(head)) return [422, { message: "Update is not a fast forward" }];
        head = next;
        return [200, { ref: "refs/heads/consort/state", object: { sha: head, type: "commit" } }];
      },
      Infinity,
    );
  return { fileAtHead: () => trees.get(commits.get(head)!.tree)!.get(FILE_PATH)! };
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
    expect(github.calls("PATCH", `/repos/${OWNER}/${REPO}/git/refs/heads%2Fconsort%2Fstate`).length).toBeGreaterThan(5);
  });
});
