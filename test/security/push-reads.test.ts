import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { frozenCheckPending, verifiedPush, withFrozenAtHead, type VerifiedPush } from "../../src/push/read.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { classifyCommit } from "../../src/roles/classify.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { GitHubMock } from "../helpers/github.js";
import { octokit } from "../state/helpers.js";
import { githubSource } from "../../src/push/github.js";

/**
 * The push verification reads less than a file a changed path (src/push/read.ts): production
 * code is judged from the compare's diff, and the tree at the head is not read when the compare
 * shows no path a frozen file may be at changed. Each shortcut is tried here the way an adversary
 * would: a change the diff does not show whole must be read whole and refused, and a push the
 * compare cannot vouch for must have its tree read.
 */

const BEFORE = "a".repeat(40);
const AFTER = "c".repeat(40);
const PATH = "src/services/stock.ts";
const config = defaultConfig();
const IMPORTS_VITEST = `${PATH} imports the test framework "vitest" into production code: code under paths.code must not reach into the test run (it could make a test pass from inside); keep test helpers under paths.tests`;

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

interface Listed {
  filename: string;
  status: string;
  patch?: string;
  previous_filename?: string;
}

/** GitHub's compare of a one-commit push from BEFORE to AFTER (its shape, trimmed to what is read). */
function compareAnswers(files: Listed[] | undefined): void {
  github.on("GET", `/repos/acme/shop/compare/${BEFORE}...${AFTER}`, [
    200,
    {
      status: "ahead",
      ahead_by: 1,
      behind_by: 0,
      total_commits: 1,
      base_commit: { sha: BEFORE, commit: { tree: { sha: "b".repeat(40) } } },
      merge_base_commit: { sha: BEFORE },
      commits: [
        {
          sha: AFTER,
          parents: [{ sha: BEFORE }],
          author: { login: "driver-bot[bot]" },
          commit: { message: "GREEN T2\n\nConsort-Role: driver\n", tree: { sha: "d".repeat(40) } },
        },
      ],
      ...(files ? { files: files.map((f) => ({ sha: "e".repeat(40), ...f })) } : {}),
    },
  ]);
}

function fileReadAnswers(path: string, text: string): void {
  github.on("GET", `/repos/acme/shop/contents/${encodeURIComponent(path)}?ref=${AFTER}`, [
    200,
    { type: "file", encoding: "base64", content: Buffer.from(text).toString("base64"), sha: "f".repeat(40) },
  ]);
}

function treeAnswers(entries: Record<string, string>): void {
  github.on("GET", `/repos/acme/shop/git/trees/${AFTER}?recursive=1`, [
    200,
    {
      sha: "d".repeat(40),
      truncated: false,
      tree: Object.entries(entries).map(([path, sha]) => ({ path, mode: "100644", type: "blob", sha })),
    },
  ]);
}

const push = (modified: string[]) =>
  verifiedPush({
    source: githubSource({ octokit: octokit(), owner: "acme", repo: "shop" }),
    before: BEFORE,
    after: AFTER,
    payload: [
      {
        id: AFTER,
        message: "GREEN T2\n\nConsort-Role: driver\n",
        author: { username: "driver-bot[bot]" },
        added: [],
        removed: [],
        modified,
      },
    ],
    defaultBranch: "main",
    config,
  });

/** What the production-code rule says of the pushed commit at GREEN. */
function refusals(verified: VerifiedPush): string[] {
  const commit = verified.commits[0]!;
  return classifyCommit({
    commit,
    stage: "green",
    unit: "T2",
    config,
    frozen: { gated: {}, tests: {}, runnerConfig: false },
    pusher: "driver-bot[bot]",
  }).reasons;
}

describe("production code judged from the compare's diff", () => {
  test("a test import the diff shows is refused, and the file is not read", async () => {
    compareAnswers([
      {
        filename: PATH,
        status: "modified",
        patch:
          '@@ -1,2 +1,3 @@\n import { db } from "../db.js";\n+import { vi } from "vitest";\n export const stock = () => db;',
      },
    ]);
    const verified = await push([PATH]);
    github.verify();
    expect(refusals(verified)).toEqual([`${AFTER.slice(0, 7)}: ${IMPORTS_VITEST}`]);
    expect(github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /repos/acme/shop/compare/${BEFORE}...${AFTER}`,
    ]);
  });

  test("a module path an earlier step left open above the hunk, closed by this one, is read whole and refused", async () => {
    // Step one left `from "vitest/\` with continuation lines at the end of the file (no quote after
    // it, so the whole file passed); this step adds the closing quote three lines below.
    const whole =
      'import { db } from "../db.js";\nimport { vi } from "vitest/\\\n\\\n\\\n\\\nx";\nexport const stock = () => db;\n';
    compareAnswers([
      {
        filename: PATH,
        status: "modified",
        patch: '@@ -3,3 +3,5 @@\n \\\n \\\n \\\n+x";\n+export const stock = () => db;',
      },
    ]);
    fileReadAnswers(PATH, whole);
    const verified = await push([PATH]);
    github.verify();
    expect(refusals(verified)).toEqual([`${AFTER.slice(0, 7)}: ${IMPORTS_VITEST}`]);
  });

  test("a `from` this step ends a hunk with, whose module is below the hunk, is read whole and refused", async () => {
    const whole =
      'import { db } from "../db.js";\nimport { vi } from\n\n\n\n\n"vitest";\nexport const stock = () => db;\n';
    compareAnswers([
      {
        filename: PATH,
        status: "modified",
        patch: '@@ -1,4 +1,5 @@\n import { db } from "../db.js";\n+import { vi } from\n \n \n ',
      },
    ]);
    fileReadAnswers(PATH, whole);
    const verified = await push([PATH]);
    github.verify();
    expect(refusals(verified)).toEqual([`${AFTER.slice(0, 7)}: ${IMPORTS_VITEST}`]);
  });

  test.each<[string, Listed]>([
    ["without a patch (binary, or too big for GitHub to show)", { filename: PATH, status: "modified" }],
    [
      "renamed into production code (its diff shows only what changed, not the test code it carries)",
      {
        filename: PATH,
        status: "renamed",
        previous_filename: "tools/mock-stock.ts",
        patch: '@@ -10,3 +10,3 @@\n const a = "x";\n-export const b = 1;\n+export const b = 2;\n const c = "y";',
      },
    ],
  ])("a file %s is read whole and refused", async (_, listed) => {
    compareAnswers([listed]);
    fileReadAnswers(PATH, 'import { vi } from "vitest";\nexport const stock = () => [];\n');
    const verified = await push([PATH]);
    github.verify();
    expect(refusals(verified)).toEqual([`${AFTER.slice(0, 7)}: ${IMPORTS_VITEST}`]);
  });
});

describe("the tree at the head is read unless the compare vouches for every frozen path", () => {
  const accepted = (head: string) => ({ context: { head } }) as unknown as TrackSnapshot;

  test("a push that changes only code, from the accepted head, reads no tree", async () => {
    compareAnswers([{ filename: PATH, status: "modified", patch: "@@ -1 +1 @@\n-export {};\n+export const a = 1;" }]);
    const verified = await push([PATH]);
    github.verify();
    expect([verified.headBlobs, verified.trees.after, frozenCheckPending(verified, BEFORE, accepted(BEFORE))]).toEqual([
      undefined,
      "d".repeat(40),
      false,
    ]);
  });

  test("the same push on top of a refused head, which nothing vouches for, has its tree read", async () => {
    compareAnswers([{ filename: PATH, status: "modified", patch: "@@ -1 +1 @@\n-export {};\n+export const a = 1;" }]);
    const verified = await push([PATH]);
    expect(frozenCheckPending(verified, BEFORE, accepted("9".repeat(40)))).toBe(true);
    treeAnswers({ "test/stock.test.ts": "1".repeat(40) });
    const read = await withFrozenAtHead(
      { source: githubSource({ octokit: octokit(), owner: "acme", repo: "shop" }), after: AFTER, config },
      verified,
    );
    github.verify();
    expect(read.headBlobs).toEqual({ "test/stock.test.ts": "1".repeat(40) });
  });

  test.each<[string, Listed[] | undefined]>([
    ["names a test file", [{ filename: "test/stock.test.ts", status: "modified", patch: "@@ -1 +1 @@\n-a\n+b" }]],
    [
      "renames a frozen artifact away",
      [{ filename: "docs/spec.json", previous_filename: ".consort/spec.json", status: "renamed" }],
    ],
    ["lists no files at all", undefined],
    [
      "lists 300 files (GitHub's cap: more may have changed)",
      Array.from({ length: 300 }, (_, i) => ({
        filename: `src/f${i}.ts`,
        status: "added",
        patch: "@@ -0,0 +1 @@\n+x",
      })),
    ],
  ])("a compare that %s has the tree read", async (_, files) => {
    compareAnswers(files);
    treeAnswers({ ".consort/spec.json": "2".repeat(40) });
    const verified = await push([]);
    github.verify();
    expect(verified.headBlobs).toEqual({ ".consort/spec.json": "2".repeat(40) });
  });
});
