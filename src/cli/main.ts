import { Command, CommanderError } from "commander";
import { reportError } from "./output.js";
import { commandGroups, groupsFor, type CommandGroup } from "./commands.js";
import { PACKAGE_VERSION } from "./invocation.js";

/**
 * `consort`: the same engine as the app, on a local checkout. Each capability registers its own
 * commands (see commands.ts), loaded only for the command that runs; this file only builds the
 * program and turns errors into exit codes.
 */
export async function buildProgram(groups: readonly CommandGroup[] = commandGroups): Promise<Command> {
  const program = new Command("consort")
    .description("Spec-first, test-driven discipline for coding agents, on GitHub and in your terminal.")
    .version(PACKAGE_VERSION)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  for (const register of await Promise.all(groups.map((group) => group.load()))) register(program);
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  try {
    const program = await buildProgram(groupsFor(argv.slice(2)));
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    return reportError(error, { json: argv.includes("--json") });
  }
}

const invokedDirectly = process.argv[1] && /(?:cli[/\\]main\.[jt]s|bin[/\\]consort(?:\.js)?)$/.test(process.argv[1]);
if (invokedDirectly) process.exitCode = await runCli(process.argv);
