import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubMock } from "../helpers/github.js";
import {
  assertCanReseal,
  createStateStore,
  openStateFile,
  ResealDeniedError,
  StateStoreError,
} from "../../src/state/index.js";
import {
  COMMITS_URL,
  contentsReply,
  contentsUrl,
  FILE_PATH,
  fileText,
  KEY,
  mockHead,
  mockWrite,
  NOW,
  octokit,
  OWNER,
  refReply,
  REPO,
  sha,
  TRACK,
  trackState,
  TREES_URL,
  UPDATE_REF_URL,
} from "./helpers.js";

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

const store = () => createStateStore({ octokit: octokit(), owner: OWNER, repo: REPO, key: KEY, clock: () => NOW });
const permissionUrl = (user: string) => `/repos/${OWNER}/${REPO}/collaborators/${user}/permission`;
const permissionReply = (permission: string, role: string) =>
  [200, { permission, role_name: role, user: { login: "someone", id: 1 } }] as [number, unknown];

const HISTORY_URL = `/repos/${OWNER}/${REPO}/commits`;

/** The state branch's history of the track's file, newest first: each commit with the file's text there. */
function mockHistory(versions: Array<[commit: string, text: string]>): void {
  github.on("GET", HISTORY_URL, [200, versions.map(([commit]) => ({ sha: commit }))]);
  for (const [commit, text] of versions.slice(1))
    github.on("GET", contentsUrl(), (r) =>
      r.query.ref === commit ? contentsReply(text) : [404, { message: "Not Found" }],
    );
}

describe("re-sealing a tampered state file", () => {
  it("restores the newest earlier version that verifies, shows the difference, and never signs the edited content", async () => {
    const sound = fileText(trackState({ sequence: 4 }));
    const tampered = sound.replace('"approver": "octo-lead"', '"approver": "octo-deputy"');
    mockHead(github, sha("1"), sha("2"), tampered);
    mockHistory([
      [sha("1"), tampered],
      [sha("5"), sound],
    ]);
    mockWrite(github, sha("3"), sha("4"));
    github.on("PATCH", UPDATE_REF_URL, refReply(sha("4")));

    const result = await store().reseal(TRACK, "octo-admin", "the deputy's approval was typed in by hand");

    github.verify();
    expect(result).toMatchObject({ outcome: "written", commit: sha("4"), restoredFrom: sha("5") });
    const difference = result.outcome === "written" ? result.difference : [];
    expect(difference).toHaveLength(2);
    expect(difference[0]).toMatch(/^- +"approver": "octo-deputy",?$/);
    expect(difference[1]).toMatch(/^\+ +"approver": "octo-lead",?$/);
    expect(github.calls("GET", HISTORY_URL)[0]!.query).toEqual({ sha: sha("1"), path: FILE_PATH, per_page: "100" });
    expect(github.calls("POST", COMMITS_URL)[0]!.body).toEqual({
      message: `consort: re-seal ${FILE_PATH} from ${sha("5").slice(0, 7)} (by octo-admin)`,
      tree: sha("3"),
      parents: [sha("1")],
    });
    const content = (github.calls("POST", TREES_URL)[0]!.body as { tree: Array<{ content: string }> }).tree[0]!.content;
    const resealed = openStateFile(content, KEY, { trackId: TRACK, path: FILE_PATH });
    expect(content).not.toContain("octo-deputy");
    expect([resealed.sequence, resealed.previousSeal]).toEqual([5, JSON.parse(sound).signature]);
    expect(resealed.reseals).toEqual([
      { actor: "octo-admin", at: NOW.toISOString(), reason: "the deputy's approval was typed in by hand" },
    ]);
  });

  it("leaves a sound file alone", async () => {
    mockHead(github, sha("1"), sha("2"), fileText(trackState()));
    await expect(store().reseal(TRACK, "octo-admin")).resolves.toMatchObject({ outcome: "unchanged" });
    github.verify();
  });

  it("refuses when no earlier version verifies: it has nothing it sealed itself to restore", async () => {
    const broken = fileText(trackState()).replace('"schemaVersion": 1', '"schemaVersion": 99');
    mockHead(github, sha("1"), sha("2"), broken);
    mockHistory([[sha("1"), broken]]);
    const error = await store()
      .reseal(TRACK, "octo-admin")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateStoreError);
    expect((error as Error).message).toMatch(
      /^Cannot re-seal tracks\/feature-orders\.json: no earlier version on consort\/state verifies with this app's key \(signature does not match.*schema: schemaVersion: Invalid input: expected 1\).*delete tracks\/feature-orders\.json on consort\/state to restart the track/s,
    );
    github.verify();
  });
});

describe("who may re-seal", () => {
  it("lets a repository admin re-seal", async () => {
    github.on("GET", permissionUrl("octo-admin"), permissionReply("admin", "admin"));
    await expect(assertCanReseal(octokit(), OWNER, REPO, "octo-admin")).resolves.toBeUndefined();
    github.verify();
  });

  it("refuses a maintainer, who can write but is not an admin", async () => {
    github.on("GET", permissionUrl("octo-maint"), permissionReply("write", "maintain"));
    const error = await assertCanReseal(octokit(), OWNER, REPO, "octo-maint").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResealDeniedError);
    expect((error as Error).message).toBe(
      "octo-maint may not re-seal Consort state: that needs admin permission on the repository (they have maintain)",
    );
    github.verify();
  });

  it("refuses someone who is not a collaborator at all", async () => {
    github.on("GET", permissionUrl("drive-by"), [404, { message: "Not Found" }]);
    await expect(assertCanReseal(octokit(), OWNER, REPO, "drive-by")).rejects.toThrow(/they have none/);
    github.verify();
  });
});
