import { readFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { readCheckoutConfig } from "../../src/config/load.js";
import type { ConsortConfig } from "../../src/config/consort-config.js";
import { createProvider } from "../../src/substrate/index.js";
import type { BranchProvider } from "../../src/substrate/provider.js";
import { postgresUrl } from "../helpers/postgres.js";

/**
 * The StockFlow example at the stages of its build, as real git checkouts in temporary folders:
 * the committed example is the finished F1; the patches in fixtures/stockflow-stages take S2's
 * implementation and its second test back out. Node resolves `pg` and `vitest` through a
 * node_modules link to the repository's own, so nothing is installed.
 */

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, "../..");
export const EXAMPLE = join(REPO_ROOT, "examples/stockflow");
const STAGES = join(here, "fixtures/stockflow-stages");
export const IMPORT_ERROR_TEST = join(STAGES, "stock-by-location.import-error.ts.txt");

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(
    "git",
    ["-c", "user.name=Consort Test", "-c", "user.email=test@consort.invalid", "-c", "commit.gpgsign=false", ...args],
    { cwd },
  );
  return stdout.trim();
}

export interface Checkout {
  dir: string;
  /** HEAD after the last commit. */
  commit: string;
  read(path: string): Promise<string>;
  remove(): Promise<void>;
}

export type Mutation = (dir: string) => Promise<void>;

/** Take the S2 implementation out (the driver has not written it yet). */
const withoutS2Code: Mutation = (dir) =>
  run("git", ["apply", "-R", join(STAGES, "s2-code.patch")], { cwd: dir }).then(() => undefined);
/** Take T8 out of the S2 test file (its RED has not happened yet). */
const withoutT8: Mutation = (dir) =>
  run("git", ["apply", "-R", join(STAGES, "t8-test.patch")], { cwd: dir }).then(() => undefined);
const withS2Code: Mutation = (dir) =>
  run("git", ["apply", join(STAGES, "s2-code.patch")], { cwd: dir }).then(() => undefined);

/** Replace `from` with `to` in a file, failing loudly when `from` is not there (the example changed). */
export function replaceIn(path: string, from: string, to: string): Mutation {
  return async (dir) => {
    const file = join(dir, path);
    const text = await readFile(file, "utf8");
    if (!text.includes(from))
      throw new Error(`${path} no longer contains ${JSON.stringify(from)}: update the stage edit`);
    await writeFile(file, text.replace(from, to));
  };
}

export function copyInto(source: string, path: string): Mutation {
  return async (dir) => writeFile(join(dir, path), await readFile(source, "utf8"));
}

/**
 * A git checkout of the example with one commit per entry of `commits`, each applying its
 * mutations in order. The first commit is the example itself after its mutations.
 */
export async function checkout(commits: Array<{ message: string; mutate?: Mutation[] }>): Promise<Checkout> {
  const dir = await mkdtemp(join(tmpdir(), "consort-stockflow-"));
  await cp(EXAMPLE, dir, { recursive: true, filter: (src) => !/[/\\](node_modules|junit\.xml)$/.test(src) });
  await symlink(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  await git(dir, "init", "-q", "-b", "f1-record-stock");
  for (const { message, mutate = [] } of commits) {
    for (const m of mutate) await m(dir);
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "--allow-empty", "-m", message);
  }
  return {
    dir,
    commit: await git(dir, "rev-parse", "HEAD"),
    read: (path) => readFile(join(dir, path), "utf8"),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Give a checkout a node_modules of its own, as an install leaves it (a confined user writes there:
 * vite's temporary files), its packages linked to the repository's.
 */
export async function ownNodeModules(c: Checkout): Promise<void> {
  const modules = join(c.dir, "node_modules");
  await rm(modules);
  await mkdir(modules);
  for (const name of await readdir(join(REPO_ROOT, "node_modules")))
    if (!name.startsWith(".vite")) await symlink(join(REPO_ROOT, "node_modules", name), join(modules, name));
}

/** The stage where T7's RED is written: S1 done (T1–T6 green), T7 added, S2 not implemented. */
export const RED_T7 = [{ message: "RED T7: stock by location", mutate: [withoutT8, withoutS2Code] }];
/** The stage after T7's GREEN: the driver implemented S2 on top of the RED commit. */
export const GREEN_T7 = [...RED_T7, { message: "GREEN T7: list stock at a location", mutate: [withS2Code] }];

/**
 * A database branch name no other test uses: every test file shares one Postgres server, and a
 * branch is a database, so names are global on it whatever root they descend from.
 */
const EXAMPLE_TESTS = (
  JSON.parse(readFileSync(join(EXAMPLE, ".consort/test-list.json"), "utf8")) as {
    tests: Array<{ id: string; file: string; title: string }>;
  }
).tests;

/** StockFlow's test `id` as a cycle request names it: its id, file and title in the test list. */
function exampleTest(id: string): { id: string; file: string; title: string } {
  const { file, title } = EXAMPLE_TESTS.find((t) => t.id === id)!;
  return { id, file, title };
}

/** StockFlow's T7 (story S2's first test) and the six tests of story S1 before it. */
export const T7 = exampleTest("T7");
export const S1_TESTS = ["T1", "T2", "T3", "T4", "T5", "T6"].map(exampleTest);

export const uniqueBranch = (prefix: string): string => `${prefix}-${randomBytes(4).toString("hex")}`;

/**
 * A suite of real cycles on the example: before it, the example's configuration (`exampleConfig`)
 * and a track database forked from its root (`trackDb`); after it, every checkout it staged
 * removed and the provider closed. `config` and `provider` are there once the suite has started.
 */
export function exampleSuite(trackPrefix: string): {
  readonly config: ConsortConfig;
  readonly provider: BranchProvider;
  trackDb: string;
  /** A checkout of the example (`checkout`), removed after the suite. */
  stage(commits: Parameters<typeof checkout>[0]): Promise<Checkout>;
} {
  let example: { config: ConsortConfig; provider: BranchProvider } | undefined;
  const started = () => {
    if (!example) throw new Error("exampleSuite: config and provider are set in beforeAll; read them in a test");
    return example;
  };
  const trackDb = uniqueBranch(trackPrefix);
  const checkouts: Checkout[] = [];
  beforeAll(async () => {
    const { config, provider } = await exampleConfig();
    example = { config, provider };
    await provider.createBranch(trackDb, { from: await provider.rootBranch() });
  });
  afterAll(async () => {
    await Promise.all(checkouts.map((c) => c.remove()));
    await example?.provider.close();
  });
  return {
    get config() {
      return started().config;
    },
    get provider() {
      return started().provider;
    },
    trackDb,
    async stage(commits) {
      const c = await checkout(commits);
      checkouts.push(c);
      return c;
    },
  };
}

/** The example's own configuration with the database on the run's shared server, under its own root. */
export async function exampleConfig(): Promise<{
  config: ConsortConfig;
  provider: BranchProvider;
  root: string;
  env: Record<string, string>;
}> {
  const { config } = readCheckoutConfig(EXAMPLE);
  const root = `cycle_root_${randomBytes(4).toString("hex")}`;
  const database = {
    ...config.database,
    provider: "postgres" as const,
    postgres: { urlEnv: "CONSORT_TEST_PG_URL", rootDatabase: root },
  };
  const env = { CONSORT_TEST_PG_URL: postgresUrl() };
  const provider = await createProvider(database, { env });
  return { config: { ...config, database }, provider, root, env };
}
