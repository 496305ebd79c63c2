import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import type { CommandRecord } from "./result.js";

/**
 * Running the repository's own commands (migrate, test, deploy, verify, agent): through a shell,
 * in the checkout, with `node_modules/.bin` of the checkout and its parents on the PATH (as
 * `npm run` does), with a timeout, keeping only the tail of the output with secrets removed.
 */

export interface CommandOptions {
  cwd: string;
  /** Added to the process environment (DATABASE_URL and the like). */
  env?: Record<string, string>;
  timeoutMs: number;
  /** Strings removed from the kept output (URLs with passwords, tokens). */
  secrets?: string[];
  /** Text written to the command's stdin (then closed). */
  input?: string;
  tailLines?: number;
}

export type CommandRunner = (command: string, options: CommandOptions) => Promise<CommandRecord>;

/** Every `node_modules/.bin` from `cwd` up to the filesystem root, nearest first. */
export function binPaths(cwd: string): string[] {
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
export function secretsOfUrl(url: string): string[] {
  const secrets = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
  } catch {
    // not a URL: the whole string is the secret
  }
  return secrets.filter((s) => s.length >= 4);
}

export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join("***");
  return out;
}

export const runShellCommand: CommandRunner = (command, options) =>
  new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const path = [...binPaths(options.cwd), process.env.PATH ?? ""].filter(Boolean).join(delimiter);
    const child = spawn(command, {
      cwd: options.cwd,
      shell: true,
      env: { ...process.env, ...options.env, PATH: path },
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
    });
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
