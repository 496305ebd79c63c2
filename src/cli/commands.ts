import type { Command } from "commander";

/** One module of commands: the top-level commands it registers, and how to load its registration. */
export interface CommandGroup {
  commands: readonly string[];
  load(): Promise<(program: Command) => void>;
}

/**
 * Every command group the CLI has. A capability adds one entry here, so main.ts never changes.
 * Each loads only when its command runs (or for --help), so `consort --version` and `consort mcp`
 * do not load the database, GitHub and cycle code of the others; a test holds `commands` to what
 * the module registers.
 */
export const commandGroups: readonly CommandGroup[] = [
  { commands: ["db"], load: async () => (await import("./db.js")).registerDbCommands },
  { commands: ["cycle"], load: async () => (await import("./cycle.js")).registerCycleCommands },
  { commands: ["init"], load: async () => (await import("./init.js")).registerInitCommands },
  { commands: ["tools"], load: async () => (await import("./tools.js")).registerToolsCommands },
  { commands: ["mcp"], load: async () => (await import("./mcp.js")).registerMcpCommand },
  { commands: ["protect"], load: async () => (await import("./protect.js")).registerProtectCommands },
  { commands: ["state"], load: async () => (await import("./state.js")).registerStateCommands },
  {
    commands: ["validate", "next", "status"],
    load: async () => (await import("./orchestrate.js")).registerOrchestrateCommands,
  },
  { commands: ["reconcile"], load: async () => (await import("./reconcile.js")).registerReconcileCommands },
  { commands: ["board"], load: async () => (await import("./board.js")).registerBoardCommands },
  { commands: ["approve"], load: async () => (await import("./approve.js")).registerApproveCommands },
];

/**
 * The groups a command line (the arguments after `consort`) needs: the one that owns its command;
 * none for a bare --version; all of them otherwise (help lists every command, and an unknown one
 * is answered with the nearest).
 */
export function groupsFor(args: readonly string[]): readonly CommandGroup[] {
  const [first] = args;
  if (first === "-V" || first === "--version") return [];
  const owner = commandGroups.find((group) => first !== undefined && group.commands.includes(first));
  return owner ? [owner] : commandGroups;
}
