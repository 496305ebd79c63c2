import { resolve } from "node:path";
import type { Command } from "commander";
import type { ConsortConfig } from "../config/consort-config.js";
import { ConfigError, readCheckoutConfig, readConfigFile } from "../config/load.js";
import {
  PostgresBranchProvider,
  createProvider,
  resolveLocalDataDir,
  stopLocalServer,
  type BranchProvider,
  type DatabaseBranch,
  compareBranches,
} from "../substrate/index.js";
import { createDbBranch, dbBranchId, dbBranchUrl, deleteDbBranch, ToolContext, ToolError } from "../tools/index.js";
import { consortCommand, DATA_FOLDER } from "./invocation.js";
import { CliError, printResult, progress } from "./output.js";

/** `consort db …`: the track's database branches, from a terminal. With no configuration: the embedded default. */

interface DbOptions {
  json?: boolean;
  quiet?: boolean;
  config?: string;
  cwd: string;
}

async function configFor(options: DbOptions): Promise<ConsortConfig> {
  try {
    // A file named with --config must exist; without it the checkout's, or the defaults.
    const { config } = options.config
      ? readConfigFile(resolve(options.config), { mustExist: true })
      : readCheckoutConfig(resolve(options.cwd));
    return config;
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.summary, error.fix, 2);
    throw error;
  }
}

async function withProvider<T>(
  options: DbOptions,
  fn: (provider: BranchProvider, say: (m: string) => void) => Promise<T>,
): Promise<T> {
  const config = await configFor(options);
  const say = progress(options);
  const provider = await createProvider(config.database, { onProgress: say });
  try {
    return await fn(provider, say);
  } finally {
    await provider.close();
  }
}

function describeSpares(spares: { count: number; bytes: number }): string {
  return (
    `warm spares: ${spares.count} (${(spares.bytes / 1e6).toFixed(1)} MB). Each is a ready copy of a parent's base, so the ` +
    `next throwaway fork is a rename; on a filesystem without reflink (ext4) each costs a full copy's disk, with ` +
    `reflink (XFS, btrfs) almost none. A parent keeps one, or as many as its last burst of concurrent forks (at most 16) for 10 minutes.`
  );
}

function describe(branch: DatabaseBranch): string {
  const parts = [branch.name, branch.isRoot ? "(root)" : `from ${branch.parent}`];
  if (branch.expiresAt) parts.push(`expires ${branch.expiresAt}`);
  return parts.join(" ");
}

function table(branches: DatabaseBranch[]): string {
  if (branches.length === 0) return "no branches";
  const rows = [
    ["branch", "parent", "created", "expires"],
    ...branches.map((b) => [b.name, b.isRoot ? "(root)" : (b.parent ?? ""), b.createdAt ?? "", b.expiresAt ?? "never"]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const common = (command: Command) =>
  command
    .option("--json", "print the result as JSON on stdout")
    .option("--quiet", "no progress on stderr")
    .option("--config <file>", "the configuration (default: .github/consort.yml in the checkout)")
    .option("-C, --cwd <dir>", "the checkout", ".");

const parseTtl = (value: string): number => {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 30 * 24 * 3600)
    throw new CliError(`--ttl ${value} is not a whole number of seconds up to 30 days`, "e.g. --ttl 3600", 2);
  return seconds;
};

/**
 * The tools' context for a command: the checkout, and the track's state when --state names it (the
 * branches it pairs are then refused).
 */
function toolContext(options: DbOptions & { state?: string }, provider: BranchProvider, say: (m: string) => void) {
  return new ToolContext({
    repoPath: resolve(options.cwd),
    state: options.state ? { kind: "file", path: resolve(options.state) } : { kind: "none" },
    stateKey: process.env.CONSORT_STATE_KEY,
    // The state is read only to refuse more: an unsigned reading cannot let a deletion through.
    allowUnverifiedState: true,
    createProvider: async () => provider,
    onProgress: say,
  });
}

/** A tool's refusal said as the tool says it (its code first), with its hint. */
async function asCliError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ToolError) throw new CliError(`${error.code}: ${error.message}`, error.hint);
    throw error;
  }
}

export function registerDbCommands(program: Command): void {
  const db = program
    .command("db")
    .description(
      "Database branches paired with git branches (embedded Postgres by default; postgres or lakebase by configuration)",
    )
    .addHelpText(
      "after",
      `\nWith no .github/consort.yml the embedded server is used. ${DATA_FOLDER}\n` +
        `It keeps running between commands: ${consortCommand("db stop")} stops it. Branch arguments may be git branch names: they are sanitised.\n` +
        `Example: ${consortCommand("db create feature/cart")} && ${consortCommand("db url feature/cart")}`,
    );

  common(db.command("create <branch>"))
    .description(
      "Create a database branch forked from its parent (the root branch by default); returns it if it already exists",
    )
    .option("--from <parent>", "the parent branch (default: the root branch)")
    .option("--ttl <seconds>", "make it a throwaway branch that expires (it cannot have children)", parseTtl)
    .action(async (name: string, options: DbOptions & { from?: string; ttl?: number }) => {
      await withProvider(options, async (provider, say) => {
        const from = options.from ? await dbBranchId(provider, options.from) : undefined;
        const branch = await createDbBranch(provider, await dbBranchId(provider, name), {
          ...(from ? { from } : {}),
          ...(options.ttl ? { ttlSeconds: options.ttl } : {}),
          onProgress: say,
        });
        printResult(
          options,
          { branch },
          () => `${describe(branch)}\nconnect with: ${consortCommand(`db url ${branch.name}`)}`,
        );
      });
    });

  common(db.command("delete <branch>"))
    .description(
      "Delete a database branch and, first, its children (a missing branch is not an error; never the root or a track's own)",
    )
    .option(
      "--state <file>",
      "the track's state (a signed state file or a snapshot): the branches it is paired with are refused",
    )
    .action(async (name: string, options: DbOptions & { state?: string }) => {
      await withProvider(options, async (provider, say) => {
        const id = await dbBranchId(provider, name);
        const { existed, children } = await asCliError(
          deleteDbBranch(toolContext(options, provider, say), provider, id),
        );
        printResult(options, { deleted: id, existed, children }, () =>
          !existed
            ? `${id} did not exist; nothing to delete`
            : children.length
              ? `deleted ${id} and its ${children.length} child branch(es): ${children.join(", ")}`
              : `deleted ${id}`,
        );
      });
    });

  common(db.command("list"))
    .description("List the database branches, the root first")
    .action(async (options: DbOptions) => {
      await withProvider(options, async (provider) => {
        const branches = await provider.listBranches();
        // Warm spares cost disk on local and postgres: say how much (Lakebase keeps none).
        const spares = provider instanceof PostgresBranchProvider ? await provider.spareUsage() : undefined;
        printResult(
          options,
          { provider: provider.kind, root: await provider.rootBranch(), branches, ...(spares ? { spares } : {}) },
          () => (spares ? `${table(branches)}\n\n${describeSpares(spares)}` : table(branches)),
        );
      });
    });

  common(db.command("url <branch>"))
    .description(
      "Print a connection URL for a branch (it holds a password or a short-lived token: keep it out of logs)",
    )
    .action(async (name: string, options: DbOptions) => {
      await withProvider(options, async (provider) => {
        const { branch, url } = await asCliError(dbBranchUrl(provider, await dbBranchId(provider, name)));
        printResult(options, { branch, url }, () => url);
      });
    });

  common(db.command("diff <branch>"))
    .description(
      "Compare a branch's schema with its parent's, and count the parent's rows each risky change would break or lose",
    )
    .option("--against <parent>", "compare with this branch instead of the parent")
    .addHelpText(
      "after",
      "\nExit code: 0 when no risky change breaks or loses a row, 1 when one does or could not be counted.",
    )
    .action(async (name: string, options: DbOptions & { against?: string }) => {
      await withProvider(options, async (provider, say) => {
        const id = await dbBranchId(provider, name);
        const against = options.against ? await dbBranchId(provider, options.against) : undefined;
        say(`reading the schemas of ${id} and ${against ?? "its parent"}`);
        const result = await compareBranches(provider, id, against);
        printResult(
          options,
          {
            branch: result.branch,
            parent: result.parent,
            ok: result.ok,
            summary: result.diff.summary,
            changes: result.diff.changes,
            lint: result.lint.findings,
          },
          () => result.markdown,
        );
        if (!result.ok) process.exitCode = 1;
      });
    });

  common(db.command("refresh <branch>"))
    .description(
      "Take a new frozen base of a branch (local and postgres), so children forked from now on see its current data and schema",
    )
    .action(async (name: string, options: DbOptions) => {
      await withProvider(options, async (provider, say) => {
        if (!provider.refreshBase)
          throw new CliError(
            `the ${provider.kind} provider forks from the live branch and has no base to refresh`,
            "nothing to do",
          );
        const branch = await provider.refreshBase(await dbBranchId(provider, name), { onProgress: say });
        printResult(options, { branch }, () => `${branch.name}: base taken at ${branch.frozenAt}`);
      });
    });

  common(db.command("stop"))
    .description(
      "Stop the embedded Postgres server of the local provider (it keeps running between commands otherwise)",
    )
    .action(async (options: DbOptions) => {
      const config = await configFor(options);
      if (config.database.provider !== "local")
        throw new CliError(
          `the configured provider is ${config.database.provider}; only the local one runs a server of ours`,
          "nothing to stop",
          2,
        );
      const dataDir = resolveLocalDataDir(config.database.local.dataDir);
      const stopped = await stopLocalServer(dataDir);
      printResult(options, { dataDir, stopped }, () =>
        stopped ? `stopped the server in ${dataDir}` : `no server was running in ${dataDir}`,
      );
    });
}
