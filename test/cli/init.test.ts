import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { ACTION_USES, INSTALLED_ACTION, actionUpgrade, applyInit, parseRunsOn, planInit } from "../../src/cli/init.js";
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
  // The action's own files are checked on their own below.
  return Object.fromEntries(items.filter((i) => !i.path.startsWith(INSTALLED_ACTION)).map((i) => [i.path, i.action]));
};

type Workflow = {
  on: { workflow_dispatch: { inputs: Record<string, unknown> } };
  jobs: Record<
    string,
    {
      "runs-on"?: unknown;
      steps: Array<{ uses?: string; with?: Record<string, string>; env?: Record<string, string> }>;
    }
  >;
};
const workflow = async (name: string) =>
  parseYaml(await readFile(join(repo, `.github/workflows/consort-${name}.yml`), "utf8")) as Workflow;
const consortStep = (flow: Workflow) => Object.values(flow.jobs)[0]!.steps.find((s) => s.uses === ACTION_USES);

describe("consort init", { timeout: 60_000 }, () => {
  test("writes the configuration, both workflows and CODEOWNERS into a bare repository", async () => {
    expect(await init({ owners: ["@acme/maintainers"] })).toEqual({
      ".github/consort.yml": "create",
      ".github/workflows/consort-cycle.yml": "create",
      ".github/workflows/consort-agent.yml": "create",
      ".github/workflows/consort-deploy.yml": "create",
      ".github/workflows/consort-promote.yml": "create",
      ".github/CODEOWNERS": "create",
      ".gitignore": "create",
    });
    const config = parseYaml(await readFile(join(repo, ".github/consort.yml"), "utf8"));
    expect(ConsortConfig.parse(config)).toEqual(ConsortConfig.parse({}));
    expect(await readFile(join(repo, ".github/CODEOWNERS"), "utf8")).toContain("/.consort/ @acme/maintainers");
  });

  test("the cycle workflow takes one JSON input, runs the installed action's cycle step and uploads consort-cycle-result", async () => {
    await init();
    const cycle = await workflow("cycle");
    expect(Object.keys(cycle.on.workflow_dispatch.inputs)).toEqual(["request"]);
    expect(consortStep(cycle)?.with).toMatchObject({ step: "cycle", request: "${{ inputs.request }}" });
    const steps = cycle.jobs.cycle!.steps;
    expect(steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))?.with).toMatchObject({
      name: "consort-cycle-result",
    });
    // A refactor needs the merge base with the default branch: the commit is checked out with history.
    expect(steps.find((s) => s.with?.path === "work")?.with).toMatchObject({ "fetch-depth": 0 });
    // The action comes from the default branch's checkout at the workspace root, before the commit under test.
    const root = steps.find((s) => s.uses?.startsWith("actions/checkout@") && !s.with?.path);
    expect(root?.with?.["sparse-checkout"]).toContain(INSTALLED_ACTION);
    expect(steps.indexOf(root!)).toBeLessThan(steps.indexOf(consortStep(cycle)!));
    expect(consortStep(await workflow("agent"))?.with).toMatchObject({ step: "agent" });
  });

  test.each(["deploy", "promote"])(
    "the %s workflow runs its step of the installed action and uploads its result as consort-cycle-result",
    async (kind) => {
      await init();
      const flow = await workflow(kind);
      expect(Object.keys(flow.on.workflow_dispatch.inputs)).toEqual(["request"]);
      expect(consortStep(flow)?.with).toMatchObject({ step: kind });
      expect(flow.jobs[kind]!.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))?.with).toMatchObject({
        name: "consort-cycle-result",
      });
    },
  );

  test.each(["cycle", "deploy", "promote"])(
    "the %s step gets every variable a database provider reads, and no other step does",
    async (kind) => {
      await init();
      const flow = await workflow(kind);
      const expected = [
        "CONSORT_LOCAL_URL",
        "CONSORT_POSTGRES_URL",
        "DATABRICKS_TOKEN",
        "DATABRICKS_CLIENT_ID",
        "DATABRICKS_CLIENT_SECRET",
        "DATABRICKS_POSTGRES_USER",
      ];
      expect(Object.keys(consortStep(flow)?.env ?? {}).sort()).toEqual([...expected].sort());
      for (const name of expected) expect(consortStep(flow)?.env?.[name]).toBe(`\${{ secrets.${name} }}`);
      for (const step of flow.jobs[kind]!.steps.filter((s) => s !== consortStep(flow)))
        expect(step.env ?? {}).toEqual({});
    },
  );

  test("the variables are the ones the repository's configuration names", async () => {
    await mkdir(join(repo, ".github"), { recursive: true });
    await writeFile(
      join(repo, ".github/consort.yml"),
      "database:\n  provider: lakebase\n  lakebase: { host: h.example.com, project: shop, tokenEnv: SHOP_TOKEN, userEnv: SHOP_PG_USER }\n",
    );
    await init();
    const env = consortStep(await workflow("cycle"))?.env ?? {};
    expect(env.SHOP_TOKEN).toBe("${{ secrets.SHOP_TOKEN }}");
    expect(env.SHOP_PG_USER).toBe("${{ secrets.SHOP_PG_USER }}");
    expect(env.DATABRICKS_TOKEN).toBeUndefined();
  });

  test("the database jobs run on GitHub-hosted runners by default", async () => {
    await init();
    for (const kind of ["cycle", "deploy", "promote"])
      expect(Object.values((await workflow(kind)).jobs)[0]!["runs-on"]).toBe("ubuntu-latest");
  });

  test("--runs-on sets the database jobs up for a self-hosted runner, and a new consort.yml records the labels", async () => {
    await init({ runsOn: parseRunsOn("self-hosted, consort") });
    for (const kind of ["cycle", "deploy", "promote"])
      expect(Object.values((await workflow(kind)).jobs)[0]!["runs-on"]).toEqual(["self-hosted", "consort"]);
    const config = ConsortConfig.parse(parseYaml(await readFile(join(repo, ".github/consort.yml"), "utf8")));
    expect(config.jobs.runsOn).toEqual(["self-hosted", "consort"]);
  });

  test("without --runs-on the workflows take the repository's jobs.runsOn", async () => {
    await mkdir(join(repo, ".github"), { recursive: true });
    await writeFile(join(repo, ".github/consort.yml"), "jobs:\n  runsOn: [self-hosted, app-host]\n");
    await init();
    expect((await workflow("promote")).jobs.promote!["runs-on"]).toEqual(["self-hosted", "app-host"]);
  });

  test("--runs-on refuses a label that is no runner label", () => {
    expect(() => parseRunsOn("self hosted")).toThrow('--runs-on "self hosted" is not a list of runner labels');
    expect(() => parseRunsOn(",")).toThrow('--runs-on "," is not a list of runner labels');
  });

  test("installs the one action, bundle and role prompts, into the repository", async () => {
    await init();
    const manifest = await readFile(join(repo, INSTALLED_ACTION, "action.yml"), "utf8");
    expect(manifest).toMatch(/^# consort-action-version: \d+\.\d+\.\d+\+[0-9a-f]{12}\n/);
    expect((parseYaml(manifest) as { runs: { main: string } }).runs.main).toBe("dist/index.mjs");
    for (const file of ["dist/index.mjs", "dist/main.mjs", "roles/driver.md", "roles/navigator.md"])
      expect(existsSync(join(repo, INSTALLED_ACTION, file)), file).toBe(true);
  });

  test("on an installed repository it upgrades the action in place and says from which version to which", async () => {
    await init();
    const manifestPath = join(repo, INSTALLED_ACTION, "action.yml");
    const installed = await readFile(manifestPath, "utf8");
    const current = /^# consort-action-version: (\S+)/.exec(installed)![1]!;
    await writeFile(manifestPath, installed.replace(current, "0.0.9+000000000000"));
    await writeFile(join(repo, INSTALLED_ACTION, "dist/main.mjs"), "old bundle");
    const items = await planInit({ root: repo });
    expect(actionUpgrade(items)).toEqual({ from: "0.0.9+000000000000", to: current });
    expect(items.filter((i) => i.action === "upgrade").map((i) => i.path)).toEqual([
      `${INSTALLED_ACTION}/action.yml`,
      `${INSTALLED_ACTION}/dist/main.mjs`,
    ]);
    await applyInit(repo, items);
    expect(await readFile(manifestPath, "utf8")).toBe(installed);
    expect(actionUpgrade(await planInit({ root: repo }))).toBeUndefined();
  });

  test("running it again changes nothing", async () => {
    await init();
    const items = await planInit({ root: repo });
    expect(items.filter((i) => i.action !== "unchanged")).toEqual([]);
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
      "-C",
      repo,
      "--dry-run",
      "--json",
    ]);
    const plan = JSON.parse(stdout) as { dryRun: boolean; files: Array<{ path: string; action: string }> };
    expect(plan.dryRun).toBe(true);
    expect(new Set(plan.files.map((f) => f.action))).toEqual(new Set(["create"]));
    expect(existsSync(join(repo, ".github"))).toBe(false);
  });

  test("--dry-run shows each new file's text, and a diff of a file it would replace", async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [join(REPO_ROOT, "bin/consort.js"), "init", "-C", repo, "--dry-run", ...args]);
    const fresh = (await cli()).stdout;
    expect(fresh).toContain(
      "create    .github/workflows/consort-cycle.yml\n    # Consort: one RED/GREEN/REFACTOR cycle",
    );
    expect(fresh).toContain("          step: cycle");
    expect(fresh).toMatch(/create {4}\.github\/actions\/consort\/dist\/main\.mjs\n {4}\(bundled code, \d+ KiB\)/);
    await init();
    await writeFile(join(repo, ".github/consort.yml"), "version: 1\nrepairBound: 5\n");
    const changed = (await cli("--force")).stdout;
    expect(changed).toContain(
      "overwrite .github/consort.yml\n    --- a/.github/consort.yml\n    +++ b/.github/consort.yml",
    );
    expect(changed).toContain("    -repairBound: 5");
    expect(await readFile(join(repo, ".github/consort.yml"), "utf8")).toBe("version: 1\nrepairBound: 5\n");
  });

  test("ignores what a cycle writes in the checkout: a new .gitignore lists it, an existing one gets only the lines it lacks", async () => {
    await init();
    expect((await readFile(join(repo, ".gitignore"), "utf8")).split("\n")).toEqual(
      expect.arrayContaining(["junit.xml", "cycle-result.json", "cycle-summary.md"]),
    );
    await writeFile(join(repo, ".gitignore"), "node_modules/\njunit.xml\n");
    await mkdir(join(repo, ".github"), { recursive: true });
    await writeFile(join(repo, ".github/consort.yml"), "junit: reports/junit.xml\n");
    expect((await init())[".gitignore"]).toBe("append");
    expect(await readFile(join(repo, ".gitignore"), "utf8")).toBe(
      "node_modules/\njunit.xml\n\n# What `consort cycle` writes (the JUnit report, the result and its summary)\nreports/junit.xml\ncycle-result.json\ncycle-summary.md\n",
    );
    expect((await init())[".gitignore"]).toBe("unchanged");
  });

  test("an owner that is not a GitHub user, team or e-mail is refused", async () => {
    await expect(planInit({ root: repo, owners: ["not an owner"] })).rejects.toThrow(/--owners: "not an owner"/);
  });
});
