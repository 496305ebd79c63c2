import { execFileSync } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { lanePath, loadLane, readLane, writeLane } from "../../src/tools/local-lane.js";

/**
 * The local lane's file in the git directory: written only over the lane its writer read (so a
 * board's poll never drops an approval given meanwhile), and refused with what to do when it does
 * not parse.
 */

let repo: string;
const SHA = "a".repeat(40);
const lane = (stage: string) => ({
  trackId: "feature-x",
  base: SHA,
  snapshot: { stage },
  approvals: [],
  refusals: {},
});

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-lane-"));
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: repo });
});
afterAll(() => rm(repo, { recursive: true, force: true }));

describe("the local lane file", () => {
  test("lives in the git directory and is written only over the lane its writer read", async () => {
    expect(await lanePath(repo, "feature-x")).toBe(join(repo, ".git", "consort", "tracks", "feature-x.json"));
    expect(await writeLane(repo, lane("spec"), undefined)).toMatchObject({ written: true });
    const read = await loadLane(repo, "feature-x");
    expect(read.file).toMatchObject({ kind: "consort-local-lane", rehearsal: true, snapshot: { stage: "spec" } });
    // A writer that read no file (or an older one) does not overwrite the newer lane.
    expect(await writeLane(repo, lane("stories"), undefined)).toMatchObject({ written: false });
    expect(await writeLane(repo, lane("architecture"), read.text)).toMatchObject({ written: true });
    expect(await writeLane(repo, lane("stories"), read.text)).toMatchObject({ written: false });
    expect((await readLane(repo, "feature-x"))?.snapshot).toEqual({ stage: "architecture" });
  });

  test("a file that breaks its schema is refused, saying how to start over", async () => {
    const path = await lanePath(repo, "feature-x");
    await writeFile(path, JSON.stringify({ ...lane("spec"), rehearsal: false }));
    await expect(readLane(repo, "feature-x")).rejects.toMatchObject({
      message: expect.stringContaining(`The local lane ${path} cannot be read: it breaks its schema`),
      hint: `Delete ${path} to start the rehearsal over from the merge base (its approvals are lost; the branch's commits are judged again).`,
    });
  });
});

describe("reading the lane again", () => {
  test("an unchanged lane is not written again (a board's poll, a second consort next)", async () => {
    const path = await lanePath(repo, "feature-x");
    await rm(path, { force: true });
    await writeLane(repo, lane("red"), undefined);
    const read = await loadLane(repo, "feature-x");
    const before = (await stat(path)).mtimeMs;
    await new Promise((done) => setTimeout(done, 20));
    expect(await writeLane(repo, lane("red"), read.text)).toEqual({ path, written: false });
    expect((await stat(path)).mtimeMs).toBe(before);
  });
});
