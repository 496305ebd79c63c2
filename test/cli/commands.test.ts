import { Command } from "commander";
import { describe, expect, test } from "vitest";
import { commandGroups, groupsFor } from "../../src/cli/commands.js";

describe("the CLI's command groups", () => {
  test("each group names exactly the top-level commands its module registers, and no two name one", async () => {
    for (const group of commandGroups) {
      const program = new Command("consort");
      (await group.load())(program);
      expect(program.commands.map((command) => command.name())).toEqual(group.commands);
    }
    const names = commandGroups.flatMap((group) => group.commands);
    expect(new Set(names).size).toBe(names.length);
  });

  test("a command line loads the group of its command, none for --version, all for help or an unknown command", () => {
    const commandsOf = (args: string[]) => groupsFor(args).flatMap((group) => group.commands);
    expect(commandsOf(["mcp", "-C", "."])).toEqual(["mcp"]);
    expect(commandsOf(["next", "--json"])).toEqual(["validate", "next", "status"]);
    expect(commandsOf(["--version"])).toEqual([]);
    expect(commandsOf(["-V"])).toEqual([]);
    for (const args of [[], ["--help"], ["help", "db"], ["nxet"], ["--help", "db"]])
      expect(commandsOf(args), args.join(" ")).toEqual(commandGroups.flatMap((group) => group.commands));
  });
});
