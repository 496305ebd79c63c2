import { Octokit } from "@octokit/rest";
import { Probot } from "probot";
import { afterEach, describe, expect, test } from "vitest";
import { ConsortOctokit } from "../../src/github/throttle.js";
import type { GitHubClient } from "../../src/github/client.js";
import { createStateStore, emptyTrackState, StateStoreError, type TrackState } from "../../src/state/index.js";
import { EXAMPLE } from "../e2e/support/feature.js";
import { GitRepo } from "../e2e/support/git-repo.js";
import { GitHubWorld } from "../e2e/support/github-world.js";
import { TEST_APP_ID, testPrivateKey } from "../helpers/github.js";

/** A StateStoreError as the store throws it, compared by name, message and hint (its cause keeps GitHub's answer). */
function refusal(message: string, hint?: string) {
  const error = new StateStoreError(message, hint);
  return { name: error.name, message: error.message, hint: error.hint };
}

/**
 * How the state store reads each answer GitHub gives to a write on consort/state (issue #33,
 * retries by meaning), against the GitHub double, through two clients: a bare @octokit/rest
 * client without retries, and the app's own (Probot's Octokit with @octokit/plugin-retry on, as
 * `npm start` runs it), whose waits are scaled to milliseconds. A lost compare-and-swap is
 * re-read and re-applied at once, one PUT per attempt; every refusal ends at its first PUT with
 * GitHub's reason and what fixes it.
 */

const KEY = "k".repeat(40);
const TRACK = "feature-orders";
const PATH = `tracks/${TRACK}.json`;
const STATE = "consort/state";

let world: GitHubWorld | undefined;
afterEach(() => {
  world?.dispose();
  world?.git.remove();
  world = undefined;
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const clients: Array<[string, (w: GitHubWorld) => Promise<GitHubClient>]> = [
  ["a client without retries", async () => new Octokit({ auth: "ghs_test", request: { retries: 0 }, log: quiet })],
  [
    "the app's client, with plugin-retry",
    async (w) => {
      const probot = new Probot({
        appId: TEST_APP_ID,
        privateKey: testPrivateKey(),
        logLevel: "fatal",
        Octokit: ConsortOctokit.defaults((o: Record<string, unknown>) => ({
          ...o,
          retry: { ...(o.retry as object), retryAfterBaseValue: 1 },
          throttle: { ...(o.throttle as object), retryAfterBaseValue: 1 },
        })),
      });
      return (await probot.auth(w.installationId)) as unknown as GitHubClient;
    },
  ],
];

/** A world whose consort/state holds the track's first version, and a store on it through `client`. */
async function setUp(client: (w: GitHubWorld) => Promise<GitHubClient>) {
  const w = (world = new GitHubWorld(GitRepo.fromDirectory(EXAMPLE, { leaveOut: ["test"] })));
  const octokit = await client(w);
  const store = createStateStore({ octokit, owner: w.owner, repo: w.name, key: KEY, retryDelayMs: 0 });
  const first = emptyTrackState({
    trackId: TRACK,
    repository: w.fullName,
    branch: "feature/orders",
    snapshot: { value: "spec", context: {} },
    now: new Date("2026-12-03T10:00:00.000Z"),
  });
  await store.update(TRACK, "delivery-1", (current) => current ?? first);
  const puts = () =>
    w.mock.requests.filter((r) => r.method === "PUT" && r.path.endsWith(`/contents/${encodeURIComponent(PATH)}`));
  return { w, store, puts, octokit };
}

/** The change a delivery makes: move the track to step `value`. */
const moveTo =
  (value: string) =>
  (state: TrackState | undefined): TrackState => ({ ...state!, snapshot: { ...(state!.snapshot as object), value } });
const advance = moveTo("architecture");

describe.each(clients)("a write on consort/state, through %s", (_name, client) => {
  for (const status of [409, 422] as const) {
    test(`another write moving the branch itself ("is at X but expected Y", ${status}) is re-read and re-applied at once`, async () => {
      const { w, store, puts } = await setUp(client);
      const before = puts().length;
      w.branchMovesUnderNextWrites(STATE, status);
      const result = await store.update(TRACK, "delivery-2", advance);
      expect(result).toMatchObject({ outcome: "written", attempts: 2 });
      expect(puts().length - before).toBe(2);
      expect(w.mock.violations).toEqual([]);
    });
  }

  test("a file another replica changed first (409 does not match) is re-read and re-applied on the file as it is", async () => {
    const { w, store, puts, octokit } = await setUp(client);
    const other = createStateStore({ octokit, owner: w.owner, repo: w.name, key: KEY, retryDelayMs: 0 });
    let raced = false;
    // Another replica writes the same file between this store's read and its write.
    const racing: GitHubClient = {
      ...octokit,
      rest: {
        ...octokit.rest,
        repos: {
          ...octokit.rest.repos,
          createOrUpdateFileContents: (async (
            params: Parameters<GitHubClient["rest"]["repos"]["createOrUpdateFileContents"]>[0],
          ) => {
            if (!raced) {
              raced = true;
              await other.update(TRACK, "delivery-3", moveTo("db-design"));
            }
            return octokit.rest.repos.createOrUpdateFileContents(params);
          }) as GitHubClient["rest"]["repos"]["createOrUpdateFileContents"],
        },
      },
    };
    const store2 = createStateStore({ octokit: racing, owner: w.owner, repo: w.name, key: KEY, retryDelayMs: 0 });
    void store;
    const before = puts().length;
    const result = await store2.update(TRACK, "delivery-2", advance);
    expect(result).toMatchObject({ outcome: "written", attempts: 2, state: { snapshot: { value: "architecture" } } });
    expect(result.state!.processedDeliveries).toEqual(expect.arrayContaining(["delivery-2", "delivery-3"]));
    // The other replica's write, this store's lost one, and its re-applied one.
    expect(puts().length - before).toBe(3);
    expect(w.mock.violations).toEqual([]);
  });

  test("a ruleset or branch protection refusing the write (409) ends it at once with GitHub's reason", async () => {
    const { w, store, puts } = await setUp(client);
    const before = puts().length;
    w.refuseContentsWrites(STATE, "protection");
    await expect(store.update(TRACK, "delivery-2", advance)).rejects.toMatchObject(
      refusal(
        `Could not write ${PATH} on consort/state of acme/stockflow: GitHub refused it (409: Repository rule violations found\n\nCannot update this protected ref.\n\n): a branch protection rule, a ruleset or push protection blocks the write`,
        "let the Consort app bypass the rules on consort/state (`consort protect` installs the ruleset that does), then redeliver the webhook",
      ),
    );
    expect(puts().length - before).toBe(1);
  });

  test("push protection refusing the write (409) ends it at once with GitHub's reason", async () => {
    const { w, store, puts } = await setUp(client);
    const before = puts().length;
    w.refuseContentsWrites(STATE, "push-protection");
    await expect(store.update(TRACK, "delivery-2", advance)).rejects.toThrow(
      /GitHub refused it \(409: Repository rule violations found\n\nPush cannot contain secrets\.\n\n\)/,
    );
    expect(puts().length - before).toBe(1);
  });

  test("a repository the app lost access to between the read and the write (404) is not retried", async () => {
    const { w, store, puts } = await setUp(client);
    const before = puts().length;
    w.failNext("PUT", /^\/contents\//, [404, { message: "Not Found" }]);
    await expect(store.update(TRACK, "delivery-2", advance)).rejects.toMatchObject(
      refusal(
        `Could not write ${PATH} on consort/state of acme/stockflow: GitHub answered 404: Not Found: the app lost access to the repository, or what it wrote to is gone`,
        "check that the app's installation still covers acme/stockflow, then run `consort reconcile`",
      ),
    );
    expect(puts().length - before).toBe(1);
  });

  test("a write the installation may not make (403) is not retried: the delivery ends naming the permission", async () => {
    const { w, store, puts } = await setUp(client);
    const before = puts().length;
    w.failNext("PUT", /^\/contents\//, [403, { message: "Resource not accessible by integration" }]);
    await expect(store.update(TRACK, "delivery-2", advance)).rejects.toMatchObject(
      refusal(
        `Could not write ${PATH} on consort/state of acme/stockflow: GitHub answered 403: Resource not accessible by integration: the app's installation lacks a permission this needs`,
        "accept the permissions the app asks for (Contents: write) in the installation's settings",
      ),
    );
    expect(puts().length - before).toBe(1);
  });
});
