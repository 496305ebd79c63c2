import { SubstrateError } from "../substrate/provider.js";
import { asTyped } from "./invocation.js";

/** Shared CLI plumbing: results on stdout (JSON or text), progress and errors on stderr. */

export interface OutputOptions {
  json?: boolean;
}

/** Print a command's result: one JSON document with --json, else the text rendering. */
export function printResult(options: OutputOptions, data: unknown, text: () => string): void {
  if (options.json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else process.stdout.write(`${text()}\n`);
}

/** Progress lines go to stderr so `--json` output on stdout stays parseable. */
export function progress(options: OutputOptions & { quiet?: boolean }): (message: string) => void {
  if (options.quiet) return () => {};
  const started = Date.now();
  return (message) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(`[${seconds}s] ${asTyped(message)}\n`);
  };
}

/** An error for the person at the terminal: what went wrong and what to do. Exit code 1 by default. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Turn any thrown error into a message and an exit code; JSON callers get `{ "error": … }`. */
export function reportError(error: unknown, options: OutputOptions = {}): number {
  const exitCode = error instanceof CliError ? error.exitCode : 1;
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof CliError ? error.hint : error instanceof SubstrateError ? error.hint : undefined;
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ error: { message, hint, code: (error as { code?: string })?.code } }, null, 2)}\n`,
    );
  } else {
    process.stderr.write(`consort: ${asTyped(message)}\n`);
    if (hint && !message.includes(hint)) process.stderr.write(`  → ${asTyped(hint)}\n`);
  }
  return exitCode;
}
