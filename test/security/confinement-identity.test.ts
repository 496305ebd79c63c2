import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { placeCheckout, runBundledCycle, runnerLayout, type RunnerFolders } from "../cycle/runner-env.js";
import {
  GREEN_T7,
  RED_T7,
  T7,
  checkout,
  exampleSuite,
  ownNodeModules,
  type Checkout,
  type Mutation,
} from "../cycle/stockflow.js";

/**
 * One identity per job: two jobs on one machine (a self-hosted runner), one after the other or at
 * once, through the bundled action in runner folders of their own (confined: as root here). What
 * one job's commands leave or do must never change another job's verdict.
 */

const suite = exampleSuite("identity");
/** The jobs' throwaway users are named after this stem. */
const USERS = `consort-i-${randomBytes(3).toString("hex")}`;
const layouts: RunnerFolders[] = [];
let config: ConsortConfig;

beforeAll(() => {
  // Through npm, as many projects run their tests (npm reads the user's ~/.npmrc).
  config = { ...suite.config, commands: { ...suite.config.commands, test: "npm test" } };
});
afterAll(async () => {
  await Promise.all(layouts.map((l) => l.remove()));
});

/** A staged checkout, with a node_modules of its own, in runner folders of its own. */
async function onRunner(commits: Parameters<typeof checkout>[0]): Promise<RunnerFolders & { c: Checkout }> {
  const c = await checkout(commits);
  await ownNodeModules(c);
  const folders = await runnerLayout();
  layouts.push(folders);
  await placeCheckout(folders, c.dir);
  return { ...folders, c };
}

/** T7's GREEN with no code written: T7 still fails by an assertion, so the honest verdict is refused. */
async function greenWithoutCode(folders: RunnerFolders & { c: Checkout }) {
  return CycleRequest.parse({
    track: "identity-victim",
    step: "green",
    commit: folders.c.commit,
    database: { branch: suite.trackDb },
    tests: { inTurn: [T7], earlierGreen: [] },
    frozenTestFiles: [
      {
        path: T7.file,
        sha256: hashFrozenText(await readFile(join(folders.checkout, T7.file), "utf8")),
        commit: folders.c.commit,
      },
    ],
  });
}

const redOf = (track: string, folders: RunnerFolders & { c: Checkout }) =>
  CycleRequest.parse({
    track,
    step: "red",
    commit: folders.c.commit,
    database: { branch: suite.trackDb },
    tests: { inTurn: [T7], earlierGreen: [] },
  });

const T7_FAILS = `T7 "${T7.title}" (${T7.file}) (in turn) fails an assertion: expected 404 to be 200 // Object.is equality`;

describe.concurrent("one identity per job", { timeout: 180_000 }, () => {
  test("a ~/.npmrc with script-shell= that one track's test leaves does not run the next job's tests: the next GREEN with no code is refused", async () => {
    // The attacker's track: its T7 plants a shell that runs the tests, then rewrites the report to all-passed.
    const plant = `import { test } from "vitest";\nimport { chmodSync, writeFileSync } from "node:fs";\nimport { homedir } from "node:os";\ntest(${JSON.stringify(T7.title)}, () => {\n  const home = homedir();\n  writeFileSync(home + "/fix.cjs", 'const fs = require("fs"); const x = fs.readFileSync("junit.xml", "utf8"); fs.writeFileSync("junit.xml", x.replace(/<failure[\\\\s\\\\S]*?<\\\\/failure>/g, "").replace(/failures="\\\\d+"/g, \\'failures="0"\\'));');\n  writeFileSync(home + "/shell.sh", "#!/bin/sh\\n/bin/sh \\"$@\\"\\nnode " + home + "/fix.cjs\\nexit 0\\n");\n  chmodSync(home + "/shell.sh", 0o755);\n  writeFileSync(home + "/.npmrc", "script-shell=" + home + "/shell.sh\\n");\n});\n`;
    const attacker = await onRunner([
      ...RED_T7,
      { message: "RED T7 that plants", mutate: [(dir) => writeFile(join(dir, T7.file), plant)] },
    ]);
    const planted = await runBundledCycle(attacker, {
      request: redOf("identity-attacker", attacker),
      config,
      confinedUser: USERS,
    });
    expect(planted.result.commands.test?.exitCode).toBe(0);

    const victim = await onRunner(RED_T7);
    const { result } = await runBundledCycle(victim, {
      request: await greenWithoutCode(victim),
      config,
      confinedUser: USERS,
    });

    expect(result.verdict).toBe("refused");
    expect(result.reasons).toContain(T7_FAILS);
  });

  test("two cycles at once: one cannot find the other's processes, rewrite its source (the code its GREEN lacks) or end its commands", async () => {
    // The code T7's GREEN needs, which the attacker writes into the victim's checkout.
    const green = await checkout(GREEN_T7);
    const code = Object.fromEntries(
      await Promise.all(
        ["src/repositories/stock-records.ts", "src/routes/index.ts", "src/services/stock.ts"].map(
          async (path) => [path, await green.read(path)] as const,
        ),
      ),
    );
    await green.remove();
    // The attacker's migrate (its own track's code): find a process whose folder is the victim's
    // checkout, write the code there, then wait (its commands end when the victim's end, on one uid).
    const attack = `import { existsSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";\nimport { join } from "node:path";\nconst code = ${JSON.stringify(code)};\nconst until = Date.now() + 15000;\nlet done = false;\nwhile (Date.now() < until) {\n  for (const pid of readdirSync("/proc").filter((p) => /^\\d+$/.test(p))) {\n    let cwd;\n    try { cwd = readlinkSync("/proc/" + pid + "/cwd"); } catch { continue; }\n    if (!done && existsSync(join(cwd, ".victim"))) {\n      try { for (const [path, text] of Object.entries(code)) writeFileSync(join(cwd, path), text); done = true; console.log("rewrote the victim's source"); } catch {}\n    }\n  }\n  await new Promise((r) => setTimeout(r, 100));\n}\nconsole.log(done ? "done" : "found no victim");\n`;
    const writeAttack: Mutation = (dir) => writeFile(join(dir, "src/db/migrate.ts"), attack);
    const attacker = await onRunner([...RED_T7, { message: "an attacking migration", mutate: [writeAttack] }]);
    const victim = await onRunner(RED_T7);
    await writeFile(join(victim.checkout, ".victim"), "");
    const slow = { ...config, commands: { ...config.commands, migrate: `sleep 3 && ${config.commands.migrate}` } };

    const [attacked, victimRun] = await Promise.all([
      runBundledCycle(attacker, { request: redOf("identity-attacker", attacker), config, confinedUser: USERS }),
      new Promise((r) => setTimeout(r, 1000)).then(async () =>
        runBundledCycle(victim, { request: await greenWithoutCode(victim), config: slow, confinedUser: USERS }),
      ),
    ]);

    expect(victimRun.result.verdict).toBe("refused");
    expect(victimRun.result.reasons).toContain(T7_FAILS);
    // Neither job's final kill ended the other's commands.
    expect(attacked.result.commands.migrate).toMatchObject({ exitCode: 0, outputTail: "found no victim" });
    expect(victimRun.result.commands.migrate?.exitCode).toBe(0);
  });
});
