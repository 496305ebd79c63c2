import { resolve } from "node:path";
import type { Command } from "commander";
// The light module only: the tools themselves load after the server answers (see the action).
import { assertCheckout } from "../tools/errors.js";
import type { StateSource, ToolContext, ToolDefinition } from "../tools/index.js";
import { DATA_FOLDER, MCP_SETUP } from "./invocation.js";
import { CliError } from "./output.js";

/**
 * `consort mcp`: the tool registry served to a coding agent over stdio. The server answers the
 * client's `initialize` while the tools and their engine load (they are imported here only
 * dynamically), so an agent's session starts without waiting for code its first call needs.
 */

interface McpOptions {
  cwd: string;
  state?: string;
  repo?: string;
  tokenEnv: string;
  unverifiedState?: boolean;
}

export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description(
      "Serve Consort's tools to a coding agent over MCP (stdio): next action, status, validation, explanations, local cycles, database branches",
    )
    .option("-C, --cwd <dir>", "the local checkout the tools work in", ".")
    .option(
      "--state <file>",
      "read track state from this file (a signed state file or an orchestrator snapshot); default: replay the branch's commits",
    )
    .option(
      "--repo <owner/name>",
      "with a token: the repository whose consort/state branch holds the state (default: the checkout's origin)",
    )
    .option(
      "--token-env <name>",
      "environment variable holding a GitHub token; when set, state is read from consort/state",
      "GITHUB_TOKEN",
    )
    .option("--unverified-state", "read signed state without CONSORT_STATE_KEY (answers say verified: false)")
    .addHelpText(
      "after",
      `
Register it with an agent from the repository's root, e.g. Claude Code:
  ${MCP_SETUP}
With no --state and no token, each track's state is derived from its branch's commits (gates show
as waiting for approval): no network needed. The server speaks MCP on stdin/stdout; progress and logs go to stderr. State files are verified
with CONSORT_STATE_KEY when it is set. Tools never change a track's state or approve a gate.
${DATA_FOLDER}`,
    )
    .action(async (options: McpOptions) => {
      const repoPath = resolve(options.cwd);
      await assertCheckout(repoPath).catch((error: Error) => {
        throw new CliError(error.message, "pass -C <dir> of a local checkout");
      });
      const state = await stateSource(repoPath, options);
      const log = (message: string) => process.stderr.write(`consort mcp: ${message}\n`);
      const { createMcpServer, serveStdio } = await import("../mcp/server.js");
      const registry = import("../tools/index.js");
      const tools: Promise<readonly ToolDefinition[]> = registry.then(({ consortTools }) => {
        log(`serving ${consortTools.length} tools for ${repoPath} (state: ${describeSource(state)})`);
        return consortTools;
      });
      const context: Promise<ToolContext> = registry.then(
        ({ ToolContext }) =>
          new ToolContext({
            repoPath,
            state,
            stateKey: process.env.CONSORT_STATE_KEY,
            allowUnverifiedState: options.unverifiedState ?? false,
            createProvider: async (database) =>
              (await import("../substrate/index.js")).createProvider(database, { onProgress: log }),
            onProgress: log,
          }),
      );
      await serveStdio(createMcpServer(tools, context), async () => (await context).close());
    });
}

async function stateSource(repoPath: string, options: McpOptions): Promise<StateSource> {
  if (options.state) return { kind: "file", path: resolve(options.state) };
  const token = process.env[options.tokenEnv]?.trim();
  if (!token) return { kind: "none" };
  const fullName = options.repo ?? (await originRepository(repoPath));
  const [{ parseRepository }, { Octokit }] = await Promise.all([
    import("../github/client.js"),
    import("@octokit/rest"),
  ]);
  let owner: string;
  let repo: string;
  try {
    ({ owner, repo } = parseRepository(fullName));
  } catch (error) {
    throw new CliError((error as Error).message, "pass --repo owner/name");
  }
  const octokit = new Octokit({
    auth: token,
    userAgent: "consort-mcp",
    ...(process.env.GITHUB_API_URL ? { baseUrl: process.env.GITHUB_API_URL } : {}),
  });
  return { kind: "github", owner, repo, octokit };
}

/** owner/name from a git remote URL: https://github.com/o/r(.git), git@github.com:o/r.git, ssh://git@host/o/r. */
export function repositoryFromRemote(url: string): string | undefined {
  const remote = url.trim();
  // Only a URL or scp-style remote names a hosted repository; a local path does not.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(remote) && !/^[^@\s/]+@[^:\s/]+:/.test(remote)) return undefined;
  const match = /[/:]([^/:\s]+\/[^/\s]+?)(?:\.git)?\/?$/.exec(remote);
  return match?.[1];
}

/** owner/name from the checkout's `origin` remote. */
async function originRepository(repoPath: string): Promise<string> {
  const { simpleGit } = await import("simple-git");
  let url = "";
  try {
    url = (await simpleGit(repoPath).remote(["get-url", "origin"])) ?? "";
  } catch {
    // fall through to the error below
  }
  const fullName = repositoryFromRemote(url);
  if (!fullName)
    throw new CliError(
      `Could not tell which GitHub repository ${repoPath} is (no usable origin remote).`,
      "pass --repo owner/name",
    );
  return fullName;
}

function describeSource(state: StateSource): string {
  if (state.kind === "file") return state.path;
  if (state.kind === "github") return `${state.owner}/${state.repo} consort/state`;
  return "none; pass --state or set a GitHub token";
}
