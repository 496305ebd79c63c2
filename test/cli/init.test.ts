import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { applyInit, planInit } from "../../src/cli/init.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { REPO_ROOT } from "../cycle/stockflow.js";

const run = promisify(execFile);
let repo: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-init-"));
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

const init = async (options: Partial<Parameters<typeof planInit>[0]> = {}) => {
  const items = await planInit({ root: repo, ...options });
  await applyInit(repo, items);
  return Object.fromEntries(items.map((i) => [i.path, i.action]));
};

describe("consort init", { timeout: 60_000 }, () => {
  test("writes the configuration, both workflows and CODEOWNERS into a bare repository", async () => {
    expect(await init({ owners: ["@acme/maintainers"] })).toEqual({
      ".github/consort.yml": "create",
      ".github/workflows/consort-cycle.yml": "create",
      ".github/workflows/consort-agent.yml": "create",
      ".github/workflows/consort-deploy.yml": "create",
      ".github/workflows/consort-promote.yml": "create",
      ".github/CODEOWNERS": "create",
    });
    const config = parseYaml(await readFile(join(repo, ".github/consort.yml"), "utf8"));
    expect(ConsortConfig.parse(config)).toEqual(ConsortConfig.parse({}));
    expect(await readFile(join(repo, ".github/CODEOWNERS"), "utf8")).toContain("/.consort/ @acme/maintainers");
  });

  test("the cycle workflow takes one JSON input, runs the cycle action and uploads consort-cycle-result", async () => {
    await init();
    const workflow = parseYaml(await readFile(join(repo, ".github/workflows/consort-cycle.yml"), "utf8")) as {
      on: { workflow_dispatch: { inputs: Record<string, unknown> } };
      jobs: { cycle: { steps: Array<{ uses?: string; with?: Record<string, string> }> } };
    };
    expect(Object.keys(workflow.on.workflow_dispatch.inputs)).toEqual(["request"]);
    const steps = workflow.jobs.cycle.steps;
    expect(steps.find((s) => s.uses === "consort-for-github/consort/actions/cycle@v1")?.with).toMatchObject({
      request: "${{ inputs.request }}",
    });
    expect(steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))?.with).toMatchObject({
      name: "consort-cycle-result",
    });
    // A refactor needs the merge base with the default branch: the commit is checked out with history.
    expect(steps.find((s) => s.with?.path === "work")?.with).toMatchObject({ "fetch-depth": 0 });
    const agent = parseYaml(await readFile(join(repo, ".github/workflows/consort-agent.yml"), "utf8")) as {
      jobs: { agent: { steps: Array<{ uses?: string }> } };
    };
    expect(agent.jobs.agent.steps.some((s) => s.uses === "consort-for-github/consort/actions/agent@v1")).toBe(true);
  });

  test.each(["deploy", "promote"])(
    "the %s workflow runs its action and uploads its result as consort-cycle-result",
    async (kind) => {
      await init();
      const workflow = parseYaml(await readFile(join(repo, `.github/workflows/consort-${kind}.yml`), "utf8")) as {
        on: { workflow_dispatch: { inputs: Record<string, unknown> } };
        jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, string> }> }>;
      };
      expect(Object.keys(workflow.on.workflow_dispatch.inputs)).toEqual(["request"]);
      const steps = workflow.jobs[kind]!.steps;
      expect(steps.some((s) => s.uses === `consort-for-github/consort/actions/${kind}@v1`)).toBe(true);
      expect(steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))?.with).toMatchObject({
        name: "consort-cycle-result",
      });
    },
  );

  test("running it again changes nothing", async () => {
    await init();
    expect(Object.values(await init())).toEqual(Array(6).fill("unchanged"));
  });

  test("a configuration the team edited is kept unless --force", async () => {
    await init();
    await writeFile(join(repo, ".github/consort.yml"), "version: 1\nrepairBound: 5\n");
    expect((await init())[".github/consort.yml"]).toBe("keep");
    expect(await readFile(join(repo, ".github/consort.yml"), "utf8")).toBe("version: 1\nrepairBound: 5\n");
    expect((await init({ force: true }))[".github/consort.yml"]).toBe("overwrite");
    expect(await readFile(join(repo, ".github/consort.yml"), "utf8")).toContain("provider: local");
  });

  test("an existing CODEOWNERS is never rewritten, only given the lines to add", async () => {
    await mkdir(join(repo, ".github"), { recursive: true });
    await writeFile(join(repo, ".github/CODEOWNERS"), "* @acme/everyone\n");
    const items = await planInit({ root: repo, owners: ["@acme/leads"], force: true });
    await applyInit(repo, items);
    const codeowners = items.find((i) => i.path === ".github/CODEOWNERS")!;
    expect(codeowners.action).toBe("suggest");
    expect(codeowners.note).toContain("/.consort/ @acme/leads");
    expect(await readFile(join(repo, ".github/CODEOWNERS"), "utf8")).toBe("* @acme/everyone\n");
  });

  test("--dry-run from the command line writes nothing and says what it would do", async () => {
    const { stdout } = await run(process.execPath, [
      join(REPO_ROOT, "bin/consort.js"),
      "init",
      "--dir",
      repo,
      "--dry-run",
      "--ref",
      "v2",
      "--json",
    ]);
    const plan = JSON.parse(stdout) as { dryRun: boolean; files: Array<{ path: string; action: string }> };
    expect(plan.dryRun).toBe(true);
    expect(plan.files.map((f) => f.action)).toEqual(Array(6).fill("create"));
    expect(existsSync(join(repo, ".github"))).toBe(false);
  });

  test("an owner that is not a GitHub user, team or e-mail is refused", async () => {
    await expect(planInit({ root: repo, owners: ["not an owner"] })).rejects.toThrow(/--owners: "not an owner"/);
  });
});
