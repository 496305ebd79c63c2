import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { CycleResult } from "../../src/contracts/cycle-result.js";
import { postgresUrl } from "../helpers/postgres.js";
import { GREEN_T7, REPO_ROOT, checkout, uniqueBranch, type Checkout } from "../cycle/stockflow.js";

const TRACK_DB = uniqueBranch("cli-track");

/** `consort cycle` from the terminal, on a checkout whose history holds the RED and GREEN commits. */

const run = promisify(execFile);
let green: Checkout;
const root = `cli_root_${Date.now().toString(36)}`;

async function consort(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(REPO_ROOT, "bin/consort.js"), ...args], {
      cwd,
      env: { ...process.env, CONSORT_TEST_PG_URL: postgresUrl() },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function writeConfig(dir: string, name: string, commands: Record<string, string> = {}): Promise<string> {
  const path = join(dir, name);
  const original = (await import("yaml")).parse(await readFile(join(dir, ".github/consort.yml"), "utf8")) as Record<
    string,
    Record<string, unknown>
  >;
  await writeFile(
    path,
    stringify({
      ...original,
      commands: { ...original.commands, ...commands },
      database: { provider: "postgres", postgres: { urlEnv: "CONSORT_TEST_PG_URL", rootDatabase: root } },
    }),
  );
  return path;
}

beforeAll(async () => {
  green = await checkout(GREEN_T7);
});
afterAll(async () => {
  await green?.remove();
});

describe.concurrent("consort cycle", { timeout: 120_000 }, () => {
  test("--step green --tests T7 --frozen-at HEAD~1 verifies the GREEN, exits 0 and writes the result", async () => {
    const config = await writeConfig(green.dir, "consort-pg.yml");
    const out = join(green.dir, "out-green");
    const { code, stdout, stderr } = await consort(
      [
        "cycle",
        "--step",
        "green",
        "--tests",
        "T7",
        "--frozen-at",
        "HEAD~1",
        "--database-branch",
        TRACK_DB,
        "--config",
        config,
        "--out-dir",
        out,
        "--json",
      ],
      green.dir,
    );

    expect(stderr).toContain("testing: vitest run");
    expect(code).toBe(0);
    const printed = CycleResult.parse(JSON.parse(stdout));
    expect(printed).toMatchObject({ verdict: "verified", step: "green", commit: green.commit });
    expect(printed.request.tests.earlierGreen.map((t) => t.id)).toEqual(["T1", "T2", "T3", "T4", "T5", "T6"]);
    expect(printed.request.frozenTestFiles.map((f) => f.path).sort()).toEqual([
      "test/file-stock.test.ts",
      "test/layering.test.ts",
      "test/stock-by-location.test.ts",
      "test/stock-records-constraints.test.ts",
    ]);
    expect(JSON.parse(await readFile(join(out, "cycle-result.json"), "utf8"))).toEqual(printed);
  });

  test("a refused cycle exits 1 and prints why", async () => {
    const config = await writeConfig(green.dir, "consort-noreport.yml", { migrate: "true", test: "true" });
    const { code, stdout } = await consort(
      [
        "cycle",
        "--step",
        "red",
        "--tests",
        "T7",
        "--database-branch",
        TRACK_DB,
        "--config",
        config,
        "--out-dir",
        join(green.dir, "out-red"),
        "--quiet",
      ],
      green.dir,
    );
    expect(code).toBe(1);
    expect(stdout).toContain("RED refused");
    expect(stdout).toContain("wrote no JUnit report");
  });

  test("a step that does not exist exits 2 before anything is made", async () => {
    const { code, stderr } = await consort(["cycle", "--step", "purple", "--tests", "T7"], green.dir);
    expect(code).toBe(2);
    expect(stderr).toContain("--step must be one of red, green, refactor, release");
  });
});
