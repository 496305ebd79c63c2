import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { prepareConfinement, processesOf, type Confinement } from "../../src/cycle/confine.js";
import { CycleRequest } from "../../src/contracts/cycle-request.js";
import { CYCLE_RESULT_FILE } from "../../src/contracts/cycle-result.js";
import { runCycle } from "../../src/cycle/run.js";
import { hashFrozenText } from "../../src/gates/freeze.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import {
  GREEN_T7,
  RED_T7,
  checkout,
  exampleConfig,
  ownNodeModules,
  uniqueBranch,
  type Checkout,
  S1_TESTS,
  T7,
} from "../cycle/stockflow.js";

/**
 * The commands run confined: real cycles on StockFlow whose commands run as a separate OS user
 * (made here with useradd, as the action makes it on a runner through sudo). Each test is a
 * shortcut an agent could take from inside the migrate or test command, and each ends refused or
 * harmless, with the result the job wrote intact. Each has its own checkout and result folder, so
 * they run at once.
 */

const USER = `consort-s-${randomBytes(3).toString("hex")}`;

let config: ConsortConfig;
let provider: BranchProvider;
let confinement: Confinement;
const TRACK_DB = uniqueBranch("confine-attack");
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  confinement = await prepareConfinement(USER);
  if (!confinement.confined) throw new Error(`the attack suite needs root to make a user: ${confinement.reason}`);
  ({ config, provider } = await exampleConfig());
  await provider.createBranch(TRACK_DB, { from: await provider.rootBranch() });
});
afterAll(async () => {
  await Promise.all(cleanup.map((c) => c()));
  await provider?.close();
});

/** The checkout, with a node_modules of its own as an install leaves it (the confined user writes there). */
async function stage(): Promise<Checkout> {
  const c = await checkout(RED_T7);
  cleanup.push(() => c.remove());
  await ownNodeModules(c);
  return c;
}

async function resultFolder(): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), "consort-result-"));
  cleanup.push(() => rm(parent, { recursive: true, force: true }));
  return join(parent, "consort-cycle");
}

/** A GREEN with no implementation written: T7 still fails, so the honest verdict is refused. */
async function greenWithoutCode(c: Checkout) {
  return CycleRequest.parse({
    track: "confine-attack",
    commit: c.commit,
    step: "green",
    database: { branch: TRACK_DB },
    tests: { inTurn: [T7], earlierGreen: S1_TESTS },
    frozenTestFiles: await Promise.all(
      [...new Set([...S1_TESTS, T7].map((t) => t.file))].map(async (path) => ({
        path,
        sha256: hashFrozenText(await c.read(path)),
        commit: c.commit,
      })),
    ),
  });
}

describe.concurrent("confined commands", { timeout: 120_000 }, () => {
  test("a detached process the test command leaves behind cannot rewrite the refused result to verified: it is ended, and the result folder is not its to write", async () => {
    const c = await stage();
    const outDir = await resultFolder();
    // The attack: a daemon in its own session that keeps writing "verified" over the result.
    const forge = `setsid sh -c 'while :; do echo "{\\"verdict\\":\\"verified\\"}" > ${outDir}/${CYCLE_RESULT_FILE}; sleep 0.05; done' > /dev/null 2>&1 < /dev/null &`;
    const result = await runCycle(await greenWithoutCode(c), {
      provider,
      config: { ...config, commands: { ...config.commands, test: `${forge} ${config.commands.test}` } },
      cwd: c.dir,
      outDir,
      confinement,
    });

    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual([
      `T7 "${T7.title}" (${T7.file}) (in turn) fails an assertion: expected 404 to be 200 // Object.is equality`,
      `the test command exited 1; failing: "${T7.title}" (${T7.file})`,
    ]);
    expect(result.confinement).toEqual({
      confined: true,
      user: expect.stringMatching(new RegExp(`^${USER}-[0-9a-f]{8}$`)),
      uid: expect.any(Number),
    });
    const ran = result.confinement;
    if (!ran?.confined) throw new Error("the cycle ran unconfined");
    expect(processesOf(ran.uid)).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(JSON.parse(await readFile(join(outDir, CYCLE_RESULT_FILE), "utf8"))).toEqual(result);
  });

  test("a committed source file (not a test) rewritten by the test command before the tests load it is refused: every committed file is checked after the commands", async () => {
    const c = await stage();
    // The test command writes the code T7 needs into the source (it owns its copy), then runs the tests on it.
    const green = await checkout(GREEN_T7);
    cleanup.push(() => green.remove());
    const writes = ["src/repositories/stock-records.ts", "src/routes/index.ts", "src/services/stock.ts"];
    const texts = await Promise.all(writes.map((path) => green.read(path)));
    const rewrite = writes
      .map((path, i) => `echo ${Buffer.from(texts[i]!).toString("base64")} | base64 -d > ${path}`)
      .join(" && ");
    const result = await runCycle(await greenWithoutCode(c), {
      provider,
      config: { ...config, commands: { ...config.commands, test: `${rewrite} && ${config.commands.test}` } },
      cwd: c.dir,
      outDir: await resultFolder(),
      confinement,
    });

    expect(result.verdict).toBe("refused");
    expect(result.reasons).toEqual(
      writes.map(
        (path) =>
          `${path} was changed while the commands ran (by the migrate or the test command): the tests did not run the file the commit holds, so the cycle refuses`,
      ),
    );
  });

  test("the test command cannot read the job's own environment (the runtime token that uploads artifacts) through /proc", async () => {
    const c = await stage();
    const probe = `(tr '\\0' '\\n' < /proc/${process.pid}/environ) 2>/dev/null | grep -c . > /dev/null && echo "read the job's environment" || echo "no access to the job's environment"`;
    const result = await runCycle(await greenWithoutCode(c), {
      provider,
      config: { ...config, commands: { ...config.commands, migrate: probe } },
      cwd: c.dir,
      outDir: await resultFolder(),
      confinement,
    });

    expect(result.commands.migrate!.outputTail).toBe("no access to the job's environment");
  });

  test("a result folder the confined user could write is refused before any command runs", async () => {
    const c = await stage();
    const outDir = join(c.dir, "results");
    const result = await runCycle(await greenWithoutCode(c), {
      provider,
      config,
      cwd: c.dir,
      outDir,
      confinement,
    });

    expect(result.verdict).toBe("refused");
    expect(result.commands).toEqual({});
    expect(result.reasons).toEqual([
      `the result folder ${outDir} is inside the checkout, which the commands own: the cycle refuses to leave its verdict where the commands could rewrite it`,
    ]);
  });

  test("an unconfined cycle says so in its result and its summary", async () => {
    const c = await stage();
    const outDir = await resultFolder();
    const reason =
      "the job runs as an ordinary user without passwordless sudo, so the commands ran as the job's own user";
    const result = await runCycle(await greenWithoutCode(c), {
      provider,
      config,
      cwd: c.dir,
      outDir,
      confinement: { confined: false, reason },
    });

    expect(result.confinement).toEqual({ confined: false, reason });
    expect(await readFile(join(outDir, "cycle-summary.md"), "utf8")).toContain(
      `⚠️ Ran unconfined: ${reason}. The commands could have tampered with the job; this is weaker evidence than a confined run.`,
    );
  });
});
