import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { consortCommand, CONSORT_COMMAND } from "../contracts/command.js";

/** How the CLI names itself: its package, its version, the command a person types (contracts/command.ts). */

const PACKAGE_JSON = join(dirname(fileURLToPath(import.meta.url)), "../../package.json");
const pkg = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { name: string; version: string };

/** This package's name and version, as package.json says. */
export const PACKAGE_NAME = pkg.name;
export const PACKAGE_VERSION = pkg.version;

export { consortCommand } from "../contracts/command.js";

/**
 * A message with every bare `consort <command>` (as the engine's hints say it, for any front door)
 * written as this CLI's user types it; a command already spelled out is left alone.
 */
export function asTyped(text: string): string {
  return text.replace(/(^|[\s(`"'])(?<!--no-install )consort (?=[a-z])/g, `$1${CONSORT_COMMAND} `);
}

/** Where Consort keeps its data and binaries (src/substrate/local-server.ts decides), as every --help and the README say it. */
export const DATA_FOLDER =
  "Consort keeps its data in CONSORT_HOME (default ~/.consort, or /var/lib/consort when run as root): the embedded Postgres server's data in its postgres folder (CONSORT_DATA_DIR or database.local.dataDir moves that folder alone) and, as root, the copy of the Postgres binaries the postgres user runs in its binaries folder.";

/** The line that registers the MCP server with Claude Code, run from the repository's root. */
export const MCP_SETUP = `claude mcp add consort -- ${consortCommand("mcp")}`;
