import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { CONFIG_PATH } from "../config/load.js";
import { CliError, printResult } from "./output.js";

/**
 * `consort init`: put Consort into a repository: `.github/consort.yml`, the two workflows the app
 * dispatches, and a CODEOWNERS suggestion. Idempotent: files already as they should be are left
 * alone, files that differ are kept unless --force, and --dry-run writes nothing.
 */

const TEMPLATES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../templates");
const DEFAULT_ACTIONS = "consort-for-github/consort/actions";
const DEFAULT_VERSION = "v1";

type InitAction = "create" | "unchanged" | "overwrite" | "keep" | "suggest";

export interface InitItem {
  path: string;
  action: InitAction;
  /** For `suggest`: the lines to add by hand. For `keep`: why it was kept. */
  note?: string;
  content: string;
}

export interface InitOptions {
  root: string;
  actions?: string;
  version?: string;
  /** CODEOWNERS owners, e.g. "@my-org/maintainers". */
  owners?: string[];
  force?: boolean;
}

const TARGETS = [
  { template: "consort.yml", path: CONFIG_PATH, mayOverwrite: true },
  { template: "consort-cycle.yml", path: ".github/workflows/consort-cycle.yml", mayOverwrite: true },
  { template: "consort-agent.yml", path: ".github/workflows/consort-agent.yml", mayOverwrite: true },
  { template: "consort-deploy.yml", path: ".github/workflows/consort-deploy.yml", mayOverwrite: true },
  { template: "consort-promote.yml", path: ".github/workflows/consort-promote.yml", mayOverwrite: true },
  // A repository's CODEOWNERS is its own: create it when missing, otherwise only suggest lines.
  { template: "CODEOWNERS", path: ".github/CODEOWNERS", mayOverwrite: false },
] as const;

const OWNER = /^@[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\/[A-Za-z0-9._-]+)?$|^[^@\s]+@[^@\s]+$/;

async function renderTemplates(
  options: InitOptions,
): Promise<Array<{ path: string; content: string; mayOverwrite: boolean }>> {
  const actions = options.actions ?? DEFAULT_ACTIONS;
  const version = options.version ?? DEFAULT_VERSION;
  const owners = options.owners?.length ? options.owners : ["@OWNER"];
  return Promise.all(
    TARGETS.map(async (target) => ({
      path: target.path,
      mayOverwrite: target.mayOverwrite,
      content: (await readFile(join(TEMPLATES_DIR, target.template), "utf8"))
        .replaceAll("__CONSORT_ACTIONS__", actions)
        .replaceAll("__CONSORT_VERSION__", version)
        .replaceAll("__OWNERS__", owners.join(" ")),
    })),
  );
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
    if (current === undefined) items.push({ path: file.path, action: "create", content: file.content });
    else if (current === file.content) items.push({ path: file.path, action: "unchanged", content: file.content });
    else if (!file.mayOverwrite) {
      const missing = file.content
        .split("\n")
        .filter((line) => line.trim() && !line.startsWith("#") && !current.split("\n").includes(line));
      items.push(
        missing.length
          ? { path: file.path, action: "suggest", note: missing.join("\n"), content: file.content }
          : { path: file.path, action: "unchanged", content: file.content },
      );
    } else if (options.force) items.push({ path: file.path, action: "overwrite", content: file.content });
    else
      items.push({
        path: file.path,
        action: "keep",
        note: "differs from the template; kept (pass --force to replace it)",
        content: file.content,
      });
  }
  return items;
}

export async function applyInit(root: string, items: InitItem[]): Promise<void> {
  for (const item of items) {
    if (item.action !== "create" && item.action !== "overwrite") continue;
    const target = join(root, item.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, item.content);
  }
}

const VERB: Record<InitAction, string> = {
  create: "create   ",
  overwrite: "overwrite",
  unchanged: "unchanged",
  keep: "keep     ",
  suggest: "suggest  ",
};

export function registerInitCommands(program: Command): void {
  program
    .command("init")
    .description(
      "Add Consort to a repository: .github/consort.yml, the workflows the app dispatches (cycle, agent, deploy, promote), a CODEOWNERS suggestion",
    )
    .option("-C, --dir <dir>", "the repository's root", ".")
    .option(
      "--owners <owners>",
      "CODEOWNERS of .consort/ and Consort's files, comma-separated (e.g. @my-org/maintainers)",
    )
    .option("--actions <path>", "where the Consort actions live (owner/repo/actions)", DEFAULT_ACTIONS)
    .option("--ref <ref>", "the tag or commit of the actions to pin", DEFAULT_VERSION)
    .option("--force", "replace Consort files that differ from the templates (never CODEOWNERS)")
    .option("--dry-run", "show what would change; write nothing")
    .option("--json", "print the plan as JSON")
    .action(
      async (options: {
        dir: string;
        owners?: string;
        actions: string;
        ref: string;
        force?: boolean;
        dryRun?: boolean;
        json?: boolean;
      }) => {
        const root = resolve(options.dir);
        if (!existsSync(root)) throw new CliError(`${root} does not exist`, "pass the repository's root with --dir");
        const items = await planInit({
          root,
          actions: options.actions,
          version: options.ref,
          owners: (options.owners ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          force: options.force,
        });
        if (!options.dryRun) await applyInit(root, items);
        const summary = items.map(({ path, action, note }) => ({ path, action, ...(note ? { note } : {}) }));
        printResult(options, { dryRun: Boolean(options.dryRun), root, files: summary }, () =>
          [
            ...(options.dryRun ? ["(dry run: nothing written)"] : []),
            ...items.map((i) => `${VERB[i.action]} ${i.path}${i.action === "keep" ? `  (${i.note})` : ""}`),
            ...items.filter((i) => i.action === "suggest").map((i) => `\nAdd these lines to ${i.path}:\n${i.note}`),
            ...(items.some((i) => i.action === "create" || i.action === "overwrite") && !options.dryRun
              ? [
                  "\nNext: commit these files on the default branch, install the Consort app, then run `consort protect`.",
                ]
              : []),
          ].join("\n"),
        );
      },
    );
}
