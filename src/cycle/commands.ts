import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { providerEnv, type ConsortConfig } from "../config/consort-config.js";
import { confinedSpawn, jailedPath, type Jail } from "./confine.js";
import type { CommandRecord } from "../contracts/cycle-result.js";
import { REPORTER_ENV } from "../contracts/runners.js";

/**
 * Running the repository's own commands (migrate, test, deploy, verify, agent): through a shell,
 * in the checkout, with `node_modules/.bin` of the checkout and its parents on the PATH (as
 * `npm run` does), with an allow-listed environment, with a timeout, keeping only the tail of the
 * output with secrets removed.
 */

export interface CommandOptions {
  cwd: string;
  /** Set for the command (DATABASE_URL and the like), over what it inherits. */
  env?: Record<string, string>;
  /**
   * The job's environment, from which the command inherits ONLY PATH, HOME, CI and the names in
   * `passEnv` (`commands.env`): never a runtime token, an input, a provider secret or a step name.
   * Default: this process's environment.
   */
  parentEnv?: Record<string, string | undefined>;
  /** The variables the repository lets its commands see (`commands.env` in .github/consort.yml). */
  passEnv?: string[];
  /** The agent's command alone runs with the job's whole environment (its own credentials). */
  inheritEnv?: boolean;
  timeoutMs: number;
  /** Strings removed from the kept output (URLs with passwords, tokens). */
  secrets?: string[];
  /** Text written to the command's stdin (then closed). */
  input?: string;
  tailLines?: number;
  /** Run as the job's throwaway OS user (see confine.ts), in its copy of the checkout, instead of the job's own. */
  jail?: Jail;
}

export type CommandRunner = (command: string, options: CommandOptions) => Promise<CommandRecord>;

/** Every `node_modules/.bin` from `cwd` up to the filesystem root, nearest first. */
function binPaths(cwd: string): string[] {
  const found: string[] = [];
  let dir = resolve(cwd);
  for (;;) {
    const bin = join(dir, "node_modules", ".bin");
    if (existsSync(bin)) found.push(bin);
    const parent = dirname(dir);
    if (parent === dir) return found;
    dir = parent;
  }
}

/** A URL's password (and the URL itself) count as secrets wherever they appear. */
function secretsOfUrl(url: string): string[] {
  const secrets = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
  } catch {
    // not a URL: the whole string is the secret
  }
  return secrets.filter((s) => s.length >= 4);
}

/** What every project command inherits from the job, whatever the configuration says. */
const INHERITED_ENV = ["PATH", "HOME", "CI"] as const;

/** The environment a project command runs with: the allow-list, then what Consort sets. */
function commandEnvironment(options: CommandOptions): Record<string, string> {
  const parent = options.parentEnv ?? process.env;
  const names = options.inheritEnv ? Object.keys(parent) : [...INHERITED_ENV, ...(options.passEnv ?? [])];
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, options.env);
  env.PATH = [...binPaths(options.cwd), parent.PATH ?? ""].filter(Boolean).join(delimiter);
  return env;
}

/** The names of the job's variables that hold the database provider's secrets. */
function providerSecretNames(database: ConsortConfig["database"]): string[] {
  return providerEnv(database)
    .filter((variable) => variable.secret)
    .map((variable) => variable.name);
}

/** What `projectCommandEnvironment` decides: what a project command inherits, and the provider secrets to redact. */
export type ProjectEnvironment = Pick<CommandOptions, "parentEnv" | "passEnv"> & { secrets: string[] };

/**
 * How a job runs the project's commands (install, migrate, test, deploy, verify, seed): from the
 * job's environment only what `commands.env` names (never a provider secret, even if named), and
 * every provider secret's value redacted from what the commands print.
 */
export function projectCommandEnvironment(
  config: ConsortConfig,
  parentEnv: Record<string, string | undefined> = process.env,
): ProjectEnvironment {
  const secretNames = providerSecretNames(config.database);
  const secrets = secretNames.flatMap((name) => {
    const value = parentEnv[name];
    return value ? secretsOfUrl(value) : [];
  });
  return { parentEnv, passEnv: config.commands.env.filter((name) => !secretNames.includes(name)), secrets };
}

/**
 * The configuration a job runs with, its install command settled: the configured one, else
 * `npm ci` where there is a lock file. The job runs it confined, like the rest (its scripts are
 * the track's code); the workflow itself installs nothing.
 */
export function withInstallCommand(config: ConsortConfig, cwd: string): ConsortConfig {
  if (config.commands.install || !existsSync(join(cwd, "package-lock.json"))) return config;
  return { ...config, commands: { ...config.commands, install: "npm ci --no-audit --no-fund" } };
}

/**
 * How a project command runs against the database at `url` (migrate, test, seed, deploy, verify):
 * DATABASE_URL and the reporter settings (REPORTER_ENV) and nothing else of the job's (no track, commit or step name: a command that knew
 * them could tell RED from GREEN, or a rebuilt parent from the track), what the project environment
 * lets it inherit, and the URL's and the provider secrets' values kept out of what it prints.
 */
export function againstDatabase(
  project: ProjectEnvironment,
  url: string,
): Pick<CommandOptions, "env" | "parentEnv" | "passEnv" | "secrets"> {
  const { secrets, ...inherit } = project;
  // The reporter settings that tie each test to its file: the test command's report needs them.
  return { env: { ...REPORTER_ENV, DATABASE_URL: url }, ...inherit, secrets: [...secretsOfUrl(url), ...secrets] };
}

/** How a command that did not succeed ended, for a reason: `exited 2`, or `was killed (SIGTERM)` (a timeout or a signal). */
export const howItEnded = (record: CommandRecord): string =>
  record.exitCode === null ? `was killed (${record.signal ?? "signal"})` : `exited ${record.exitCode}`;

/** Run the install command (its scripts are the track's code); a failure stops the job with the reason. */
export async function runInstall(
  runCommand: CommandRunner,
  command: string,
  options: CommandOptions,
): Promise<CommandRecord> {
  const record = await runCommand(command, options);
  if (record.exitCode !== 0)
    throw new Error(
      `the install command \`${command}\` ${howItEnded(record)}; nothing else ran (see its output in the result)`,
    );
  return record;
}

function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join("***");
  return out;
}

export const runShellCommand: CommandRunner = (command, options) =>
  new Promise((resolvePromise, reject) => {
    const started = performance.now();
    // A jailed command runs in the jail's copy of the checkout, with that copy's node_modules/.bin.
    const cwd = options.jail ? jailedPath(options.jail, options.cwd) : options.cwd;
    const env = commandEnvironment({ ...options, cwd });
    const confined = options.jail ? confinedSpawn(options.jail, command, env, cwd) : undefined;
    const spawnOptions = {
      // The jail's namespaces are entered from / (its script then goes to the command's folder).
      cwd: confined ? "/" : cwd,
      stdio: ["pipe", "pipe", "pipe"] as ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
    };
    const child = confined
      ? spawn(confined.file, confined.args, { ...spawnOptions, env: confined.env })
      : spawn(command, { ...spawnOptions, shell: true, env });
    const keep = options.tailLines ?? 80;
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      // Keep memory bounded on chatty commands: a generous window, trimmed to lines at the end.
      if (output.length > 256_000) output = output.slice(-128_000);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // The whole process group: a shell's children (vitest workers) must not outlive the cycle.
      try {
        if (child.pid && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const lines = redact(output, options.secrets ?? []).split("\n");
      const tail = lines.slice(-keep).join("\n").trimEnd();
      resolvePromise({
        command,
        exitCode: timedOut ? null : code,
        ...(timedOut
          ? { signal: `timeout after ${Math.round(options.timeoutMs / 1000)} s` }
          : signal
            ? { signal }
            : {}),
        durationMs: Math.round(performance.now() - started),
        outputTail: tail,
      });
    });
  });
