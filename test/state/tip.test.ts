import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubMock } from "../helpers/github.js";
import { createStateStore, openStateFile, TamperedStateError } from "../../src/state/index.js";
import { notTheAppsCommit, StateCommit } from "../../src/state/tip.js";
import {
  contentsReply,
  contentsUrl,
  FILE_PATH,
  fileText,
  KEY,
  NOW,
  octokit,
  OWNER,
  putReply,
  REF_URL,
  REPO,
  sha,
  TRACK,
  trackState,
} from "./helpers.js";

/**
 * Whose commit the tip of consort/state is (src/state/tip.ts): the app's own are authored by its
 * bot and signed by GitHub, and a store that knows the bot refuses any other tip, however well
 * sealed the file under it.
 */

const APP = "consort[bot]";
const TIP_URL = `/repos/${OWNER}/${REPO}/commits/consort%2Fstate`;
const commitUrl = (commit: string) => `/repos/${OWNER}/${REPO}/commits/${commit}`;

interface TipOptions {
  login?: string | null;
  verified?: boolean;
  reason?: string;
  parent?: string;
  files?: Array<{ filename: string; sha: string | null; status: string }>;
}

/** GitHub's commit API answer for a commit of consort/state (its shape, trimmed to what is read). */
function commitReply(commit: string, options: TipOptions = {}): [number, unknown] {
  const login = options.login === undefined ? APP : options.login;
  const verified = options.verified ?? true;
  return [
    200,
    {
      sha: commit,
      node_id: "C",
      url: "",
      html_url: "",
      comments_url: "",
      author: login === null ? null : { login, id: 1, type: login.endsWith("[bot]") ? "Bot" : "User" },
      committer: { login: "web-flow", id: 19864447, type: "User" },
      commit: {
        url: "",
        message: "consort: update",
        comment_count: 0,
        author: { name: login ?? "Someone", email: "someone@example.com", date: NOW.toISOString() },
        committer: { name: "GitHub", email: "noreply@github.com", date: NOW.toISOString() },
        tree: { sha: sha("7"), url: "" },
        verification: {
          verified,
          reason: options.reason ?? (verified ? "valid" : "unsigned"),
          signature: null,
          payload: null,
          verified_at: null,
        },
      },
      parents: [{ sha: options.parent ?? sha("0"), url: "" }],
      files: options.files ?? [],
    },
  ];
}

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

const judged = (blobTexts = new Map<string, string>()) =>
  createStateStore({
    octokit: octokit(),
    owner: OWNER,
    repo: REPO,
    key: KEY,
    clock: () => NOW,
    writer: async () => APP,
    blobTexts,
  });

const foreignReason = (commit: string, author: string, signature: string) =>
  `commit ${commit.slice(0, 7)} on consort/state was not written by this app (authored by ${author}, ${signature}; the app's own are authored by ${APP} and signed by GitHub): someone pushed to consort/state past its ruleset`;

describe("whose commit a commit on consort/state is", () => {
  const parse = (reply: [number, unknown]) => StateCommit.parse(reply[1]);

  it("the app's own: authored by its bot and signed by GitHub", () => {
    expect(notTheAppsCommit(parse(commitReply(sha("1"))), APP)).toBeUndefined();
  });

  it("an admin's edit on github.com is signed by GitHub but authored by the admin", () => {
    expect(notTheAppsCommit(parse(commitReply(sha("1"), { login: "octo-admin" })), APP)).toBe(
      foreignReason(sha("1"), "octo-admin", "signed by GitHub"),
    );
  });

  it("a push that gives the bot's e-mail as its author is not signed by GitHub", () => {
    expect(notTheAppsCommit(parse(commitReply(sha("1"), { verified: false })), APP)).toBe(
      foreignReason(sha("1"), APP, "not signed by GitHub (unsigned)"),
    );
  });

  it("an author GitHub maps to no account is named by the commit's author name", () => {
    expect(notTheAppsCommit(parse(commitReply(sha("1"), { login: null, verified: false })), APP)).toBe(
      foreignReason(sha("1"), '"Someone" (no GitHub account)', "not signed by GitHub (unsigned)"),
    );
  });
});

describe("a store that knows the app's bot", () => {
  it("reads the tip, then the file at that commit; a tip naming a blob the process holds costs no second read", async () => {
    const text = fileText(trackState());
    const files = [{ filename: FILE_PATH, sha: sha("b"), status: "modified" }];
    github.on("GET", TIP_URL, commitReply(sha("1"), { files }));
    github.on("GET", contentsUrl(), contentsReply(text, FILE_PATH, sha("b")));
    github.on("GET", TIP_URL, commitReply(sha("1"), { files }));
    const blobs = new Map<string, string>();

    await expect(judged(blobs).read(TRACK)).resolves.toEqual(trackState());
    await expect(judged(blobs).read(TRACK)).resolves.toEqual(trackState());

    github.verify();
    expect(github.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ["GET", TIP_URL, {}],
      ["GET", contentsUrl(), { ref: sha("1") }],
      ["GET", TIP_URL, {}],
    ]);
  });

  it("refuses the app's current, validly sealed file under a tip an admin wrote, naming that commit", async () => {
    github.on("GET", TIP_URL, commitReply(sha("1"), { login: "octo-admin" }));
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState())));

    const refused = await judged()
      .update(TRACK, "delivery-2", (s) => s)
      .catch((e: unknown) => e);

    expect(refused).toBeInstanceOf(TamperedStateError);
    expect((refused as TamperedStateError).problems).toEqual([
      foreignReason(sha("1"), "octo-admin", "signed by GitHub"),
    ]);
    expect((refused as TamperedStateError).commit).toBe(sha("1"));
    github.verify();
    expect(github.requests.map((r) => r.method)).toEqual(["GET", "GET"]);
  });

  it("refuses a missing file under a foreign tip too: deleting a track's file must not end the track", async () => {
    github.on(
      "GET",
      TIP_URL,
      commitReply(sha("1"), { login: "octo-admin", files: [{ filename: FILE_PATH, sha: null, status: "removed" }] }),
    );

    await expect(judged().read(TRACK)).rejects.toMatchObject({
      problems: [foreignReason(sha("1"), "octo-admin", "signed by GitHub")],
      commit: sha("1"),
    });
    github.verify();
  });

  it("judges the commit a write landed on when someone wrote between the read and the write", async () => {
    github.on("GET", TIP_URL, commitReply(sha("1")));
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState())));
    github.on("PUT", contentsUrl(), putReply(sha("4"), sha("e"), sha("2")));
    github.on("GET", commitUrl(sha("2")), commitReply(sha("2"), { login: "octo-admin", verified: false }));

    const refused = await judged()
      .update(TRACK, "delivery-2", (s) => ({ ...s!, branch: "feature/orders-2" }))
      .catch((e: unknown) => e);

    expect((refused as TamperedStateError).problems).toEqual([
      foreignReason(sha("2"), "octo-admin", "not signed by GitHub (unsigned)"),
    ]);
    github.verify();
  });

  it("writes on a commit another replica of the app wrote in between, after one read of it", async () => {
    github.on("GET", TIP_URL, commitReply(sha("1")));
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState())));
    github.on("PUT", contentsUrl(), putReply(sha("4"), sha("e"), sha("2")));
    github.on("GET", commitUrl(sha("2")), commitReply(sha("2")));

    const result = await judged().update(TRACK, "delivery-2", (s) => ({ ...s!, branch: "feature/orders-2" }));

    expect(result).toMatchObject({ outcome: "written", commit: sha("4") });
    github.verify();
  });

  it("re-seal moves the branch back to the app's own last commit (one forced ref update) and re-seals the file there", async () => {
    const mine = fileText(trackState());
    github.on("GET", TIP_URL, commitReply(sha("1"), { login: "octo-admin", parent: sha("2") }));
    github.on("GET", contentsUrl(), contentsReply(mine.replace('"octo-lead"', '"octo-admin"'), FILE_PATH, sha("c")));
    github.on("GET", commitUrl(sha("2")), commitReply(sha("2"), { login: "octo-admin", parent: sha("3") }));
    github.on("GET", commitUrl(sha("3")), commitReply(sha("3"), { parent: sha("0") }));
    github.on("PATCH", REF_URL.replace("/ref/", "/refs/"), [
      200,
      { ref: "refs/heads/consort/state", node_id: "x", url: "", object: { sha: sha("3"), type: "commit", url: "" } },
    ]);
    github.on("GET", contentsUrl(), contentsReply(mine, FILE_PATH, sha("b")));
    github.on("PUT", contentsUrl(), putReply(sha("4"), sha("e"), sha("3")));

    const result = await judged().reseal(TRACK, "octo-admin", "an admin pushed notes");

    expect(result).toMatchObject({ outcome: "written", commit: sha("4"), restoredFrom: sha("3") });
    github.verify();
    expect(github.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ["GET", TIP_URL, {}],
      ["GET", contentsUrl(), { ref: sha("1") }],
      ["GET", commitUrl(sha("2")), {}],
      ["GET", commitUrl(sha("3")), {}],
      ["PATCH", REF_URL.replace("/ref/", "/refs/"), {}],
      ["GET", contentsUrl(), { ref: sha("3") }],
      ["PUT", contentsUrl(), {}],
    ]);
    expect(github.requests[4]!.body).toEqual({ sha: sha("3"), force: true });
    const put = github.requests[6]!.body as { sha: string; content: string; message: string };
    expect(put.sha).toBe(sha("b"));
    expect(put.message).toBe(
      `consort: re-seal ${FILE_PATH} from ${sha("3").slice(0, 7)}, dropping the commits down to ${sha("1").slice(0, 7)} that this app did not write (by octo-admin)`,
    );
    const written = openStateFile(Buffer.from(put.content, "base64").toString("utf8"), KEY, {
      trackId: TRACK,
      path: FILE_PATH,
    });
    expect(written.snapshot).toEqual(trackState().snapshot);
    expect(written.reseals.map((r) => r.actor)).toEqual(["octo-admin"]);
  });

  it("finds no track when GitHub says consort/state has no commit (422), or no such ref (404)", async () => {
    github.on("GET", TIP_URL, [422, { message: "No commit found for SHA: consort/state" }]);
    github.on("GET", TIP_URL, [404, { message: "Not Found" }]);

    await expect(judged().read(TRACK)).resolves.toBeUndefined();
    await expect(judged().read(TRACK)).resolves.toBeUndefined();
    github.verify();
  });

  it("does not take another refusal of the tip's read for a missing branch: it says what GitHub answered", async () => {
    github.on("GET", TIP_URL, [422, { message: "Validation Failed" }]);

    await expect(judged().read(TRACK)).rejects.toThrow("Could not read consort/state of acme/shop: Validation Failed");
    github.verify();
  });
});
