import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How a person runs this CLI in their own repository, the one string every generated text prints
 * (the README, `consort init`'s hints, the MCP set-up line, error hints). A bare `npx consort`
 * would fetch an unrelated registry package named `consort`; `--no-install` makes npx run only
 * the `consort` bin of the repository's own node_modules (Consort installed as a dev dependency
 * from this repository), and fail instead of downloading anything.
 */

const PACKAGE_JSON = join(dirname(fileURLToPath(import.meta.url)), "../../package.json");
const pkg = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { name: string; version: string };

/** This package's name and version, as package.json says. */
export const PACKAGE_NAME = pkg.name;
export const PACKAGE_VERSION = pkg.version;

/** The command that runs the CLI in a repository where Consort is installed as a dev dependency. */
const CONSORT = "npx --no-install consort";

/** `consort <args>` as a person types it. */
export function consortCommand(args: string): string {
  return `${CONSORT} ${args}`;
}

/**
 * A message with every bare `consort <command>` (as the engine's hints say it, for any front door)
 * written as this CLI's user types it; a command already spelled out is left alone.
 */
export function asTyped(text: string): string {
  return text.replace(/(^|[\s(`"'])(?<!--no-install )consort (?=[a-z])/g, `$1${CONSORT} `);
}

/** Where Consort keeps its data and binaries (src/substrate/local-server.ts decides), as every --help and the README say it. */
export const DATA_FOLDER =
  "Consort keeps its data in CONSORT_HOME (default ~/.consort, or /var/lib/consort when run as root): the embedded Postgres server's data in its postgres folder (CONSORT_DATA_DIR or database.local.dataDir moves that folder alone) and, as root, the copy of the Postgres binaries the postgres user runs in its binaries folder.";

/** The line that registers the MCP server with Claude Code, run from the repository's root. */
export const MCP_SETUP = `claude mcp add consort -- ${consortCommand("mcp")}`;
