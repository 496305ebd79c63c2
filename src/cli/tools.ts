import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Octokit } from "@octokit/rest";
import type { Command } from "commander";
import { simpleGit } from "simple-git";
import { parseRepository } from "../github/client.js";
import { createMcpServer, serveStdio } from "../mcp/server.js";
import { createProvider } from "../substrate/index.js";
import {
  consortTools,
  inputJsonSchema,
  openAIResponsesTools,
  openAITools,
  outputJsonSchema,
  ToolContext,
  type StateSource,
} from "../tools/index.js";
import { MCP_SETUP } from "./invocation.js";
import { CliError, printResult } from "./output.js";

/** `consort tools`: the agents' tool registry, listed or rendered as an OpenAI tool specification. */

/** The committed copy of the OpenAI specification; a test fails when it falls behind the registry. */
export const OPENAI_SPEC_PATH = "tools/openai-tools.json";

/** The exact text `consort tools --openai` prints and the committed file holds. */
export function openAISpecText(flavour: "chat" | "responses" = "chat"): string {
  const tools = flavour === "chat" ? openAITools(consortTools) : openAIResponsesTools(consortTools);
  return `${JSON.stringify(tools, null, 2)}\n`;
}

export function registerToolsCommands(program: Command): void {
  registerMcpCommand(program);
  program
    .command("tools")
    .description("List the tools Consort gives coding agents, or print them as an OpenAI function-tool specification")
    .option("--openai", "print the OpenAI function tools (Chat Completions `tools` array, strict schemas)")
    .option("--responses", "with --openai: the flat form the OpenAI Responses API takes")
    .option("--out <file>", "with --openai: write the specification to this file instead of stdout")
    .option("--json", "list the tools as JSON (names, descriptions, input and output JSON Schemas)")
    .addHelpText("after", `\nRegenerate the committed copy with: npm run tools:openai (writes ${OPENAI_SPEC_PATH})`)
    .action(async (options: { openai?: boolean; responses?: boolean; out?: string; json?: boolean }) => {
      if (options.openai) {
        const text = openAISpecText(options.responses ? "responses" : "chat");
        if (options.out) {
          await writeFile(options.out, text);
          process.stderr.write(`wrote ${consortTools.length} tools to ${options.out}\n`);
        } else process.stdout.write(text);
        return;
      }
      const listing = consortTools.map((tool) => ({
        name: tool.name,
        title: tool.title,
        readOnly: tool.readOnly,
        description: tool.description,
        inputSchema: inputJsonSchema(tool),
        outputSchema: outputJsonSchema(tool),
      }));
      printResult(options, { tools: listing }, () =>
        listing
          .map((tool) => `${tool.name}${tool.readOnly ? "" : " (changes database branches)"}\n  ${tool.description}`)
          .join("\n\n"),
      );
    });
}

interface McpOptions {
  cwd: string;
  state?: string;
  repo?: string;
  tokenEnv: string;
  unverifiedState?: boolean;
}

function registerMcpCommand(program: Command): void {
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
with CONSORT_STATE_KEY when it is set. Tools never change a track's state or approve a gate.`,
    )
    .action(async (options: McpOptions) => {
      const repoPath = resolve(options.cwd);
      const state = await stateSource(repoPath, options);
      const log = (message: string) => process.stderr.write(`consort mcp: ${message}\n`);
      const context = new ToolContext({
        repoPath,
        state,
        stateKey: process.env.CONSORT_STATE_KEY,
        allowUnverifiedState: options.unverifiedState ?? false,
        createProvider: (database) => createProvider(database, { onProgress: log }),
        onProgress: log,
      });
      await context.assertCheckout().catch((error: Error) => {
        throw new CliError(error.message, "pass -C <dir> of a local checkout");
      });
      log(`serving ${consortTools.length} tools for ${repoPath} (state: ${describeSource(state)})`);
      await serveStdio(createMcpServer(consortTools, context), () => context.close());
    });
}

async function stateSource(repoPath: string, options: McpOptions): Promise<StateSource> {
  if (options.state) return { kind: "file", path: resolve(options.state) };
  const token = process.env[options.tokenEnv]?.trim();
  if (!token) return { kind: "none" };
  const fullName = options.repo ?? (await originRepository(repoPath));
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
