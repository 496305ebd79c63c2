import { createHmac } from "node:crypto";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { projectState } from "../../src/engine/projection.js";
import { CONTENTS_INLINE_BYTES, GitHubMock } from "../helpers/github.js";
import { LONG_TRACK_TESTS_PER_UNIT, TrackSim } from "../orchestrator/helpers/track.js";
import {
  createStateStore,
  keyIdOf,
  openStateFile,
  StateConflictError,
  StateStoreError,
  TamperedStateError,
  trackIdForBranch,
  type TrackState,
} from "../../src/state/index.js";
import {
  blobReply,
  COMMITS_URL,
  CREATE_REF_URL,
  contentsReply,
  contentsUrl,
  FILE_PATH,
  fileText,
  KEY,
  mockNoBranch,
  mockRead,
  mockWrite,
  NOW,
  octokit,
  OWNER,
  putReply,
  REF_URL,
  refReply,
  REPO,
  sha,
  TRACK,
  trackState,
  TREES_URL,
  UPDATE_REF_URL,
} from "./helpers.js";

/** A StateStoreError as the store throws it, compared by name, message and hint (its cause keeps GitHub's answer). */
function refusal(message: string, hint?: string) {
  const error = new StateStoreError(message, hint);
  return { name: error.name, message: error.message, hint: error.hint };
}

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

const store = (maxAttempts?: number) =>
  createStateStore({ octokit: octokit(), owner: OWNER, repo: REPO, key: KEY, clock: () => NOW, maxAttempts });

/** The file text of the store's `index`th write: a Contents API PUT, or the tree that starts the branch. */
function writtenText(index = 0): string {
  const writes = github.requests.filter((r) => r.method === "PUT" || (r.method === "POST" && r.path === TREES_URL));
  const write = writes[index]!;
  if (write.method === "PUT")
    return Buffer.from((write.body as { content: string }).content, "base64").toString("utf8");
  return (write.body as { tree: Array<{ content: string }> }).tree[0]!.content;
}

/** Recompute the HMAC independently of the code under test: sorted keys, no whitespace. */
function independentSignature(file: Record<string, unknown>): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  const { signature: _s, ...body } = file;
  return `hmac-sha256:${createHmac("sha256", KEY)
    .update(JSON.stringify(sort(body)))
    .digest("hex")}`;
}

const addCycle = (state: TrackState | undefined): TrackState => ({
  ...state!,
  cycles: [
    ...state!.cycles,
    {
      dispatchId: "T1-red-1",
      runId: null,
      step: "red-verify",
      commit: sha("c"),
      verdict: null,
      dispatchedAt: "2026-11-30T05:59:00.000Z",
      completedAt: null,
    },
  ],
});

describe("reading a track's state", () => {
  it("returns the verified state of a sealed file read from consort/state", async () => {
    const state = trackState();
    github.on("GET", contentsUrl(), contentsReply(fileText(state)));
    await expect(store().read(TRACK)).resolves.toEqual(state);
    github.verify();
    expect(github.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ["GET", contentsUrl(), { ref: "consort/state" }],
    ]);
  });

  it("opens a file written with the old copy of the approvals beside the snapshot, and drops the copy", async () => {
    const state = trackState();
    const old = JSON.parse(fileText(state)) as Record<string, unknown>;
    old.approvals = [
      { gate: "design", user: "octo-lead", reviewId: 80, commit: sha("a"), hash: "d".repeat(64), at: state.updatedAt },
    ];
    old.signature = independentSignature(old);
    github.on("GET", contentsUrl(), contentsReply(JSON.stringify(old)));
    await expect(store().read(TRACK)).resolves.toEqual(state);
    github.verify();
  });

  describe("a long track's file, over the 1 MB a contents read inlines", () => {
    /** The state of a 500-test track at its last unit, as the app projects it: 2.4 MB sealed. */
    let long: TrackState;
    beforeAll(() => {
      const sim = TrackSim.longTrack(500);
      for (let i = 1; i < 500 / LONG_TRACK_TESTS_PER_UNIT; i++) sim.throughUnit();
      long = projectState(trackState(), sim.snapshot);
    });
    const blobUrl = (blob: string) => `/repos/${OWNER}/${REPO}/git/blobs/${blob}`;

    it("is read through its blob, the one call more a file that large costs", async () => {
      const text = fileText(long);
      expect(Buffer.byteLength(text)).toBeGreaterThan(CONTENTS_INLINE_BYTES);
      github.on("GET", contentsUrl(), contentsReply(text, FILE_PATH, sha("b")));
      github.on("GET", blobUrl(sha("b")), blobReply(text, sha("b")));

      await expect(store().read(TRACK)).resolves.toEqual(long);
      github.verify();
      expect(github.requests.map((r) => [r.method, r.path])).toEqual([
        ["GET", contentsUrl()],
        ["GET", blobUrl(sha("b"))],
      ]);
    });

    it("written in full by the earlier version, is migrated on its first update: the compact state and a record per finished unit, in one commit on the tip it was read at", async () => {
      const text = fileText(long);
      const commitUrl = `/repos/${OWNER}/${REPO}/git/commits/${sha("1")}`;
      github.on("GET", contentsUrl(), contentsReply(text, FILE_PATH, sha("b")), 2);
      github.on("GET", blobUrl(sha("b")), blobReply(text, sha("b")), 2);
      github.on("GET", REF_URL, refReply(sha("1")));
      github.on("GET", commitUrl, [
        200,
        { sha: sha("1"), tree: { sha: sha("2") }, parents: [], message: "", url: "", html_url: "", node_id: "C" },
      ]);
      mockWrite(github, sha("3"), sha("4"));
      github.on("PATCH", UPDATE_REF_URL, refReply(sha("4")));

      const result = await store().update(TRACK, "delivery-2", addCycle);

      expect(result).toMatchObject({ outcome: "written", commit: sha("4"), attempts: 1 });
      github.verify();
      // The base read again at the tip the commit goes on: still the file read, so nothing is undone.
      expect(github.requests.find((r) => r.method === "GET" && r.query.ref === sha("1"))).toBeDefined();
      const tree = github.requests.find((r) => r.method === "POST" && r.path === TREES_URL)!.body as {
        base_tree: string;
        tree: Array<{ path: string; content: string }>;
      };
      expect(tree.base_tree).toBe(sha("2"));
      const units = 500 / LONG_TRACK_TESTS_PER_UNIT;
      expect(tree.tree.map((entry) => entry.path)).toEqual([
        ...Array.from({ length: units - 1 }, (_, i) => `tracks/${TRACK}/units/${i + 1}.json`),
        FILE_PATH,
      ]);
      const state = tree.tree.at(-1)!.content;
      expect(Buffer.byteLength(state)).toBeLessThanOrEqual(64 * 1024);
      expect(github.requests.find((r) => r.method === "POST" && r.path === COMMITS_URL)!.body).toMatchObject({
        tree: sha("3"),
        parents: [sha("1")],
      });
      expect(github.requests.at(-1)!.body).toMatchObject({ sha: sha("4"), force: false });
      // What the change asked for is what the app works with: the whole snapshot, and the cycle it added.
      expect(result.state).toMatchObject({ snapshot: long.snapshot, sequence: 1 });
      expect(result.state!.cycles.at(-1)!.dispatchId).toBe("T1-red-1");
    });

    it("whose blob GitHub does not give is not guessed at: the read fails, naming the blob", async () => {
      github.on("GET", contentsUrl(), contentsReply(fileText(long), FILE_PATH, sha("b")));
      github.on("GET", blobUrl(sha("b")), [404, { message: "Not Found" }]);

      await expect(store().read(TRACK)).rejects.toThrow(
        `Could not read the blob ${sha("b").slice(0, 12)} of ${FILE_PATH} on consort/state of ${OWNER}/${REPO}: Not Found`,
      );
    });
  });

  it("returns nothing for a track without a file", async () => {
    github.on("GET", contentsUrl(), [404, { message: "Not Found" }]);
    await expect(store().read(TRACK)).resolves.toBeUndefined();
    github.verify();
  });

  it("treats a file whose content was edited after sealing as tampered, naming the signature", async () => {
    const text = fileText(trackState()).replace('"approver": "octo-lead"', '"approver": "sneaky-agent"');
    github.on("GET", contentsUrl(), contentsReply(text));
    const error = await store()
      .read(TRACK)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TamperedStateError);
    expect((error as TamperedStateError).problems).toEqual([
      "signature does not match the content (edited outside the app, or sealed with another key)",
    ]);
    expect((error as Error).message).toMatch(
      /tracks\/feature-orders\.json.*tampered.*consort state reseal feature-orders/,
    );
    github.verify();
  });

  it("treats a correctly signed file that breaks the schema as tampered, naming the field", async () => {
    // Signed with the real key, so only the schema can catch it: a frozen manifest with no commit.
    const broken = JSON.parse(fileText(trackState())) as Record<string, unknown> & {
      frozen: { gates: { design: Record<string, unknown> } };
    };
    delete broken.frozen.gates.design.commit;
    broken.signature = independentSignature(broken);
    github.on("GET", contentsUrl(), contentsReply(JSON.stringify(broken)));
    const error = (await store()
      .read(TRACK)
      .catch((e: unknown) => e)) as TamperedStateError;
    expect(error).toBeInstanceOf(TamperedStateError);
    expect(error.problems).toEqual([
      "schema: frozen.gates.design.commit: Invalid input: expected string, received undefined",
    ]);
    github.verify();
  });

  it("treats a file sealed with another key as tampered", async () => {
    const other = "another-key-".repeat(4);
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState(), other)));
    await expect(store().read(TRACK)).rejects.toThrow(
      `sealed with state key ${keyIdOf(other)}, which is not this app's key ${keyIdOf(KEY)}: if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has`,
    );
    github.verify();
  });

  it("opens a file sealed with a key retired by a rotation, and the next write seals it with the current key", async () => {
    const retired = "retired-key-".repeat(4);
    mockRead(github, fileText(trackState(), retired));
    github.on("PUT", contentsUrl(), putReply(sha("4")));
    const rotated = createStateStore({
      octokit: octokit(),
      owner: OWNER,
      repo: REPO,
      key: KEY,
      previousKeys: [retired],
      clock: () => NOW,
    });

    await expect(rotated.update(TRACK, "delivery-2", addCycle)).resolves.toMatchObject({ outcome: "written" });

    github.verify();
    const written = openStateFile(writtenText(), KEY, { trackId: TRACK, path: FILE_PATH });
    expect(written.keyId).toBe(keyIdOf(KEY));
    expect(written.cycles.map((c) => c.dispatchId)).toEqual(["T1-red-1"]);
  });

  it("refuses a validly signed file older than the version this app already wrote: the state branch was rolled back", async () => {
    const sequences = new Map<string, number>();
    const replica = () => createStateStore({ octokit: octokit(), owner: OWNER, repo: REPO, key: KEY, sequences });
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState({ sequence: 7 }))));
    await expect(replica().read(TRACK)).resolves.toMatchObject({ sequence: 7 });
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState({ sequence: 6 }))));
    await expect(replica().read(TRACK)).rejects.toThrow(
      "version 6 is older than version 7, which this app already wrote or read: consort/state was rolled back",
    );
    github.verify();
  });

  it("treats a file copied from another track as tampered", async () => {
    const other = trackState({ trackId: "feature-payments" });
    github.on("GET", contentsUrl(), contentsReply(fileText(other)));
    await expect(store().read(TRACK)).rejects.toThrow(
      /trackId is "feature-payments" but the file is for "feature-orders"/,
    );
    github.verify();
  });

  it("treats text that is not JSON as tampered", async () => {
    github.on("GET", contentsUrl(), contentsReply("{ not json"));
    await expect(store().read(TRACK)).rejects.toThrow(/tampered: not valid JSON/);
    github.verify();
  });
});

describe("updating a track's state with compare-and-swap", () => {
  it("writes with one Contents API PUT naming the blob it replaces, recording the delivery id", async () => {
    mockRead(github, fileText(trackState()), sha("b"));
    github.on("PUT", contentsUrl(), putReply(sha("4")));

    const result = await store().update(TRACK, "delivery-2", addCycle);

    expect(result).toMatchObject({ outcome: "written", commit: sha("4"), attempts: 1 });
    github.verify();
    expect(github.requests.map((r) => ({ method: r.method, path: r.path, query: r.query, body: r.body }))).toEqual([
      { method: "GET", path: contentsUrl(), query: { ref: "consort/state" }, body: undefined },
      {
        method: "PUT",
        path: contentsUrl(),
        query: {},
        body: {
          message: `consort: update ${FILE_PATH} (delivery delivery-2)`,
          content: expect.any(String),
          branch: "consort/state",
          sha: sha("b"),
        },
      },
    ]);

    const written = JSON.parse(writtenText()) as Record<string, unknown>;
    expect(written.signature).toBe(independentSignature(written));
    expect(written).toEqual({
      ...trackState(),
      cycles: [
        {
          dispatchId: "T1-red-1",
          runId: null,
          step: "red-verify",
          commit: sha("c"),
          verdict: null,
          dispatchedAt: "2026-11-30T05:59:00.000Z",
          completedAt: null,
        },
      ],
      processedDeliveries: ["delivery-1", "delivery-2"],
      updatedAt: NOW.toISOString(),
      // The first versioned write of a file that had no version: it chains to the seal it replaced.
      sequence: 1,
      previousSeal: (JSON.parse(fileText(trackState())) as { signature: string }).signature,
      signature: written.signature,
    });
  });

  it("re-reads and re-applies the change when another replica changed the file first (GitHub answers 409)", async () => {
    // Replica B recorded its own cycle between our read and our write.
    const theirs = addCycle(trackState());
    theirs.cycles[0]!.dispatchId = "T1-red-by-b";
    theirs.processedDeliveries = ["delivery-1", "delivery-b"];
    mockRead(github, fileText(trackState()), sha("b"));
    github.on("PUT", contentsUrl(), [
      409,
      {
        message: `${FILE_PATH} does not match ${sha("b")}`,
        documentation_url: "https://docs.github.com/rest/repos/contents#create-or-update-file-contents",
      },
    ]);
    mockRead(github, fileText(theirs), sha("c"));
    github.on("PUT", contentsUrl(), putReply(sha("8")));

    const seen: Array<string[]> = [];
    const result = await store().update(TRACK, "delivery-2", (current) => {
      seen.push(current!.cycles.map((c) => c.dispatchId));
      return addCycle(current);
    });

    expect(result).toMatchObject({ outcome: "written", commit: sha("8"), attempts: 2 });
    expect(seen).toEqual([[], ["T1-red-by-b"]]);
    github.verify();
    expect(github.calls("PUT", contentsUrl()).map((r) => (r.body as { sha: string }).sha)).toEqual([
      sha("b"),
      sha("c"),
    ]);
    const second = openStateFile(writtenText(1), KEY, { trackId: TRACK, path: FILE_PATH });
    expect(second.cycles.map((c) => c.dispatchId)).toEqual(["T1-red-by-b", "T1-red-1"]);
    expect(second.processedDeliveries).toEqual(["delivery-1", "delivery-b", "delivery-2"]);
  });

  it("gives up with a clear error after losing the compare-and-swap every time", async () => {
    for (const blob of ["1", "2"]) {
      mockRead(github, fileText(trackState()), sha(blob));
      github.on("PUT", contentsUrl(), [409, { message: `${FILE_PATH} does not match ${sha(blob)}` }]);
    }
    const error = await store(2)
      .update(TRACK, "delivery-2", addCycle)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateConflictError);
    expect((error as Error).message).toBe(
      "Could not write tracks/feature-orders.json: consort/state moved under every one of 2 attempts (compare-and-swap lost). The event was not applied; redeliver the webhook or run `consort reconcile`.",
    );
    github.verify();
    expect(github.calls("PUT", contentsUrl())).toHaveLength(2);
  });

  describe("a read and the update that follows it in one delivery (one client)", () => {
    const oneClient = () =>
      createStateStore({ octokit: octokit(), owner: OWNER, repo: REPO, key: KEY, clock: () => NOW });

    it("reads the file once: the update starts from what the read found and names its blob", async () => {
      mockRead(github, fileText(trackState()), sha("b"));
      github.on("PUT", contentsUrl(), putReply(sha("4")));
      const delivery = oneClient();

      expect(await delivery.read(TRACK)).toEqual(trackState());
      const result = await delivery.update(TRACK, "delivery-2", addCycle);

      expect(result).toMatchObject({ outcome: "written", commit: sha("4"), attempts: 1 });
      github.verify();
      expect(github.requests.map((r) => r.method)).toEqual(["GET", "PUT"]);
      expect((github.calls("PUT", contentsUrl())[0]!.body as { sha: string }).sha).toBe(sha("b"));
    });

    it("a file changed since the read: GitHub refuses the write (409), and the change is applied again on the file as it is", async () => {
      const theirs = addCycle(trackState());
      theirs.cycles[0]!.dispatchId = "T1-red-by-b";
      theirs.processedDeliveries = ["delivery-1", "delivery-b"];
      mockRead(github, fileText(trackState()), sha("b"));
      github.on("PUT", contentsUrl(), [409, { message: `${FILE_PATH} does not match ${sha("b")}` }]);
      mockRead(github, fileText(theirs), sha("c"));
      github.on("PUT", contentsUrl(), putReply(sha("8")));
      const delivery = oneClient();

      await delivery.read(TRACK);
      const result = await delivery.update(TRACK, "delivery-2", addCycle);

      expect(result).toMatchObject({ outcome: "written", commit: sha("8"), attempts: 2 });
      github.verify();
      expect(github.requests.map((r) => r.method)).toEqual(["GET", "PUT", "GET", "PUT"]);
      const second = openStateFile(writtenText(1), KEY, { trackId: TRACK, path: FILE_PATH });
      expect(second.cycles.map((c) => c.dispatchId)).toEqual(["T1-red-by-b", "T1-red-1"]);
    });

    it("an update that would write nothing from the remembered read reads the file again before it says so", async () => {
      // Another replica applied this delivery between the read and the update: only a fresh read knows.
      const applied = { ...trackState(), processedDeliveries: ["delivery-1", "delivery-2"] };
      mockRead(github, fileText(trackState()), sha("b"));
      mockRead(github, fileText(applied), sha("c"));
      const delivery = oneClient();

      await delivery.read(TRACK);
      const result = await delivery.update(TRACK, "delivery-2", (current) => current);

      expect(result).toEqual({ outcome: "duplicate-delivery", state: applied, attempts: 1 });
      github.verify();
      expect(github.requests.map((r) => r.method)).toEqual(["GET", "GET"]);
    });

    it("an update that asked for no change leaves its read for the next update of the delivery, which writes on it", async () => {
      mockRead(github, fileText(trackState()), sha("b"));
      github.on("PUT", contentsUrl(), putReply(sha("4")));
      const delivery = oneClient();

      // The push handler asks first, learns it must read more from GitHub, then asks again.
      expect((await delivery.update(TRACK, "delivery-2", () => undefined)).outcome).toBe("unchanged");
      const result = await delivery.update(TRACK, "delivery-2", addCycle);

      expect(result).toMatchObject({ outcome: "written", commit: sha("4"), attempts: 1 });
      github.verify();
      expect(github.requests.map((r) => r.method)).toEqual(["GET", "PUT"]);
    });

    it("another client (another delivery) does not start from this one's read", async () => {
      mockRead(github, fileText(trackState()), sha("b"));
      mockRead(github, fileText(trackState()), sha("b"));
      github.on("PUT", contentsUrl(), putReply(sha("4")));

      await oneClient().read(TRACK);
      await oneClient().update(TRACK, "delivery-2", addCycle);

      github.verify();
      expect(github.requests.map((r) => r.method)).toEqual(["GET", "GET", "PUT"]);
    });
  });

  it("writes nothing for a redelivered webhook whose delivery id was already applied", async () => {
    mockRead(github, fileText(trackState()));
    let called = false;
    const result = await store().update(TRACK, "delivery-1", (current) => {
      called = true;
      return addCycle(current);
    });
    expect(result).toEqual({ outcome: "duplicate-delivery", state: trackState(), attempts: 1 });
    expect(called).toBe(false);
    github.verify();
    expect(github.requests.map((r) => r.method)).toEqual(["GET"]);
  });

  it("writes nothing when the change leaves the state as it was", async () => {
    mockRead(github, fileText(trackState()));
    const result = await store().update(TRACK, "delivery-2", (current) => current);
    expect(result.outcome).toBe("unchanged");
    github.verify();
    expect(github.requests).toHaveLength(1);
  });

  it("refuses to advance a tampered track and writes nothing, naming the commit it read", async () => {
    const text = fileText(trackState()).replace('"value": "designGate"', '"value": "done"');
    mockRead(github, text);
    github.on("GET", REF_URL, refReply(sha("1")));
    const error = (await store()
      .update(TRACK, "delivery-2", addCycle)
      .catch((e: unknown) => e)) as TamperedStateError;
    expect(error).toBeInstanceOf(TamperedStateError);
    expect(error.commit).toBe(sha("1"));
    github.verify();
    expect(github.calls("PUT", contentsUrl())).toHaveLength(0);
  });

  it("creates a new track's file with a PUT naming no blob", async () => {
    mockRead(github, undefined);
    github.on("PUT", contentsUrl(), putReply(sha("4")));
    const initial = trackState({ processedDeliveries: [] });
    const result = await store().update(TRACK, "delivery-create", (current) => current ?? initial);
    expect(result).toMatchObject({ outcome: "written", commit: sha("4"), attempts: 1 });
    github.verify();
    expect(github.calls("PUT", contentsUrl())[0]!.body).not.toHaveProperty("sha");
  });

  it("retries when another replica created the same track's file at the same moment (GitHub answers 422: no sha)", async () => {
    mockRead(github, undefined);
    github.on("PUT", contentsUrl(), [422, { message: 'Invalid request.\n\n"sha" wasn\'t supplied.' }]);
    mockRead(github, fileText(trackState()), sha("b"));
    github.on("PUT", contentsUrl(), putReply(sha("8")));
    const result = await store().update(TRACK, "delivery-create", (current) => addCycle(current ?? trackState()));
    expect(result).toMatchObject({ outcome: "written", commit: sha("8"), attempts: 2 });
    github.verify();
    expect((github.calls("PUT", contentsUrl())[1]!.body as { sha: string }).sha).toBe(sha("b"));
  });

  it("creates consort/state as a root commit when the branch is missing", async () => {
    mockNoBranch(github);
    mockWrite(github, sha("3"), sha("4"));
    github.on("POST", CREATE_REF_URL, [
      201,
      { ref: "refs/heads/consort/state", node_id: "x", url: "", object: { sha: sha("4"), type: "commit", url: "" } },
    ]);

    const initial = trackState({ processedDeliveries: [] });
    const result = await store().update(TRACK, "delivery-create", (current) =>
      current === undefined ? initial : current,
    );

    expect(result).toMatchObject({ outcome: "written", commit: sha("4") });
    github.verify();
    expect(github.requests.map((r) => ({ method: r.method, path: r.path, body: r.body }))).toEqual([
      { method: "GET", path: contentsUrl(), body: undefined },
      {
        method: "POST",
        path: TREES_URL,
        body: { tree: [{ path: FILE_PATH, mode: "100644", type: "blob", content: expect.any(String) }] },
      },
      {
        method: "POST",
        path: COMMITS_URL,
        body: { message: `consort: start ${FILE_PATH} (delivery delivery-create)`, tree: sha("3"), parents: [] },
      },
      { method: "POST", path: CREATE_REF_URL, body: { ref: "refs/heads/consort/state", sha: sha("4") } },
    ]);
    expect(openStateFile(writtenText(), KEY, { trackId: TRACK, path: FILE_PATH }).processedDeliveries).toEqual([
      "delivery-create",
    ]);
  });

  it("retries when another replica created the branch at the same moment", async () => {
    mockNoBranch(github);
    mockWrite(github, sha("3"), sha("4"));
    github.on("POST", CREATE_REF_URL, [422, { message: "Reference already exists" }]);
    mockRead(github, undefined);
    github.on("PUT", contentsUrl(), putReply(sha("8")));

    const result = await store().update(
      TRACK,
      "delivery-create",
      (current) => current ?? trackState({ processedDeliveries: [] }),
    );
    expect(result).toMatchObject({ outcome: "written", commit: sha("8"), attempts: 2 });
    github.verify();
  });

  it("does not retry a write GitHub refuses for another reason, and says what it refused", async () => {
    mockRead(github, fileText(trackState()));
    github.on("PUT", contentsUrl(), [422, { message: "path cannot start with a slash" }]);
    await expect(store().update(TRACK, "delivery-2", addCycle)).rejects.toMatchObject(
      refusal(
        `Could not write ${FILE_PATH} on consort/state of ${OWNER}/${REPO}: GitHub answered 422: path cannot start with a slash`,
      ),
    );
    github.verify();
    expect(github.calls("PUT", contentsUrl())).toHaveLength(1);
  });

  it("refuses to write a state the schema rejects, before any write", async () => {
    mockRead(github, fileText(trackState()));
    await expect(store().update(TRACK, "delivery-2", (current) => ({ ...current!, branch: "" }))).rejects.toThrow(
      /Refusing to write an invalid state for track feature-orders: branch: Too small/,
    );
    github.verify();
    expect(github.requests).toHaveLength(1);
  });
});

describe("listing tracks", () => {
  it("lists the track files under tracks/ on consort/state", async () => {
    github.on("GET", REF_URL, refReply(sha("1")));
    github.on("GET", `/repos/${OWNER}/${REPO}/git/commits/${sha("1")}`, [
      200,
      { sha: sha("1"), tree: { sha: sha("2") } },
    ]);
    github.on("GET", `/repos/${OWNER}/${REPO}/git/trees/${sha("2")}`, [
      200,
      { sha: sha("2"), truncated: false, tree: [{ path: "tracks", type: "tree", sha: sha("9"), mode: "040000" }] },
    ]);
    github.on("GET", `/repos/${OWNER}/${REPO}/git/trees/${sha("9")}`, [
      200,
      {
        sha: sha("9"),
        truncated: false,
        tree: [
          { path: "feature-payments.json", type: "blob", sha: sha("a"), mode: "100644" },
          { path: "feature-orders.json", type: "blob", sha: sha("b"), mode: "100644" },
          { path: "README.md", type: "blob", sha: sha("c"), mode: "100644" },
        ],
      },
    ]);
    await expect(store().list()).resolves.toEqual(["feature-orders", "feature-payments"]);
    github.verify();
  });

  it("lists nothing when the state branch does not exist yet", async () => {
    github.on("GET", REF_URL, [404, { message: "Not Found" }]);
    await expect(store().list()).resolves.toEqual([]);
    github.verify();
  });
});

describe("track ids", () => {
  it("keeps a simple branch name and makes others filename-safe without collisions", () => {
    expect(trackIdForBranch("orders")).toBe("orders");
    expect(trackIdForBranch("feature/Orders")).toMatch(/^feature-orders-[0-9a-f]{8}$/);
    expect(trackIdForBranch("feature/orders")).not.toBe(trackIdForBranch("feature-orders"));
    expect(trackIdForBranch("../../etc")).toMatch(/^etc-[0-9a-f]{8}$/);
    // A branch literally named like another branch's hashed id is another track.
    const hashed = trackIdForBranch("Feature/Stock-Reserve");
    expect(hashed).toMatch(/^feature-stock-reserve-[0-9a-f]{8}$/);
    expect(trackIdForBranch(hashed)).toMatch(new RegExp(`^${hashed}-[0-9a-f]{8}$`));
    expect(trackIdForBranch("Feat-Stock")).not.toBe(trackIdForBranch("feat/stock"));
  });
});

describe("the clients the store accepts", () => {
  it("reads through a Probot installation client as well as @octokit/rest", async () => {
    const { ProbotOctokit } = await import("probot");
    const client = new ProbotOctokit({
      auth: { token: "ghs_test" },
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState())));
    const probotStore = createStateStore({ octokit: client, owner: OWNER, repo: REPO, key: KEY });
    await expect(probotStore.read(TRACK)).resolves.toEqual(trackState());
    github.verify();
  });
});
