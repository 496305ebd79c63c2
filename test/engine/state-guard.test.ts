import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from "vitest";
import { openAppStore, type AppStore } from "../../src/app-store/app-store.js";
import type { AppServices } from "../../src/app/services.js";
import { stateStoreFor } from "../../src/engine/track.js";
import { unprotectedStateBranch } from "../../src/protect/index.js";
import { seenSequencesIn, type SeenSequences, type TrackState } from "../../src/state/index.js";
import { GitHubMock } from "../helpers/github.js";
import { freshDatabase } from "../helpers/postgres.js";
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

/**
 * The state guard (src/engine/state-guard.ts) checks consort/state's ruleset and recalls the
 * versions the app has seen once per delivery, however often the delivery's handlers open a store
 * and read or write through it, and writes a version back only when it grew: counted here, request
 * by request and query by query, on the real embedded Postgres.
 */

const STATE_RULES = /^\/repos\/acme\/shop\/rules\/branches\/consort(%2F|\/)state$/;
const ALL_RULES = ["creation", "update", "non_fast_forward", "deletion"];
const rulesOnState = (types: string[]) =>
  types.map((type) => ({ type, ruleset_source_type: "Repository", ruleset_source: "acme/shop", ruleset_id: 43 }));

let database: Awaited<ReturnType<typeof freshDatabase>>;
let app: AppStore;
beforeAll(async () => {
  database = await freshDatabase("guard");
  app = await openAppStore(database.url);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

let github: GitHubMock;
beforeEach(async () => {
  github = new GitHubMock();
  await app.pool.query("DELETE FROM public.consort_seen_sequences");
});
afterEach(() => github.dispose());

/** The app's memory of versions, counting what it is asked. */
function countedMemory(): SeenSequences & { recalls: number; remembers: Array<Map<string, number>> } {
  const memory = seenSequencesIn(async () => app);
  const counted = {
    recalls: 0,
    remembers: [] as Array<Map<string, number>>,
    recall: (repository: string) => {
      counted.recalls++;
      return memory.recall(repository);
    },
    remember: (repository: string, sequences: ReadonlyMap<string, number>) => {
      counted.remembers.push(new Map(sequences));
      return memory.remember(repository, sequences);
    },
  };
  return counted;
}

let now = new Date("2026-11-30T06:00:00.000Z");
function services(seenSequences: SeenSequences): AppServices {
  return {
    appId: 1,
    stateKey: KEY,
    clock: () => now,
    openProvider: () => Promise.reject(new Error("no database provider in this test")),
    seenSequences,
    protectedStateBranch: true,
  };
}

/** A store as a handler of the delivery that `client` serves opens it. */
const storeOf = (client: ReturnType<typeof octokit>, app: AppServices) =>
  stateStoreFor({
    octokit: client,
    services: app,
    repo: { owner: OWNER, repo: REPO, fullName: `${OWNER}/${REPO}`, defaultBranch: "main" },
  });

const touched = (state: TrackState | undefined): TrackState => ({ ...state!, branch: "feature/orders-2" });
const remembered = async () =>
  (await app.pool.query<{ key: string; sequence: string }>("SELECT key, sequence FROM public.consort_seen_sequences"))
    .rows;

describe("the state guard, per delivery", () => {
  it("a delivery that reads, writes and reads again asks for the ruleset once, recalls once and remembers only the version that grew", async () => {
    await app.pool.query(
      "INSERT INTO public.consort_seen_sequences (repository, key, sequence) VALUES ('acme/shop', 'acme/shop/feature-orders', 4)",
    );
    const memory = countedMemory();
    const wired = services(memory);
    const delivery = octokit();
    github.on("GET", STATE_RULES, [200, rulesOnState(ALL_RULES)]);
    mockRead(github, fileText(trackState({ sequence: 4 })), sha("b"));
    github.on("PUT", contentsUrl(), putReply(sha("4")));
    mockRead(github, fileText(trackState({ sequence: 5 })), sha("c"));

    // Two handlers of the delivery each open the store, as the push handler and the checks do.
    await expect(storeOf(delivery, wired).read(TRACK)).resolves.toMatchObject({ sequence: 4 });
    await expect(storeOf(delivery, wired).update(TRACK, "delivery-7", touched)).resolves.toMatchObject({
      outcome: "written",
    });
    await expect(storeOf(delivery, wired).read(TRACK)).resolves.toMatchObject({ sequence: 5 });

    github.verify();
    expect(github.calls("GET", STATE_RULES)).toHaveLength(1);
    expect(memory.recalls).toBe(1);
    expect(memory.remembers).toEqual([new Map([["acme/shop/feature-orders", 5]])]);
    expect(await remembered()).toEqual([{ key: "acme/shop/feature-orders", sequence: "5" }]);
  });

  it("the next delivery asks for the ruleset and recalls again", async () => {
    const memory = countedMemory();
    const wired = services(memory);
    github.on("GET", STATE_RULES, [200, rulesOnState(ALL_RULES)], 2);
    mockRead(github, fileText(trackState({ sequence: 2 })), sha("b"));
    mockRead(github, fileText(trackState({ sequence: 2 })), sha("b"));

    await storeOf(octokit(), wired).read(TRACK);
    await storeOf(octokit(), wired).read(TRACK);

    github.verify();
    expect(github.calls("GET", STATE_RULES)).toHaveLength(2);
    expect(memory.recalls).toBe(2);
    // The second delivery recalled version 2 from the first: nothing grew, nothing was written again.
    expect(memory.remembers).toEqual([new Map([["acme/shop/feature-orders", 2]])]);
  });

  it("a refused ruleset check is not kept: the delivery's next call asks again and is refused again", async () => {
    const wired = services(countedMemory());
    const delivery = octokit();
    github.on("GET", STATE_RULES, [200, rulesOnState(["deletion"])], 2);
    const reason = unprotectedStateBranch("acme/shop", ["creation", "update", "non_fast_forward"]);

    await expect(storeOf(delivery, wired).read(TRACK)).rejects.toThrow(reason);
    await expect(storeOf(delivery, wired).read(TRACK)).rejects.toThrow(reason);

    github.verify();
    expect(github.calls("GET", STATE_RULES)).toHaveLength(2);
  });

  it("a delivery trusts its ruleset check for a minute at most", async () => {
    const wired = services(countedMemory());
    const delivery = octokit();
    github.on("GET", STATE_RULES, [200, rulesOnState(ALL_RULES)]);
    github.on("GET", STATE_RULES, [200, rulesOnState(["deletion"])]);
    mockRead(github, fileText(trackState({ sequence: 1 })), sha("b"));
    mockRead(github, fileText(trackState({ sequence: 1 })), sha("b"));

    await storeOf(delivery, wired).read(TRACK);
    now = new Date(now.getTime() + 59_000);
    await storeOf(delivery, wired).read(TRACK);
    now = new Date(now.getTime() + 2_000);
    await expect(storeOf(delivery, wired).read(TRACK)).rejects.toThrow(/is not protected/);

    expect(github.calls("GET", STATE_RULES)).toHaveLength(2);
  });
});
