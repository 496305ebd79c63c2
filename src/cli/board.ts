import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { startLocalBoard } from "../board/serve-local.js";
import { ConfigError, readCheckoutConfig } from "../config/load.js";
import { CliError, printResult } from "./output.js";

/**
 * `consort board`: the board's pages for a local checkout, served on 127.0.0.1 with no sign-in and
 * kept live as commits land. It runs until Ctrl-C.
 */

const BoardOptions = z.object({
  cwd: z.string().default("."),
  config: z.string().optional(),
  port: z.coerce.number().int().min(0).max(65535).default(7420),
  me: z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]|\[bot\])*$/, "a GitHub login")
    .optional(),
  json: z.boolean().optional(),
});

export function registerBoardCommands(program: Command): void {
  program
    .command("board")
    .description(
      "Serve the Consort board for this checkout on 127.0.0.1 (no sign-in): the tracks of a fetched consort/state branch and the checked-out branch replayed from its commits, live as commits land",
    )
    .option("-C, --cwd <dir>", "the checkout to show", ".")
    .option("--config <file>", "the configuration file, relative to --cwd")
    .option("--port <port>", "the port on 127.0.0.1 (0: any free port)", "7420")
    .option("--me <login>", "your GitHub login, for the 'waiting for me' filter")
    .option("--json", "print the URL as JSON ({ url }) instead of a sentence")
    .addHelpText(
      "after",
      "\nSet CONSORT_STATE_KEY to check the signatures of the consort/state files; without it they are shown as unchecked.\nFetch the state first to see every track: git fetch origin consort/state:refs/remotes/origin/consort/state",
    )
    .action(async (raw: unknown) => {
      const parsed = BoardOptions.safeParse(raw);
      if (!parsed.success)
        throw new CliError(
          `consort board: ${parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; ")}`,
          "see consort board --help",
        );
      const options = parsed.data;
      const dir = resolve(options.cwd);
      if (!existsSync(dir)) throw new CliError(`${dir} does not exist`, "pass -C <checkout>");
      let config;
      try {
        config = readCheckoutConfig(dir, options.config).config;
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(error.summary, error.fix);
        throw error;
      }
      const board = await startLocalBoard({
        repoPath: dir,
        config,
        port: options.port,
        me: options.me ?? null,
        stateKey: process.env.CONSORT_STATE_KEY || undefined,
        warn: (message) => process.stderr.write(`consort board: ${message}\n`),
      }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "EADDRINUSE")
          throw new CliError(
            `port ${options.port} on 127.0.0.1 is in use`,
            "pass --port <another>, or --port 0 for any free port",
          );
        throw error;
      });
      printResult(options, { url: board.url }, () => `Consort board for ${dir}: ${board.url} (Ctrl-C stops it)`);
      await new Promise<void>((done) => {
        for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => done());
      });
      await board.close();
    });
}
