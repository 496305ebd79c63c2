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
  contentsReply,
  contentsUrl,
  FILE_PATH,
  fileText,
  KEY,
  mockRead,
  NOW,
  octokit,
  OWNER,
  putReply,
  REPO,
  sha,
  TRACK,
  trackState,
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
  const at = new Map(versions);
  github.on(
    "GET",
    contentsUrl(),
    (r) => {
      const text = at.get(r.query.ref ?? "");
      return text === undefined ? [404, { message: "Not Found" }] : contentsReply(text);
    },
    versions.length,
  );
}

describe("re-sealing a tampered state file", () => {
  it("restores the newest earlier version that verifies, shows the difference, and never signs the edited content", async () => {
    const sound = fileText(trackState({ sequence: 4 }));
    const tampered = sound.replace('"approver": "octo-lead"', '"approver": "octo-deputy"');
    mockRead(github, tampered, sha("b"));
    mockHistory([
      [sha("1"), tampered],
      [sha("5"), sound],
    ]);
    github.on("PUT", contentsUrl(), putReply(sha("4")));

    const result = await store().reseal(TRACK, "octo-admin", "the deputy's approval was typed in by hand");

    github.verify();
    expect(result).toMatchObject({ outcome: "written", commit: sha("4"), restoredFrom: sha("5") });
    const difference = result.outcome === "written" ? result.difference : [];
    expect(difference).toHaveLength(2);
    expect(difference[0]).toMatch(/^- +"approver": "octo-deputy",?$/);
    expect(difference[1]).toMatch(/^\+ +"approver": "octo-lead",?$/);
    expect(github.calls("GET", HISTORY_URL)[0]!.query).toEqual({
      sha: "consort/state",
      path: FILE_PATH,
      per_page: "100",
    });
    const put = github.calls("PUT", contentsUrl())[0]!.body as { message: string; sha: string; content: string };
    // The write replaces exactly the tampered version that was read (its blob is the compare-and-swap).
    expect([put.message, put.sha]).toEqual([
      `consort: re-seal ${FILE_PATH} from ${sha("5").slice(0, 7)} (by octo-admin)`,
      sha("b"),
    ]);
    const content = Buffer.from(put.content, "base64").toString("utf8");
    const resealed = openStateFile(content, KEY, { trackId: TRACK, path: FILE_PATH });
    expect(content).not.toContain("octo-deputy");
    expect([resealed.sequence, resealed.previousSeal]).toEqual([5, JSON.parse(sound).signature]);
    expect(resealed.reseals).toEqual([
      { actor: "octo-admin", at: NOW.toISOString(), reason: "the deputy's approval was typed in by hand" },
    ]);
  });

  it("leaves a sound file alone", async () => {
    mockRead(github, fileText(trackState()));
    await expect(store().reseal(TRACK, "octo-admin")).resolves.toMatchObject({ outcome: "unchanged" });
    github.verify();
  });

  it("refuses when no earlier version verifies: it has nothing it sealed itself to restore", async () => {
    const broken = fileText(trackState()).replace('"schemaVersion": 1', '"schemaVersion": 99');
    mockRead(github, broken);
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
