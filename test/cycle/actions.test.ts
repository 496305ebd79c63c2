import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DatabaseConfig } from "../../src/config/consort-config.js";
import { runCycleAction } from "../../src/cycle/action.js";
import { CycleResult } from "../../src/contracts/cycle-result.js";
import { runDeployAction, runPromoteAction } from "../../src/deploy/action.js";
import { DeployEvidence, PromoteResult } from "../../src/contracts/deploy.js";
import { createProvider } from "../../src/substrate/index.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { postgresUrl } from "../helpers/postgres.js";
import { runnerEnv } from "./runner-env.js";
import { RED_T7, checkout, uniqueBranch, type Checkout } from "./stockflow.js";

/**
 * The actions' entry points, driven the way the Actions runner drives them: INPUT_* variables,
 * GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, a config file from the default branch.
 */

let work: string;
let stage: Checkout;
let provider: BranchProvider;
const root = `actions_root_${Date.now().toString(36)}`;
const TRACK = uniqueBranch("track");
/** The actions run their commands as a user of this file's own (as root here, as on a runner through sudo). */
const CONFINED_USER = `consort-a-${randomBytes(3).toString("hex")}`;
const TRUNK = uniqueBranch("trunk");
const database = { provider: "postgres", postgres: { urlEnv: "CONSORT_TEST_PG_URL", rootDatabase: root } };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "consort-actions-"));
  stage = await checkout(RED_T7);
  provider = await createProvider(DatabaseConfig.parse(database), { env: { CONSORT_TEST_PG_URL: postgresUrl() } });
  await provider.createBranch(TRACK, { from: await provider.rootBranch() });
  await provider.createBranch(TRUNK, { from: await provider.rootBranch() });
});
afterAll(async () => {
  await stage?.remove();
  await provider?.close();
  await rm(work, { recursive: true, force: true });
});

async function jobOf(name: string, request: unknown, commands: Record<string, string>) {
  const env = await runnerEnv(work, name, {
    request,
    cwd: stage.dir,
    config: { database, commands },
    confinedUser: CONFINED_USER,
  });
  return {
    env,
    dir: join(work, name),
    output: () => readFile(env.GITHUB_OUTPUT, "utf8"),
    summary: () => readFile(env.GITHUB_STEP_SUMMARY, "utf8"),
  };
}

describe("the actions' entry points", { timeout: 60_000 }, () => {
  test("actions/cycle fails the step on a refusal and still leaves the result for the upload", async () => {
    const request = {
      track: "f1",
      step: "red",
      commit: stage.commit,
      tests: { inTurn: [{ id: "T7", file: "test/stock-by-location.test.ts", title: "t" }] },
      database: { branch: TRACK },
    };
    const job = await jobOf("cycle", request, { migrate: "true", test: "true" });
    expect(await runCycleAction(job.env)).toBe(1);
    const result = CycleResult.parse(JSON.parse(await readFile(join(work, "cycle", "cycle-result.json"), "utf8")));
    expect(result.verdict).toBe("refused");
    // As root (a hosted runner's job gets there through sudo), the commands ran as the confined user.
    expect(result.confinement).toEqual({
      confined: true,
      user: expect.stringMatching(new RegExp(`^${CONFINED_USER}-`)),
      uid: expect.any(Number),
    });
    expect(await job.output()).toMatch(/^verdict<<(\S+)\nrefused\n\1$/m);
    expect(await job.summary()).toContain("RED refused");
  });

  test("actions/cycle refuses a request that breaks its schema, naming the field", async () => {
    const job = await jobOf(
      "bad",
      { track: "f1", step: "green", commit: stage.commit, database: { branch: TRACK } },
      {},
    );
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stdout.write;
    try {
      expect(await runCycleAction(job.env)).toBe(1);
    } finally {
      process.stdout.write = write;
    }
    expect(lines.join("")).toContain(
      "::error::the cycle could not run: the action input `request` is not a valid cycle request:%0A  - tests.inTurn: a green step needs at least one test in turn",
    );
  });

  test("actions/deploy writes the deploy evidence with the preview URL", async () => {
    const request = { track: "f1", commit: stage.commit, database: { branch: TRACK, parent: TRUNK } };
    const job = await jobOf("deploy", request, {
      deploy: "echo PREVIEW_URL=https://f1.preview.example",
      verify: 'test -n "$PREVIEW_URL"',
    });
    expect(await runDeployAction(job.env)).toBe(0);
    const evidence = DeployEvidence.parse(
      JSON.parse(await readFile(join(work, "deploy", "deploy-evidence.json"), "utf8")),
    );
    expect(evidence).toMatchObject({ verdict: "verified", mode: "preview", previewUrl: "https://f1.preview.example/" });
    expect(await job.output()).toContain("https://f1.preview.example/");
    // As root, the deploy and verify commands ran as the confined user, and the record and summary say so.
    expect(evidence.confinement).toEqual({
      confined: true,
      user: expect.stringMatching(new RegExp(`^${CONFINED_USER}-`)),
      uid: expect.any(Number),
    });
    expect(await job.summary()).toContain(
      `🔒 The repository's commands ran confined, as the OS user \`${CONFINED_USER}-`,
    );
  });

  test("actions/promote migrates the parent and reports promoted", async () => {
    const request = { track: "f1", commit: stage.commit, database: { parent: TRUNK } };
    const job = await jobOf("promote", request, { migrate: "node --import tsx src/db/migrate.ts" });
    expect(await runPromoteAction(job.env)).toBe(0);
    const result = PromoteResult.parse(
      JSON.parse(await readFile(join(work, "promote", "promote-result.json"), "utf8")),
    );
    expect(result).toMatchObject({ verdict: "promoted", database: { parent: TRUNK, snapshotKept: false } });
    expect(await job.summary()).toContain(`Promoted: ${TRUNK}`);
    expect(result.confinement).toEqual({
      confined: true,
      user: expect.stringMatching(new RegExp(`^${CONFINED_USER}-`)),
      uid: expect.any(Number),
    });
    expect(await job.summary()).toContain(
      `🔒 The repository's commands ran confined, as the OS user \`${CONFINED_USER}-`,
    );
  });
});
