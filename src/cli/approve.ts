import { resolve } from "node:path";
import type { Command } from "commander";
import { ConfigError, readCheckoutConfig } from "../config/load.js";
import { GATE_NAMES, GateName } from "../contracts/gates.js";
import { nextAction, renderNextAction } from "../orchestrator/index.js";
import { approveLocally, ToolError } from "../tools/index.js";
import { CliError } from "./output.js";

/**
 * `consort approve <gate>`: a person at the terminal approves a gate of the local lane, as a
 * rehearsal. It asks for a terminal (stdin and stdout both a TTY), so an agent's pipe or a script
 * cannot approve, and no setting or variable lifts that; on GitHub a gate needs a person's review.
 */

const REHEARSAL =
  "This is a rehearsal: the approval is kept in this checkout's git directory only, and the Consort app never takes it as evidence. On GitHub the gate needs a pull-request review by a person who did not author its commits.";

interface Options {
  cwd?: string;
  config?: string;
}

export function registerApproveCommands(program: Command): void {
  program
    .command("approve")
    .argument("<gate>", `the gate waiting for you: ${GATE_NAMES.join(", ")}`)
    .description("Approve a gate of the local lane at the terminal (a rehearsal; never evidence for the app)")
    .option("-C, --cwd <dir>", "the checkout", ".")
    .option("--config <file>", "the configuration file, relative to --cwd (default .github/consort.yml)")
    .addHelpText(
      "after",
      `\nNeeds a person at a terminal: refused when stdin or stdout is not a TTY (a pipe, a script, an agent's tool), and refused to an author or committer of the gate's commits (git config user.email).\n${REHEARSAL}`,
    )
    .action(async (gateName: string, options: Options) => {
      const gate = GateName.safeParse(gateName);
      if (!gate.success) throw new CliError(`unknown gate "${gateName}"`, `name one of ${GATE_NAMES.join(", ")}`);
      if (!process.stdin.isTTY || !process.stdout.isTTY)
        throw new CliError(
          `consort approve needs a person at a terminal, and ${process.stdin.isTTY ? "stdout" : "stdin"} is not one: a pipe, a script or an agent cannot approve a gate.`,
          `Run it yourself in a terminal. ${REHEARSAL}`,
        );
      const cwd = resolve(options.cwd ?? ".");
      let config;
      try {
        config = readCheckoutConfig(cwd, options.config).config;
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(error.summary, error.fix);
        throw error;
      }
      try {
        const approved = await approveLocally(cwd, config, gate.data, { at: new Date().toISOString() });
        process.stdout.write(
          [
            `✓ ${gate.data} gate approved at the terminal by ${approved.approval.by}, at ${approved.approval.commit.slice(0, 12)} (none of its ${approved.commits} commit(s) is yours).`,
            REHEARSAL,
            `lane: ${approved.lane}`,
            "",
            renderNextAction(nextAction(approved.snapshot, config)),
            "",
          ].join("\n"),
        );
      } catch (error) {
        if (error instanceof ToolError) throw new CliError(error.message, error.hint);
        throw error;
      }
    });
}
