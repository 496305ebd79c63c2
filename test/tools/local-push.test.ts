import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import { localPush } from "../../src/tools/local-push.js";

/** A push built from local git carries each runner file's text before and after the commit, as the app's does. */

let repo: string;
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@consort.invalid", ...args], { cwd: repo })
    .toString()
    .trim();

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-local-push-"));
  git("init", "-q", "-b", "feature/x");
  await writeFile(join(repo, "package.json"), '{"scripts":{"test":"vitest run"}}\n');
  await writeFile(join(repo, "README.md"), "shop\n");
  git("add", "-A");
  git("commit", "-q", "-m", "start");
});
afterAll(() => rm(repo, { recursive: true, force: true }));

describe("localPush", () => {
  it("reads a changed package.json's text at the commit and at its parent, and a new runner file's as none before", async () => {
    const start = git("rev-parse", "HEAD");
    await writeFile(join(repo, "package.json"), '{"scripts":{"test":"exit 0"}}\n');
    await writeFile(join(repo, "vitest.config.ts"), "export default {};\n");
    await writeFile(join(repo, "README.md"), "shop, changed\n");
    git("add", "-A");
    git("commit", "-q", "-m", "step\n\nConsort-Role: driver");
    const push = await localPush(repo, start, defaultConfig(), "2026-12-01T10:00:00Z");
    expect(push.commits).toHaveLength(1);
    const [commit] = push.commits;
    expect(commit?.before).toEqual({ "package.json": '{"scripts":{"test":"vitest run"}}\n', "vitest.config.ts": null });
    expect(commit?.files).toEqual({
      "package.json": '{"scripts":{"test":"exit 0"}}\n',
      "vitest.config.ts": "export default {};\n",
    });
  });
});
