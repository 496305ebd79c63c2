import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Command } from "commander";
import { ConsortConfig, providerEnv } from "../config/consort-config.js";
import { CONFIG_PATH, ConfigError, readCheckoutConfig } from "../config/load.js";
import { CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE } from "../cycle/index.js";
import { consortCommand, PACKAGE_VERSION } from "./invocation.js";
import { CliError, printResult } from "./output.js";

/**
 * `consort init`: put Consort into a repository: `.github/consort.yml`, the workflows the app
 * dispatches, the one action they run (copied into `.github/actions/consort`, so no workflow
 * depends on a repository that may not exist), and a CODEOWNERS suggestion. Idempotent: files
 * already as they should be are left alone; the action is upgraded in place (saying from which
 * version to which); other files that differ are kept unless --force; --dry-run writes nothing.
 */

const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TEMPLATES_DIR = join(PACKAGE_ROOT, "templates");
/** The action's source in this package, and where a repository keeps its copy. */
const ACTION_SOURCE = join(PACKAGE_ROOT, "actions/consort");
export const INSTALLED_ACTION = ".github/actions/consort";
/** What `uses:` says in every workflow: the copy in the default branch's checkout. */
export const ACTION_USES = `./${INSTALLED_ACTION}`;

type InitAction = "create" | "unchanged" | "overwrite" | "upgrade" | "keep" | "suggest" | "append";

export interface InitItem {
  path: string;
  action: InitAction;
  /** For `suggest`: the lines to add by hand. For `keep`: why it was kept. */
  note?: string;
  content: string;
  /** What the file holds now, when it exists. */
  current?: string;
}

export interface InitOptions {
  root: string;
  /** The runner labels of the database jobs (`jobs.runsOn`); by default the repository's own, else the schema's. */
  runsOn?: string[];
  /** CODEOWNERS owners, e.g. "@my-org/maintainers". */
  owners?: string[];
  force?: boolean;
}

/** How each file is treated when it already exists and differs. */
type Policy = "keep-unless-forced" | "suggest-lines" | "upgrade" | "append-lines";

const TEMPLATES: Array<{ template: string; path: string; policy: Policy }> = [
  { template: "consort.yml", path: CONFIG_PATH, policy: "keep-unless-forced" },
  { template: "consort-cycle.yml", path: ".github/workflows/consort-cycle.yml", policy: "keep-unless-forced" },
  { template: "consort-agent.yml", path: ".github/workflows/consort-agent.yml", policy: "keep-unless-forced" },
  { template: "consort-deploy.yml", path: ".github/workflows/consort-deploy.yml", policy: "keep-unless-forced" },
  { template: "consort-promote.yml", path: ".github/workflows/consort-promote.yml", policy: "keep-unless-forced" },
  // A repository's CODEOWNERS is its own: create it when missing, otherwise only suggest lines.
  { template: "CODEOWNERS", path: ".github/CODEOWNERS", policy: "suggest-lines" },
];

/** The action's files a repository needs: its manifest, its bundle and the agents' role prompts. */
function actionFiles(): string[] {
  const roles = readdirSync(join(ACTION_SOURCE, "roles"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `roles/${name}`);
  return ["action.yml", "dist/index.mjs", "dist/main.mjs", ...roles];
}

const VERSION_LINE = /^# consort-action-version: (\S+)/m;

/** The installed action's version: the package's, and a hash of the files, so two builds of one version differ. */
function actionVersion(files: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const path of Object.keys(files).sort()) hash.update(`${path}\0${files[path]}\0`);
  return `${PACKAGE_VERSION}+${hash.digest("hex").slice(0, 12)}`;
}

/** The action as a repository gets it: its files, action.yml headed by the version. */
async function renderAction(): Promise<Array<{ path: string; content: string; policy: Policy }>> {
  const files: Record<string, string> = {};
  for (const file of actionFiles()) files[file] = await readFile(join(ACTION_SOURCE, file), "utf8");
  const version = actionVersion(files);
  files["action.yml"] =
    `# consort-action-version: ${version}\n# Installed by \`consort init\`; upgrade it with \`${consortCommand("init")}\`, do not edit.\n` +
    files["action.yml"];
  return Object.entries(files).map(([file, content]) => ({
    path: `${INSTALLED_ACTION}/${file}`,
    content,
    policy: "upgrade",
  }));
}

/** The `env:` lines of the Consort step: every variable a database provider reads, from the repository's secrets. */
function providerEnvLines(database: ConsortConfig["database"]): string {
  return providerEnv(database)
    .map(({ name }) => `          ${name}: \${{ secrets.${name} }}`)
    .join("\n");
}

/** The repository's own configuration when it has a valid one (its variable names, its runners), else the defaults. */
function repositoryConfig(root: string): ConsortConfig {
  try {
    return readCheckoutConfig(root).config;
  } catch (error) {
    // An invalid file is `consort validate`'s to report; the workflows then name the defaults.
    if (error instanceof ConfigError) return ConsortConfig.parse({});
    throw error;
  }
}

/** `--runs-on a,b`, checked by the configuration's own rule for runner labels. */
export function parseRunsOn(value: string): string[] {
  const labels = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const parsed = ConsortConfig.shape.jobs.safeParse({ runsOn: labels });
  if (!parsed.success)
    throw new CliError(
      `--runs-on "${value}" is not a list of runner labels`,
      "e.g. --runs-on self-hosted,consort (a self-hosted runner beside the app) or --runs-on ubuntu-latest",
      2,
    );
  return parsed.data.runsOn;
}

async function renderTemplates(
  options: InitOptions,
): Promise<Array<{ path: string; content: string; policy: Policy }>> {
  const owners = options.owners?.length ? options.owners : ["@OWNER"];
  const repository = repositoryConfig(options.root);
  const env = providerEnvLines(repository.database);
  const runsOn = options.runsOn ?? repository.jobs.runsOn;
  const list = `[${runsOn.join(", ")}]`;
  const templates = await Promise.all(
    TEMPLATES.map(async (target) => ({
      path: target.path,
      policy: target.policy,
      content: (await readFile(join(TEMPLATES_DIR, target.template), "utf8"))
        .replaceAll("__PROVIDER_ENV__", env)
        .replaceAll("__RUNS_ON_LIST__", list)
        .replaceAll("__RUNS_ON__", runsOn.length === 1 ? runsOn[0]! : list)
        .replaceAll("__OWNERS__", owners.join(" ")),
    })),
  );
  return [...templates, ...(await renderAction()), ignoredOutputs(repository)];
}

const IGNORE_HEADER = "# What `consort cycle` writes (the JUnit report, the result and its summary)";

/** The .gitignore lines for what a local cycle leaves in the checkout, so nobody is asked to commit it. */
function ignoredOutputs(repository: ConsortConfig): { path: string; content: string; policy: Policy } {
  const lines = [repository.junit, CYCLE_RESULT_FILE, CYCLE_SUMMARY_FILE];
  return { path: ".gitignore", policy: "append-lines", content: `${IGNORE_HEADER}\n${lines.join("\n")}\n` };
}

/** `current` with the lines of `wanted` it lacks appended under their header, or undefined when it has them all. */
function appendedLines(current: string, wanted: string): string | undefined {
  const have = new Set(current.split("\n").map((line) => line.trim()));
  const [header, ...lines] = wanted.trimEnd().split("\n");
  const missing = lines.filter((line) => !have.has(line));
  if (missing.length === 0) return undefined;
  const base = current === "" || current.endsWith("\n") ? current : `${current}\n`;
  return `${base}${base ? "\n" : ""}${header}\n${missing.join("\n")}\n`;
}

/** What init would do, file by file, without writing anything. */
export async function planInit(options: InitOptions): Promise<InitItem[]> {
  for (const owner of options.owners ?? []) {
    if (!OWNER.test(owner))
      throw new CliError(
        `--owners: "${owner}" is not a GitHub user (@name), team (@org/team) or e-mail`,
        "e.g. --owners @my-org/maintainers",
      );
  }
  const items: InitItem[] = [];
  for (const file of await renderTemplates(options)) {
    const target = join(options.root, file.path);
    const current = existsSync(target) ? await readFile(target, "utf8") : undefined;
    const item = { path: file.path, content: file.content, ...(current === undefined ? {} : { current }) };
    if (current === undefined) items.push({ ...item, action: "create" });
    else if (current === file.content) items.push({ ...item, action: "unchanged" });
    else if (file.policy === "upgrade") items.push({ ...item, action: "upgrade" });
    else if (file.policy === "append-lines") {
      const appended = appendedLines(current, file.content);
      items.push(appended ? { ...item, content: appended, action: "append" } : { ...item, action: "unchanged" });
    } else if (file.policy === "suggest-lines") {
      const missing = file.content
        .split("\n")
        .filter((line) => line.trim() && !line.startsWith("#") && !current.split("\n").includes(line));
      items.push(
        missing.length ? { ...item, action: "suggest", note: missing.join("\n") } : { ...item, action: "unchanged" },
      );
    } else if (options.force) items.push({ ...item, action: "overwrite" });
    else items.push({ ...item, action: "keep", note: "differs from the template; kept (pass --force to replace it)" });
  }
  return items;
}

const OWNER = /^@[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\/[A-Za-z0-9._-]+)?$|^[^@\s]+@[^@\s]+$/;

/** From which version to which the installed action moves, when it does. */
export function actionUpgrade(items: InitItem[]): { from: string; to: string } | undefined {
  const manifest = items.find((item) => item.path === `${INSTALLED_ACTION}/action.yml`);
  const changed = items.some((item) => item.path.startsWith(`${INSTALLED_ACTION}/`) && item.action === "upgrade");
  if (!manifest || !changed) return undefined;
  const to = VERSION_LINE.exec(manifest.content)?.[1] ?? "unknown";
  const from =
    (manifest.current === undefined ? undefined : VERSION_LINE.exec(manifest.current)?.[1]) ?? "an unversioned copy";
  return { from, to };
}

export async function applyInit(root: string, items: InitItem[]): Promise<void> {
  for (const item of items) {
    if (item.action === "unchanged" || item.action === "keep" || item.action === "suggest") continue;
    const target = join(root, item.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, item.content);
  }
}

const run = promisify(execFile);

/** A unified diff of a file's current text and what init would write (git's, the one diff everybody reads). */
async function diffOf(item: InitItem): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "consort-init-diff-"));
  try {
    await writeFile(join(dir, "current"), item.current ?? "");
    await writeFile(join(dir, "proposed"), item.content);
    const { stdout } = await run("git", ["diff", "--no-index", "--no-color", "current", "proposed"], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    return stdout
      .replace(/^diff --git .*\n(?:index .*\n)?/m, "")
      .replace(/^--- a\/current$/m, `--- a/${item.path}`)
      .replace(/^\+\+\+ b\/proposed$/m, `+++ b/${item.path}`)
      .trimEnd();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What --dry-run shows of one file: its whole text when new, a diff when it would change; bundles by size only. */
async function preview(item: InitItem): Promise<string | undefined> {
  if (item.action === "unchanged" || item.action === "suggest") return undefined;
  if (item.path.endsWith(".mjs")) return `    (bundled code, ${(item.content.length / 1024).toFixed(0)} KiB)`;
  if (item.action === "create") return item.content.trimEnd().replace(/^/gm, "    ");
  return (await diffOf(item)).replace(/^/gm, "    ");
}

const VERB: Record<InitAction, string> = {
  create: "create   ",
  overwrite: "overwrite",
  upgrade: "upgrade  ",
  unchanged: "unchanged",
  keep: "keep     ",
  suggest: "suggest  ",
  append: "append   ",
};

export function registerInitCommands(program: Command): void {
  program
    .command("init")
    .description(
      `Add Consort to a repository: .github/consort.yml, the workflows the app dispatches (cycle, agent, deploy, promote), the action they run (${INSTALLED_ACTION}), a CODEOWNERS suggestion. Run again to upgrade the action`,
    )
    .option("-C, --cwd <dir>", "the repository's root", ".")
    .option(
      "--owners <owners>",
      "CODEOWNERS of .consort/ and Consort's files, comma-separated (e.g. @my-org/maintainers)",
    )
    .option(
      "--runs-on <labels>",
      "runner labels of the cycle, deploy and promote jobs, comma-separated (default: jobs.runsOn, else ubuntu-latest); e.g. self-hosted,consort for a runner beside the app",
      parseRunsOn,
    )
    .option("--force", "replace Consort files that differ from the templates (never CODEOWNERS)")
    .option("--dry-run", "show what would change, with each file's text or diff; write nothing")
    .option("--json", "print the plan as JSON")
    .action(
      async (options: {
        cwd: string;
        owners?: string;
        runsOn?: string[];
        force?: boolean;
        dryRun?: boolean;
        json?: boolean;
      }) => {
        const root = resolve(options.cwd);
        if (!existsSync(root)) throw new CliError(`${root} does not exist`, "pass the repository's root with -C <dir>");
        const items = await planInit({
          root,
          owners: (options.owners ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          force: options.force,
          ...(options.runsOn ? { runsOn: options.runsOn } : {}),
        });
        if (!options.dryRun) await applyInit(root, items);
        const upgrade = actionUpgrade(items);
        const summary = items.map(({ path, action, note }) => ({ path, action, ...(note ? { note } : {}) }));
        const previews = options.dryRun && !options.json ? await Promise.all(items.map(preview)) : [];
        printResult(
          options,
          { dryRun: Boolean(options.dryRun), root, files: summary, ...(upgrade ? { upgrade } : {}) },
          () =>
            [
              ...(options.dryRun ? ["(dry run: nothing written)"] : []),
              ...items.flatMap((item, index) => [
                `${VERB[item.action]} ${item.path}${item.action === "keep" ? `  (${item.note})` : ""}`,
                ...(previews[index] ? [previews[index]] : []),
              ]),
              ...(upgrade
                ? [
                    `\n${options.dryRun ? "Would upgrade" : "Upgraded"} ${INSTALLED_ACTION} from ${upgrade.from} to ${upgrade.to}.`,
                  ]
                : []),
              ...items.filter((i) => i.action === "suggest").map((i) => `\nAdd these lines to ${i.path}:\n${i.note}`),
              ...(items.some((i) => i.action !== "unchanged" && i.action !== "keep" && i.action !== "suggest") &&
              !options.dryRun
                ? [
                    `\nNext: commit these files on the default branch, install the Consort app, then run \`${consortCommand("protect")}\`.`,
                  ]
                : []),
            ].join("\n"),
        );
      },
    );
}
