import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appBoardSource, BoardChanges } from "../../src/board/app-source.js";
import { boardPage } from "../../src/board/pages.js";
import { GitHubError } from "../../src/github/errors.js";
import { openDeliveryQueue } from "../../src/queue/deliveries.js";
import { freshDatabase } from "../helpers/postgres.js";
import { boardTrack, renamed } from "./fixtures.js";
import { BoardGitHub } from "./github-double.js";

/**
 * What the app's board reads for a signed-in user: a tampered state file is named and left off,
 * and never hides the sound tracks beside it.
 */

const KEY = "board-source-state-key-0123456789abcdef";
let github: BoardGitHub;
beforeEach(async () => {
  github = new BoardGitHub(KEY);
  github.addRepo("acme/shop", { private: true, installationId: 21, readers: ["alice"] });
  github.writeState("acme/shop", renamed(boardTrack("design-gate"), "feature/sound").snapshot);
  github.writeState("acme/shop", renamed(boardTrack("red"), "feature/edited").snapshot);
  github.intercept();
  await github.start(() => "http://127.0.0.1:9/consort/callback");
});
afterEach(async () => {
  github.verify();
  await github.stop();
});

/** Alice's token, through the double's OAuth exchange. */
async function aliceToken(): Promise<string> {
  const authorize = await fetch(`${github.url}/login/oauth/authorize?client_id=${github.clientId}&state=s`, {
    redirect: "manual",
  });
  const code = new URL(authorize.headers.get("location")!).searchParams.get("code")!;
  const exchange = await fetch(`${github.url}/login/oauth/access_token`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ client_id: github.clientId, client_secret: github.clientSecret, code }),
  });
  return ((await exchange.json()) as { access_token: string }).access_token;
}

describe("the app's board source", () => {
  it("leaves a tampered track off with its reason and still shows the sound one", async () => {
    github.tamper("acme/shop", "feature-edited");
    const source = appBoardSource({
      apiUrl: "https://api.github.com",
      stateKey: KEY,
      installationClient: github.installationClient,
      changes: new BoardChanges(),
    });
    const { tracks, problems } = await source.tracks({ login: "alice", token: await aliceToken() });
    expect(tracks.map((t) => t.snapshot.context.trackId)).toEqual(["feature-sound"]);
    expect(problems).toEqual([
      expect.stringMatching(/^acme\/shop: track feature-edited is left off: .*signature does not match the content/),
    ]);
  });
});

describe("the app's failed deliveries on its board", () => {
  it("shows the dead letters of the repositories the viewer reads, with what to do, and no other repository's", async () => {
    // Attack: a dead letter's reason is GitHub's answer about its repository, so a viewer who
    // cannot read acme/secret must not learn of its deliveries from the board.
    github.addRepo("acme/secret", { private: true, installationId: 21, readers: ["bob"] });
    const db = await freshDatabase("board_dead");
    const queue = await openDeliveryQueue({ url: db.url, pollMs: 50 });
    try {
      const lost = (repository: string) => Object.assign(new Error("Not Found"), { status: 404, repository });
      await queue.enqueue({ id: "d-shop", name: "push", payload: { repository: { full_name: "acme/shop" } } });
      await queue.enqueue({ id: "d-secret", name: "push", payload: { repository: { full_name: "acme/secret" } } });
      await queue.work(async (d) => {
        throw GitHubError.from(lost((d.payload.repository as { full_name: string }).full_name));
      });
      const end = Date.now() + 20_000;
      while ((await queue.deadLetters()).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const source = appBoardSource({
        apiUrl: "https://api.github.com",
        stateKey: KEY,
        installationClient: github.installationClient,
        changes: new BoardChanges(),
        deadLetters: () => queue.deadLetters(),
      });
      const { tracks, problems, deadLetters } = await source.tracks({ login: "alice", token: await aliceToken() });
      expect(deadLetters).toMatchObject([
        { id: "d-shop", repository: "acme/shop", event: "push", reason: "404 Not Found" },
      ]);
      const page = boardPage(
        tracks,
        { base: "/consort", viewer: "alice", signOut: true, now: new Date(), events: "/consort/events" },
        {
          mine: false,
          problems,
          deadLetters,
        },
      );
      expect(page).toContain("Deliveries that failed for good");
      expect(page).toContain("<code>consort reconcile --repo acme/shop</code>");
      expect(page).toContain("push delivery <code>d-shop</code>, 1 attempt(s)");
      expect(page).not.toContain("d-secret");
      expect(page).not.toContain("acme/secret");
    } finally {
      await queue.stop();
      await db.drop();
    }
  });
});

describe("a track's consort/schema on the app's board", () => {
  const source = (appId?: number) =>
    appBoardSource({
      apiUrl: "https://api.github.com",
      stateKey: KEY,
      installationClient: github.installationClient,
      changes: new BoardChanges(),
      ...(appId === undefined ? {} : { appId }),
    });
  const sound = async (board: ReturnType<typeof source>) => {
    const { tracks } = await board.tracks({ login: "alice", token: await aliceToken() });
    return tracks.find((t) => t.snapshot.context.trackId === "feature-sound")!;
  };

  it("is never a check of that name another app wrote: only this app's run is shown", async () => {
    const board = source(4242);
    const track = await sound(board);
    github.addCheckRun("acme/shop", track.snapshot.context.head, {
      name: "consort/schema",
      appId: 777,
      conclusion: "success",
      summary: "No schema change (trust me)",
      completedAt: "2026-11-30T10:00:00Z",
    });
    const details = await board.details!(track, { login: "alice" });
    expect(details.schema).toEqual({
      markdown: null,
      conclusion: null,
      source: `the consort/schema check runs on ${track.snapshot.context.head.slice(0, 7)}: none by this app yet (it is written on the track's next update)`,
    });
  });

  it("is not shown at all when the app's id is unknown, and the page says why", async () => {
    const board = source();
    const track = await sound(board);
    github.addCheckRun("acme/shop", track.snapshot.context.head, {
      name: "consort/schema",
      appId: 4242,
      conclusion: "success",
      summary: "### Schema",
      completedAt: "2026-11-30T10:00:00Z",
    });
    const details = await board.details!(track, { login: "alice" });
    expect(details.schema).toBeUndefined();
    expect(details.problems).toContain(
      "The schema diff: APP_ID is not set, so the board cannot tell this app's consort/schema check from another app's.",
    );
  });
});
