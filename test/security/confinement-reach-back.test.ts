import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, test } from "vitest";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import {
  checkoutPostJob,
  placeCheckout,
  runBundledCycle,
  runnerLayout,
  type RunnerFolders,
} from "../cycle/runner-env.js";
import { RED_T7, T7, checkout, exampleSuite, ownNodeModules } from "../cycle/stockflow.js";

/**
 * The checkout cannot reach back: after the cycle, the job's own steps run git in the checkout as
 * the job's user (actions/checkout's post-job cleanup). Nothing the confined commands did may run
 * there: here a test replaces `.git` with one whose core.fsmonitor is its own script, which git runs
 * when it reads the index (`git submodule foreach`).
 */

const suite = exampleSuite("reach-back");
const USERS = `consort-r-${randomBytes(3).toString("hex")}`;
const layouts: RunnerFolders[] = [];
afterAll(async () => {
  await Promise.all(layouts.map((l) => l.remove()));
});

const run = promisify(execFile);

describe("the checkout cannot reach back to the job", { timeout: 180_000 }, () => {
  test("a test that plants a .git with core.fsmonitor in its checkout runs nothing when actions/checkout's post-job git commands run there as the job's user", async () => {
    const folders = await runnerLayout();
    layouts.push(folders);
    const marker = join(folders.runner, "reached-back");
    // The attacker's T7: swap the checkout's .git for its own, whose fsmonitor hook writes the marker.
    const plant = `import { test } from "vitest";\nimport { execSync } from "node:child_process";\ntest(${JSON.stringify(T7.title)}, () => {\n  execSync(${JSON.stringify(
      `(mv .git .git-real || rm -rf .git) 2>/dev/null; git init -q . && printf '#!/bin/sh\\nid -u >> ${marker}\\n' > .git/hook.sh && chmod +x .git/hook.sh && git config core.fsmonitor "$PWD/.git/hook.sh" && git add README.md`,
    )}, { stdio: "ignore" });\n});\n`;
    const c = await checkout([
      ...RED_T7,
      { message: "RED T7", mutate: [(dir) => writeFile(join(dir, T7.file), plant)] },
    ]);
    await ownNodeModules(c);
    await placeCheckout(folders, c.dir);

    const { result } = await runBundledCycle(folders, {
      request: CycleRequest.parse({
        track: "reach-back",
        step: "red",
        commit: c.commit,
        database: { branch: suite.trackDb },
        tests: { inTurn: [T7], earlierGreen: [] },
      }),
      config: suite.config,
      confinedUser: USERS,
    });
    expect(result.commands.test).toBeDefined();
    await checkoutPostJob(folders.checkout);

    expect(existsSync(marker)).toBe(false);
    expect((await run("git", ["rev-parse", "HEAD"], { cwd: folders.checkout })).stdout.trim()).toBe(c.commit);
    // Nothing in the checkout belongs to anyone but the job's user (root here) once the cycle is over.
    expect((await run("find", [folders.checkout, "!", "-uid", "0"])).stdout).toBe("");
  });
});
