import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLocalRequest } from "../../src/cycle/local-request.js";
import { judgeMissing } from "../../src/cycle/new-modules.js";
import { newModulesAt } from "../../src/cycle/new-modules-git.js";
import { hashFrozenText } from "../../src/gates/freeze.js";

/**
 * Which declared modules a track creates, read from a real git repository: absent from the tree the
 * design gate approved, and whether the RED's commit holds them and their declared names.
 */

const run = promisify(execFile);
let repo: string;
let approved: string;
let red: string;
const ARCHITECTURE = JSON.stringify({
  layers: [{ name: "services", paths: ["src/**"] }],
  modules: [
    { name: "pricing", layer: "services", path: "src/pricing.ts", responsibility: "prices", exports: ["priceFor"] },
    {
      name: "discounts",
      layer: "services",
      path: "src/discounts.ts",
      responsibility: "discounts",
      exports: ["discountFor", "bulkDiscount"],
    },
    { name: "stock", layer: "services", path: "src/stock.ts", responsibility: "stock" },
  ],
});

async function commit(files: Record<string, string>, message: string): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
  }
  await run("git", ["add", "-A"], { cwd: repo });
  await run("git", ["commit", "-qm", message], { cwd: repo });
  return (await run("git", ["rev-parse", "HEAD"], { cwd: repo })).stdout.trim();
}

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-new-modules-"));
  await run("git", ["init", "-q", "--initial-branch=main"], { cwd: repo });
  await run("git", ["config", "user.name", "T"], { cwd: repo });
  await run("git", ["config", "user.email", "t@example.com"], { cwd: repo });
  await commit({ "src/stock.ts": "export const stock = 1;\n" }, "main");
  await run("git", ["switch", "-qc", "f1"], { cwd: repo });
  approved = await commit({ ".consort/architecture.json": ARCHITECTURE }, "architecture");
  // An earlier unit's GREEN wrote discounts with one of its two declared names; then the RED.
  await commit({ "src/discounts.ts": "export function discountFor() {\n  return 0;\n}\n" }, "green");
  red = await commit({ "test/pricing.test.ts": "// RED\n" }, "red");
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

const ref = () => ({ path: ".consort/architecture.json", sha256: hashFrozenText(ARCHITECTURE), approvedAt: approved });

describe("the modules a track creates, from git", () => {
  it("are the declared modules absent at the design gate's commit: written or not at the RED, and the declared names not written yet", async () => {
    expect(await newModulesAt(repo, red, ref())).toEqual({
      ok: true,
      modules: [
        { path: "src/pricing.ts", written: false, exports: ["priceFor"], unwritten: [] },
        {
          path: "src/discounts.ts",
          written: true,
          exports: ["discountFor", "bulkDiscount"],
          unwritten: ["bulkDiscount"],
        },
      ],
      existing: ["src/stock.ts"],
    });
  });

  it("are none when the architecture at the commit is not the approved one", async () => {
    expect(await newModulesAt(repo, red, { ...ref(), sha256: "0".repeat(64) })).toEqual({
      ok: false,
      reason:
        ".consort/architecture.json at " +
        red.slice(0, 12) +
        " is not the architecture the design gate approved, so it declares nothing (restore the approved file)",
    });
  });

  it("are none when the design gate's commit is not in the checkout", async () => {
    const result = await newModulesAt(repo, red, { ...ref(), approvedAt: "1".repeat(40) });
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining("is not in the checkout") });
  });

  it("do not include a module that existed when the design gate was approved: failing to load it is refused", async () => {
    const modules = await newModulesAt(repo, red, ref());
    expect(judgeMissing({ language: "js", module: "../src/stock.js" }, "test/pricing.test.ts", modules)).toEqual({
      declared: false,
      why: "'../src/stock.js' cannot be loaded, but src/stock.ts existed when the design gate was approved: it is not a module the track creates, so failing to load it proves nothing (fix the import)",
    });
  });

  it("refuses a declared module the commit already holds when the test still cannot load it", async () => {
    const modules = await newModulesAt(repo, red, ref());
    expect(judgeMissing({ language: "js", module: "../src/discounts.js" }, "test/pricing.test.ts", modules)).toEqual({
      declared: false,
      why: "'../src/discounts.js' cannot be loaded, yet src/discounts.ts is in the commit: fix the import (a file that does not load proves nothing)",
    });
  });

  it("refuses a declared name the module already mentions", async () => {
    const modules = await newModulesAt(repo, red, ref());
    expect(judgeMissing({ language: "js", export: "discountFor" }, "test/pricing.test.ts", modules)).toMatchObject({
      declared: false,
      why: expect.stringContaining("src/discounts.ts at this commit mentions it"),
    });
  });
});

describe("a local RED's request (consort cycle, run_cycle)", () => {
  it("names the checkout's architecture and, as the design gate's commit, the merge base with the default branch", async () => {
    await commit(
      {
        ".consort/test-list.json": JSON.stringify({
          tests: [{ id: "T1", ac: "S1-AC1", file: "test/pricing.test.ts", title: "prices", kind: "behavior" }],
        }),
      },
      "list",
    );
    const request = await buildLocalRequest({ cwd: repo, step: "red", tests: ["T1"] });
    const base = (await run("git", ["merge-base", "HEAD", "main"], { cwd: repo })).stdout.trim();
    expect(request.architecture).toEqual({ ...ref(), approvedAt: base });
    const green = await buildLocalRequest({ cwd: repo, step: "green", tests: ["T1"] });
    expect(green.architecture).toBeUndefined();
  });
});
