import { appendFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { readCheckoutConfig, readConfigFile, type LoadedConfig } from "../config/load.js";

/**
 * The GitHub Actions runner's protocol, without a dependency: inputs arrive as INPUT_<NAME>
 * variables, outputs and the job summary go to the files GITHUB_OUTPUT and GITHUB_STEP_SUMMARY.
 */

export function getInput(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}

export function requireInput(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = getInput(name, env);
  if (!value) throw new Error(`the action input "${name}" is required`);
  return value;
}

/**
 * The configuration an action job runs with: the file its `config` input names (the default
 * branch's consort.yml the workflow fetched; the defaults when it is absent), else the checkout's.
 */
export function readActionConfig(cwd: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const input = getInput("config", env);
  return input ? readConfigFile(resolve(env.GITHUB_WORKSPACE ?? process.cwd(), input)) : readCheckoutConfig(cwd);
}

export async function setOutput(name: string, value: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const file = env.GITHUB_OUTPUT;
  if (!file) {
    process.stdout.write(`${name}=${value}\n`);
    return;
  }
  const delimiter = `consort_${randomBytes(8).toString("hex")}`;
  await appendFile(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}

export async function appendJobSummary(markdown: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (env.GITHUB_STEP_SUMMARY) await appendFile(env.GITHUB_STEP_SUMMARY, markdown);
}

/** An error annotation on the run (the message only: never a secret). */
export function reportFailure(message: string): void {
  const escaped = message.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
  process.stdout.write(`::error::${escaped}\n`);
}
