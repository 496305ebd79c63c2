import { randomBytes } from "node:crypto";
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import { placeCheckout, runBundledCycle, runnerLayout, type RunnerFolders } from "../cycle/runner-env.js";
import { RED_T7, T7, checkout, exampleSuite, ownNodeModules, type Checkout } from "../cycle/stockflow.js";

/**
 * No step oracle: a test that could tell its RED from its GREEN would fail at RED and pass at GREEN
 * with no code written. Each test here is such a test, reading one channel, run through the bundled
 * action in a runner's folders (confined: as root here, as a hosted runner's job through sudo): its
 * RED is verified (it fails by an assertion), and its GREEN must be refused, since nothing it can
 * see differs from its RED. Each channel's jobs run in runner folders of their own, beside the
 * other channels' (as on a machine that runs several jobs at once).
 */

const suite = exampleSuite("oracle");
/** Each test's jobs run as throwaway users named after this stem (removed after each job). */
const USERS = `consort-o-${randomBytes(3).toString("hex")}`;
const layouts: RunnerFolders[] = [];
let config: ConsortConfig;

beforeAll(() => {
  // T7's file alone: the oracle is T7, and the S1 tests would only slow each job down.
  config = {
    ...suite.config,
    commands: { ...suite.config.commands, test: `vitest run ${T7.file} --reporter=junit --outputFile=junit.xml` },
  };
});
afterAll(async () => {
  await Promise.all(layouts.map((l) => l.remove()));
});

const commit = (message: string, role: "navigator" | "driver") => `${message}\n\nConsort-Role: ${role}\n`;

/**
 * The RED and then the GREEN of T7 through the bundled action, one after the other in the same
 * runner folders (a self-hosted runner reuses them). The navigator's RED writes `oracle` as T7
 * (its last change); the driver's GREEN touches only the README: no code.
 */
async function redThenGreen(oracle: (folders: RunnerFolders) => string) {
  const folders = await runnerLayout();
  layouts.push(folders);
  const text = oracle(folders);
  const writeOracle = {
    message: commit("RED T7", "navigator"),
    mutate: [(dir: string) => writeFile(join(dir, T7.file), text)],
  };
  const red = await checkout([...RED_T7, writeOracle]);
  const green = await checkout([
    ...RED_T7,
    writeOracle,
    {
      message: commit("GREEN T7 (no code)", "driver"),
      mutate: [(dir: string) => appendFile(join(dir, "README.md"), "\nGREEN.\n")],
    },
  ]);
  const frozen = { path: T7.file, sha256: hashFrozenText(text), commit: red.commit };
  const request = (step: "red" | "green", c: Checkout) =>
    CycleRequest.parse({
      track: "oracle",
      step,
      commit: c.commit,
      database: { branch: suite.trackDb },
      tests: { inTurn: [T7], earlierGreen: [] },
      frozenTestFiles: step === "green" ? [frozen] : [],
    });
  const job = { config, confinedUser: USERS };
  await ownNodeModules(red);
  await placeCheckout(folders, red.dir);
  const redRun = await runBundledCycle(folders, { ...job, request: request("red", red) });
  await ownNodeModules(green);
  await placeCheckout(folders, green.dir);
  const greenRun = await runBundledCycle(folders, { ...job, request: request("green", green) });
  return { red: redRun.result, green: greenRun.result, greenCode: greenRun.code };
}

/** A vitest file whose T7 passes only when `seen` (an expression) is what a GREEN would show. */
const oracleTest = (prelude: string, seen: string, expected: string) =>
  `import { expect, test } from "vitest";\n${prelude}\ntest(${JSON.stringify(T7.title)}, () => {\n  expect(${seen}).toBe(${JSON.stringify(expected)});\n});\n`;

const failsAssertion = (got: string, expected: string) =>
  `T7 "${T7.title}" (${T7.file}) (in turn) fails an assertion: expected ${got} to be '${expected}' // Object.is equality`;

describe.concurrent(
  "no step oracle: what a test can see does not differ between its RED and its GREEN",
  { timeout: 180_000 },
  () => {
    test("git metadata: a test that reads the commit's Consort-Role trailer from .git finds no .git, so its GREEN with no code is refused", async () => {
      const { red, green, greenCode } = await redThenGreen(() =>
        oracleTest(
          `import { readFileSync } from "node:fs";\nimport { inflateSync } from "node:zlib";\nfunction role() {\n  try {\n    const head = readFileSync(".git/HEAD", "utf8").trim();\n    const sha = head.startsWith("ref: ") ? readFileSync(".git/" + head.slice(5), "utf8").trim() : head;\n    const body = inflateSync(readFileSync(".git/objects/" + sha.slice(0, 2) + "/" + sha.slice(2))).toString();\n    return /Consort-Role: (\\w+)/.exec(body)?.[1] ?? "none";\n  } catch {\n    return "unreadable";\n  }\n}`,
          "role()",
          "driver",
        ),
      );

      expect(red.reasons).toEqual([]);
      expect(red.verdict).toBe("verified");
      expect(green.verdict).toBe("refused");
      expect(green.reasons).toContain(failsAssertion("'unreadable'", "driver"));
      expect(greenCode).toBe(1);
    });

    test("the event file: a test that reads the dispatch's inputs from the runner's _temp/_github_workflow/event.json cannot reach it, so its GREEN with no code is refused", async () => {
      const { red, green } = await redThenGreen((folders) =>
        oracleTest(
          `import { readFileSync } from "node:fs";\nfunction step() {\n  for (const at of [${JSON.stringify(folders.eventPath)}, "../../../_temp/_github_workflow/event.json"]) {\n    try {\n      return JSON.parse(JSON.parse(readFileSync(at, "utf8")).inputs.request).step;\n    } catch {}\n  }\n  return "unreadable";\n}`,
          "step()",
          "green",
        ),
      );

      expect(red.verdict).toBe("verified");
      expect(green.verdict).toBe("refused");
      expect(green.reasons).toContain(failsAssertion("'unreadable'", "green"));
    });

    test("the environment: a test that leaves a mark at its RED in its HOME and in /tmp finds neither at its GREEN (a fresh user, home and /tmp per job), so its GREEN with no code is refused", async () => {
      const token = randomBytes(4).toString("hex");
      const { red, green } = await redThenGreen(() =>
        oracleTest(
          `import { existsSync, writeFileSync } from "node:fs";\nimport { homedir } from "node:os";\nconst marks = [homedir() + "/.t7-${token}", "/tmp/t7-${token}", "/var/tmp/t7-${token}", "/dev/shm/t7-${token}"];\nconst seen = marks.filter((m) => existsSync(m)).length > 0 ? "seen before" : "first time";\nfor (const m of marks) try { writeFileSync(m, ""); } catch {}`,
          "seen",
          "seen before",
        ),
      );

      expect(red.verdict).toBe("verified");
      expect(green.verdict).toBe("refused");
      expect(green.reasons).toContain(failsAssertion("'first time'", "seen before"));
    });

    test("timing of the job's own files: a test that passes when a committed file is newer than its own (the driver's commit touched it after the RED) sees one mtime for every file, so its GREEN with no code is refused", async () => {
      const { red, green } = await redThenGreen(() =>
        oracleTest(
          `import { statSync } from "node:fs";\nconst newer = statSync("README.md").mtimeMs > statSync(${JSON.stringify(T7.file)}).mtimeMs ? "README newer" : "not newer";`,
          "newer",
          "README newer",
        ),
      );

      expect(red.verdict).toBe("verified");
      expect(green.verdict).toBe("refused");
      expect(green.reasons).toContain(failsAssertion("'not newer'", "README newer"));
    });

    test("the process list: the commands see only their own processes in /proc, never the job's (the action's node, the runner's) nor another job's", async () => {
      const c = await checkout(RED_T7);
      await ownNodeModules(c);
      const folders = await runnerLayout();
      layouts.push(folders);
      await placeCheckout(folders, c.dir);
      // What a test would scan: every process whose command line it can read, and whether one is the action's.
      const probe = `me=$(id -u); n=0; job=0; for p in /proc/[0-9]*; do [ "$(stat -c %u $p 2>/dev/null)" = "$me" ] && continue; c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null) || continue; [ -n "$c" ] || continue; n=$((n+1)); case "$c" in *index.mjs*) job=$((job+1));; esac; done; echo "foreign=$n job=$job"`;
      const { result } = await runBundledCycle(folders, {
        request: CycleRequest.parse({
          track: "oracle",
          step: "red",
          commit: c.commit,
          database: { branch: suite.trackDb },
          tests: { inTurn: [T7], earlierGreen: [] },
        }),
        config: { ...config, commands: { ...config.commands, migrate: probe } },
        confinedUser: USERS,
      });

      expect(result.commands.migrate?.outputTail).toBe("foreign=0 job=0");
    });
  },
);
