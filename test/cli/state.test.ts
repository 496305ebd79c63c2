import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { openStateFile } from "../../src/state/index.js";
import { GitHubMock, mockInstallationToken, TEST_APP_ID, testPrivateKey } from "../helpers/github.js";
import {
  contentsReply,
  contentsUrl,
  FILE_PATH,
  fileText,
  KEY,
  putReply,
  sha,
  TRACK,
  trackState,
} from "../state/helpers.js";

let github: GitHubMock;
let out: string[];
let err: string[];
beforeEach(() => {
  github = new GitHubMock();
  out = [];
  err = [];
  vi.stubEnv("GITHUB_TOKEN", "ghp_test");
  vi.stubEnv("CONSORT_STATE_KEY", KEY);
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (err.push(String(chunk)), true));
});
afterEach(() => {
  process.exitCode = undefined;
  github.dispose();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const cli = (...args: string[]) => runCli(["node", "consort", "state", ...args, "--repo", "acme/shop"]);
const me = (login: string) => [200, { login, id: 1, type: "User" }] as [number, unknown];
const installation = { id: 7, account: { login: "acme" }, app_id: TEST_APP_ID };
/** A commit of consort/state as the commit API shows the app's own: its bot the author, signed by GitHub. */
const appCommit = (commit: string) =>
  [
    200,
    {
      sha: commit,
      author: { login: "consort[bot]", id: 9, type: "Bot" },
      commit: { tree: { sha: sha("7") }, verification: { verified: true, reason: "valid" } },
      parents: [{ sha: sha("0") }],
      files: [],
    },
  ] as [number, unknown];

describe("consort state", () => {
  it("show prints a verified state as JSON", async () => {
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState())));
    expect(await cli("show", TRACK, "--json")).toBe(0);
    github.verify();
    expect(JSON.parse(out.join(""))).toEqual(trackState());
  });

  it("show refuses a tampered file, naming what failed and how to re-seal", async () => {
    github.on("GET", contentsUrl(), contentsReply(fileText(trackState()).replace('"octo-lead"', '"sneaky-agent"')));
    expect(await cli("show", TRACK)).toBe(1);
    github.verify();
    expect(err.join("")).toMatch(
      /tracks\/feature-orders\.json on consort\/state is tampered: signature does not match[\s\S]*→ a repository admin can run `npx --no-install consort state reseal feature-orders`/,
    );
  });

  it("show --raw prints a tampered file as stored with what fails, so a maintainer can decide on a re-seal", async () => {
    const text = fileText(trackState()).replace('"octo-lead"', '"octo-deputy"');
    github.on("GET", contentsUrl(), contentsReply(text));
    expect(await cli("show", TRACK, "--raw")).toBe(1);
    github.verify();
    expect(out.join("")).toBe(
      `${text.trimEnd()}\n\nFails verification:\n  - signature does not match the content (edited outside the app, or sealed with another key)\n`,
    );
  });

  it("reseal by an admin restores the last version that verifies, shows the difference and records their login", async () => {
    // The admin is asked for with their token; the write is the app's, the only writer the app trusts.
    vi.stubEnv("APP_ID", String(TEST_APP_ID));
    vi.stubEnv("PRIVATE_KEY", testPrivateKey());
    github
      .on("GET", "/user", me("octo-admin"))
      .on("GET", "/repos/acme/shop/collaborators/octo-admin/permission", [
        200,
        { permission: "admin", role_name: "admin", user: { login: "octo-admin" } },
      ])
      .on("GET", "/repos/acme/shop/installation", [200, installation])
      .on("GET", "/app", [200, { id: TEST_APP_ID, slug: "consort", name: "Consort" }]);
    mockInstallationToken(github, installation.id);
    const sound = fileText(trackState());
    const tampered = sound.replace('"octo-lead"', '"octo-deputy"');
    github.on("GET", "/repos/acme/shop/commits/consort%2Fstate", appCommit(sha("1")));
    github.on("GET", contentsUrl(), contentsReply(tampered));
    github.on("GET", "/repos/acme/shop/commits", [200, [appCommit(sha("1"))[1], appCommit(sha("5"))[1]]]);
    github.on(
      "GET",
      contentsUrl(),
      (r) => (r.query.ref === sha("5") ? contentsReply(sound) : contentsReply(tampered)),
      2,
    );
    github.on("PUT", contentsUrl(), putReply(sha("4"), sha("e"), sha("1")));
    expect(await cli("reseal", TRACK, "--reason", "deputy approval was typed in by hand")).toBe(0);
    github.verify();
    const auths = github.requests.filter((r) => r.method === "PUT").map((r) => r.headers.authorization);
    expect(auths).toEqual(["token ghs_test"]);
    const lines = out.join("").split("\n");
    expect(lines[0]).toBe(`Re-sealed ${FILE_PATH} at 4444444, restoring the version of 5555555:`);
    expect(lines.slice(1, 3).map((l) => l.replace(/\s+/g, " "))).toEqual([
      ' - "approver": "octo-deputy",',
      ' + "approver": "octo-lead",',
    ]);
    const put = github.calls("PUT", contentsUrl())[0]!.body as { content: string };
    const content = Buffer.from(put.content, "base64").toString("utf8");
    expect(content).not.toContain("octo-deputy");
    expect(openStateFile(content, KEY, { trackId: TRACK, path: FILE_PATH }).reseals).toEqual([
      { actor: "octo-admin", at: expect.any(String), reason: "deputy approval was typed in by hand" },
    ]);
  });

  it("reseal without the app's key is refused before anything is written: a commit of the admin's own would be refused by the app", async () => {
    vi.stubEnv("APP_ID", "");
    vi.stubEnv("PRIVATE_KEY", "");
    vi.stubEnv("PRIVATE_KEY_PATH", "");
    github
      .on("GET", "/user", me("octo-admin"))
      .on("GET", "/repos/acme/shop/collaborators/octo-admin/permission", [
        200,
        { permission: "admin", role_name: "admin", user: { login: "octo-admin" } },
      ]);
    expect(await cli("reseal", TRACK)).toBe(1);
    github.verify();
    expect(err.join("")).toContain(
      "consort: npx --no-install consort state reseal runs as the GitHub App, but APP_ID or PRIVATE_KEY is not set\n  → export APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) as the app has them",
    );
  });

  it("reseal by a non-admin is refused before anything is read or written", async () => {
    github
      .on("GET", "/user", me("octo-dev"))
      .on("GET", "/repos/acme/shop/collaborators/octo-dev/permission", [
        200,
        { permission: "write", role_name: "write", user: { login: "octo-dev" } },
      ]);
    expect(await cli("reseal", TRACK)).toBe(1);
    github.verify();
    expect(err.join("")).toContain(
      "consort: octo-dev may not re-seal Consort state: that needs admin permission on the repository (they have write)\n  → ask a repository admin to re-seal",
    );
  });

  it("needs the state key, and says so", async () => {
    vi.stubEnv("CONSORT_STATE_KEY", "");
    expect(await cli("list")).toBe(1);
    expect(err.join("")).toContain("consort: CONSORT_STATE_KEY is not set");
    github.verify();
  });
});
