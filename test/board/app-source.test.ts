import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appBoardSource, BoardChanges } from "../../src/board/app-source.js";
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
