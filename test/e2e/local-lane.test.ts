import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { RoleName } from "../../src/config/consort-config.js";
import { runConsort } from "../helpers/cli.js";
import { postgresUrl } from "../helpers/postgres.js";
import { stockflowCheckout, URL_ENV, type StockflowCheckout } from "../tools/fixture.js";
import * as F from "./support/feature.js";

/**
 * The whole lane in a terminal, with no GitHub and no network: the example feature (StockFlow's
 * "stock by location") from `consort init` through every role's commit, each gate approved by a
 * person at a (pseudo-)terminal, RED, GREEN and REFACTOR cycles and the release run by
 * `consort cycle` on the run's embedded Postgres, to a verified release and every gate approved.
 * Every step asks `consort next` first and acts only on what it says. Three tests keep it short:
 * the index fitness test (T1, made green by the migration), two behaviours (T2, T3), one refactor.
 */

const run = promisify(execFile);
const CLI = resolve("bin/consort.js");
const LEAD = "lead@example.com";

let checkout: StockflowCheckout;
let previousUrl: string | undefined;

/** The feature without T4 and the module only T4 needs: the fewest tests that pass every kind of step. */
const ARCHITECTURE = `${JSON.stringify(
  {
    ...JSON.parse(F.ARCHITECTURE),
    modules: (JSON.parse(F.ARCHITECTURE) as { modules: Array<{ path: string }> }).modules.filter(
      (m) => m.path !== F.NEW_MODULE,
    ),
  },
  null,
  2,
)}\n`;
const TEST_LIST = `${JSON.stringify(
  { tests: (JSON.parse(F.TEST_LIST) as { tests: Array<{ id: string }> }).tests.filter((t) => t.id !== "T4") },
  null,
  2,
)}\n`;

beforeAll(async () => {
  previousUrl = process.env[URL_ENV];
  // The checkout's consort.yml names this variable for the server: the run's one embedded Postgres.
  process.env[URL_ENV] = postgresUrl();
  checkout = await stockflowCheckout({ designOnTrack: true });
  // main: StockFlow with filing stock done, nothing that lists a location, no tests yet (a refactor
  // refuses test files the track did not freeze, the trunk's own too), and Consort installed.
  await git("checkout", "-q", "main");
  await rm(join(checkout.path, "test"), { recursive: true, force: true });
  await writeFiles(F.BEFORE);
  const init = await runConsort("init", "-C", checkout.path);
  expect(init.status, init.stderr).toBe(0);
  await git("add", "-A");
  await git("commit", "-q", "-m", "StockFlow before F2, with Consort installed");
  await git("checkout", "-q", "-B", checkout.branch);
  await git("config", "user.email", LEAD);
}, 120_000);

afterAll(async () => {
  if (previousUrl === undefined) delete process.env[URL_ENV];
  else process.env[URL_ENV] = previousUrl;
  await checkout?.cleanup();
});

async function git(...args: string[]): Promise<string> {
  return (await run("git", args, { cwd: checkout.path })).stdout;
}

async function writeFiles(files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(checkout.path, path)), { recursive: true });
    await writeFile(join(checkout.path, path), text);
  }
}

/** What `consort next` answers (as an agent reads it), and its text (as a person reads it). */
async function next(): Promise<Record<string, unknown> & { local?: string }> {
  const answer = await runConsort("next", "-C", checkout.path, "--json");
  expect(answer.status, answer.stderr).toBe(0);
  return JSON.parse(answer.stdout) as Record<string, unknown> & { local?: string };
}

/** The role `consort next` names commits its step, as that role's agent (its own git identity). */
async function step(role: RoleName, files: Record<string, string>): Promise<void> {
  const asked = await next();
  expect(asked).toMatchObject({ actor: "agent", role, trailer: `Consort-Role: ${role}` });
  await writeFiles(files);
  await git("add", ...Object.keys(files));
  await git(
    "-c",
    `user.name=${role} agent`,
    "-c",
    `user.email=${role}@agents.example.com`,
    "commit",
    "-q",
    "-m",
    `${role}: ${Object.keys(files).join(", ")}\n\nConsort-Role: ${role}`,
  );
}

/** `consort next` says the machine waits for a job; `consort cycle` runs it and its verdict moves the lane. */
async function cycle(stage: string, then: string): Promise<void> {
  const asked = await next();
  expect(asked).toMatchObject({
    stage,
    actor: "orchestrator",
    local: expect.stringContaining("npx --no-install consort cycle"),
  });
  const ran = await runConsort("cycle", "-C", checkout.path, "--json", "--quiet");
  const answer = JSON.parse(ran.stdout) as { result: { verdict: string; reasons: string[] }; lane: { stage: string } };
  expect(answer.result.verdict, answer.result.reasons.join("\n")).toBe("verified");
  expect(ran.status).toBe(0);
  expect(answer.lane.stage).toBe(then);
}

/** A person at a terminal (a real pseudo-terminal) approves the gate `consort next` says waits. */
async function approve(gate: string, then: string): Promise<void> {
  const asked = await next();
  expect(asked).toMatchObject({
    stage: `${gate}-gate`,
    actor: "person",
    gate: { name: gate },
    local: expect.stringContaining(`npx --no-install consort approve ${gate}`),
  });
  const command = [process.execPath, CLI, "approve", gate, "-C", checkout.path].map((a) => `'${a}'`).join(" ");
  const { stdout } = await run("script", ["-qec", command, "/dev/null"], { cwd: checkout.path });
  expect(stdout).toContain(`✓ ${gate} gate approved at the terminal by ${LEAD}`);
  expect((await next()).stage).toBe(then);
}

test("the example feature goes through every role and gate in a terminal, to a verified release", async () => {
  // The design lane: one role, one file, one commit each, then the design gate.
  await step("product-owner", { ".consort/spec.json": F.STORIES });
  await step("spec-author", { ".consort/spec.json": F.SPEC });
  await step("architect", { ".consort/architecture.json": ARCHITECTURE });
  await step("dba", { ".consort/db-design.json": F.DB_DESIGN });
  await approve("design", "test-list");
  await step("test-strategist", { ".consort/test-list.json": TEST_LIST });
  await approve("test-list", "red");

  // T1: the index fitness test, made green by the migration.
  await step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
  await cycle("red-verify", "green");
  await step("driver", F.GREEN_T1);
  await cycle("green-verify", "review");
  await step("navigator", { ".consort/reviews/T1.json": F.REVIEW_T1 });

  // T2: listing a location.
  await step("navigator", { [F.TEST_FILE]: F.RED_T2 });
  await cycle("red-verify", "green");
  await step("driver", F.GREEN_T2);
  await cycle("green-verify", "review");
  await step("navigator", { ".consort/reviews/T2.json": F.REVIEW_T2 });

  // T3: an empty location, then the refactor the navigator asks for; the release follows it.
  await step("navigator", { [F.TEST_FILE]: F.RED_T3 });
  await cycle("red-verify", "green");
  await step("driver", F.GREEN_T3);
  await cycle("green-verify", "review");
  await step("navigator", { ".consort/reviews/T3.json": F.REVIEW_T3 });
  await step("driver", F.REFACTOR_T3);
  await cycle("refactor-verify", "deploying");

  // The release: every migration replayed and the whole suite run on the embedded Postgres.
  await cycle("deploying", "deploy-gate");
  await approve("deploy", "promote-gate");
  await approve("promote", "merging");
  expect(await next()).toMatchObject({ stage: "merging", actor: "person" });
}, 600_000);
