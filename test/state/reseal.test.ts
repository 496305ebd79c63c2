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

describe("re-sealing a tampered state file", () => {
  it("re-signs a file whose signature fails and records who vouched for it", async () => {
    const tampered = fileText(trackState()).replace('"approver": "octo-lead"', '"approver": "octo-deputy"');
    mockRead(github, tampered, sha("b"));
    github.on("PUT", contentsUrl(), putReply(sha("4")));

    const result = await store().reseal(TRACK, "octo-admin", "approved by the deputy in person");

    expect(result).toMatchObject({ outcome: "written", commit: sha("4") });
    github.verify();
    const put = github.calls("PUT", contentsUrl())[0]!.body as { message: string; sha: string; content: string };
    // The write replaces exactly the tampered version that was read (its blob is the compare-and-swap).
    expect([put.message, put.sha]).toEqual([`consort: re-seal ${FILE_PATH} (by octo-admin)`, sha("b")]);
    const content = Buffer.from(put.content, "base64").toString("utf8");
    const resealed = openStateFile(content, KEY, { trackId: TRACK, path: FILE_PATH });
    expect(resealed.snapshot).toMatchObject({
      context: { gates: { design: { approvals: [{ approver: "octo-deputy" }] } } },
    });
    expect(resealed.reseals).toEqual([
      { actor: "octo-admin", at: NOW.toISOString(), reason: "approved by the deputy in person" },
    ]);
  });

  it("leaves a sound file alone", async () => {
    mockRead(github, fileText(trackState()));
    await expect(store().reseal(TRACK, "octo-admin")).resolves.toMatchObject({ outcome: "unchanged" });
    github.verify();
  });

  it("refuses to vouch for content that breaks the schema", async () => {
    const broken = fileText(trackState()).replace('"schemaVersion": 1', '"schemaVersion": 99');
    mockRead(github, broken);
    const error = await store()
      .reseal(TRACK, "octo-admin")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateStoreError);
    expect((error as Error).message).toMatch(
      /Cannot re-seal tracks\/feature-orders\.json: its content breaks the schema \(schemaVersion: Invalid input: expected 1\).*restore the file from the history/,
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
