import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import picomatch from "picomatch";
import type { ConsortConfig } from "../config/consort-config.js";
import { AgentTurnResult, type AgentRequest } from "../contracts/agent-turn.js";
import { howItEnded, runShellCommand, type CommandRunner } from "./commands.js";
import type { CommandRecord } from "../contracts/cycle-result.js";

/**
 * One agent turn (the action's `agent` step, `consort-agent.yml`): run the configured agent command for a
 * role with its prompt (`roles/<role>.md`), the NextAction JSON and the allowed paths; then commit
 * what it changed with the `Consort-Role` trailer, or refuse, committing nothing, when it touched
 * a file outside the allowed paths (or committed by itself, or changed nothing).
 */

const git = promisify(execFile);

export interface AgentTurnDeps {
  config: ConsortConfig;
  cwd: string;
  /** Folder holding `<role>.md` prompts. */
  rolesDir: string;
  runCommand?: CommandRunner;
  env?: Record<string, string>;
  author?: { name: string; email: string };
}

const DEFAULT_AGENT_AUTHOR = { name: "consort-agent", email: "consort-agent@users.noreply.github.com" };

async function gitOut(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await git("git", args, { cwd, maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

/** Paths changed in the working tree and index, untracked files included (both sides of a rename). */
async function changedPaths(cwd: string): Promise<string[]> {
  const out = await gitOut(cwd, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  const entries = out.split("\0").filter(Boolean);
  const paths = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const status = entry.slice(0, 2);
    paths.add(entry.slice(3));
    // In -z mode a rename or copy is followed by its source path as a separate entry.
    if (status.includes("R") || status.includes("C")) paths.add(entries[++i]!);
  }
  return [...paths].sort();
}

function commitMessage(request: AgentRequest): string {
  const kind =
    typeof request.nextAction.kind === "string"
      ? request.nextAction.kind
      : typeof request.nextAction.step === "string"
        ? request.nextAction.step
        : "turn";
  const subject = request.subject ?? `consort(${request.role}): ${kind}`;
  return `${subject}\n\nConsort-Role: ${request.role}\n`;
}

export async function runAgentTurn(request: AgentRequest, deps: AgentTurnDeps): Promise<AgentTurnResult> {
  const { config, cwd } = deps;
  const runCommand = deps.runCommand ?? runShellCommand;
  const reasons: string[] = [];
  let files: string[] = [];
  let outside: string[] = [];
  let agent: CommandRecord | undefined;
  let commit: string | null = null;
  const finish = (): AgentTurnResult =>
    AgentTurnResult.parse({
      version: 1,
      request,
      verdict: commit ? "committed" : "refused",
      commit,
      files,
      outside,
      ...(agent ? { agent } : {}),
      reasons,
    });

  if (!config.agents.enabled || !config.agents.command) {
    reasons.push("agents are not enabled in .github/consort.yml (set agents.enabled: true and agents.command)");
    return finish();
  }
  const promptPath = join(deps.rolesDir, `${request.role}.md`);
  let prompt: string;
  try {
    prompt = await readFile(promptPath, "utf8");
  } catch {
    reasons.push(`the role prompt ${promptPath} is missing: every role needs roles/${request.role}.md`);
    return finish();
  }
  const startHead = (await gitOut(cwd, ["rev-parse", "HEAD"])).trim();
  if (request.commit && startHead !== request.commit) {
    reasons.push(
      `the track is at ${startHead.slice(0, 12)}, not at ${request.commit.slice(0, 12)} where this turn was planned: the orchestrator must decide again`,
    );
    return finish();
  }
  const before = await changedPaths(cwd);
  if (before.length) {
    reasons.push(
      `the checkout already has changes before the agent ran (${before.slice(0, 5).join(", ")}): start from a clean checkout`,
    );
    return finish();
  }

  const scratch = await mkdtemp(join(tmpdir(), "consort-agent-"));
  try {
    const nextActionPath = join(scratch, "next-action.json");
    await writeFile(nextActionPath, `${JSON.stringify(request.nextAction, null, 2)}\n`);
    agent = await runCommand(config.agents.command, {
      cwd,
      inheritEnv: true,
      env: {
        ...deps.env,
        CONSORT_ROLE: request.role,
        CONSORT_ROLE_PROMPT: promptPath,
        CONSORT_NEXT_ACTION: nextActionPath,
        CONSORT_ALLOWED_PATHS: request.allowedPaths.join("\n"),
        CONSORT_TRACK: request.track,
      },
      input: JSON.stringify({
        role: request.role,
        prompt,
        nextAction: request.nextAction,
        allowedPaths: request.allowedPaths,
      }),
      timeoutMs: config.cycle.timeoutMinutes * 60_000,
      tailLines: 120,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  if (agent.exitCode !== 0) reasons.push(`the agent command ${howItEnded(agent)}; nothing is committed`);

  const endHead = (await gitOut(cwd, ["rev-parse", "HEAD"])).trim();
  if (endHead !== startHead) {
    files = (await gitOut(cwd, ["diff", "--name-only", startHead, endHead])).split("\n").filter(Boolean);
    reasons.push(
      "the agent made commits by itself; Consort commits an agent's work (with the Consort-Role trailer) only after checking its paths: nothing is pushed",
    );
  }
  files = [...new Set([...files, ...(await changedPaths(cwd))])].sort();
  const allowed = picomatch(request.allowedPaths, { dot: true });
  outside = files.filter((path) => !allowed(path));
  if (outside.length) {
    reasons.push(
      `the ${request.role} changed files outside its allowed paths (${request.allowedPaths.join(", ")}): ${outside.join(", ")}; nothing is committed`,
    );
  }
  if (files.length === 0) reasons.push(`the ${request.role} changed nothing`);
  if (reasons.length) return finish();

  const author = deps.author ?? DEFAULT_AGENT_AUTHOR;
  await gitOut(cwd, ["add", "-A", "--", ...files]);
  const messageDir = await mkdtemp(join(tmpdir(), "consort-commit-"));
  try {
    const messagePath = join(messageDir, "message.txt");
    await writeFile(messagePath, commitMessage(request));
    await gitOut(cwd, [
      "-c",
      `user.name=${author.name}`,
      "-c",
      `user.email=${author.email}`,
      "commit",
      "-q",
      "--no-verify",
      "-F",
      messagePath,
    ]);
  } finally {
    await rm(messageDir, { recursive: true, force: true });
  }
  commit = (await gitOut(cwd, ["rev-parse", "HEAD"])).trim();
  return finish();
}
