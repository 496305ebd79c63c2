import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { OPENAI_SPEC_PATH, repositoryFromRemote } from "../../src/cli/tools.js";
import { consortTools } from "../../src/tools/index.js";

const run = promisify(execFile);

describe("consort tools", () => {
  it("--openai prints exactly the committed specification", async () => {
    const { stdout } = await run(process.execPath, ["bin/consort.js", "tools", "--openai"]);
    expect(stdout).toBe(readFileSync(OPENAI_SPEC_PATH, "utf8"));
  });

  it("--json lists every tool with its input and output JSON Schemas", async () => {
    const { stdout } = await run(process.execPath, ["bin/consort.js", "tools", "--json"]);
    const listing = JSON.parse(stdout) as { tools: Array<{ name: string; readOnly: boolean; inputSchema: { type: string }; outputSchema: { type: string } }> };
    expect(listing.tools.map((tool) => tool.name)).toEqual(consortTools.map((tool) => tool.name));
    expect(listing.tools.every((tool) => tool.inputSchema.type === "object" && tool.outputSchema.type === "object")).toBe(true);
    expect(listing.tools.filter((tool) => !tool.readOnly).map((tool) => tool.name)).toEqual(["run_cycle", "db_branch"]);
  });
});

describe("consort mcp", () => {
  it("refuses to start on a folder that does not exist, saying what to pass", async () => {
    const failure = await run(process.execPath, ["bin/consort.js", "mcp", "--repo", "/nonexistent/checkout"]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("/nonexistent/checkout does not exist or is not a folder");
    expect(failure?.stderr).toContain("--repo");
  });
});

describe("the repository a token reads consort/state from", () => {
  it("is read from the origin remote in its https, ssh and scp forms", () => {
    expect(repositoryFromRemote("https://github.com/acme/stockflow.git")).toBe("acme/stockflow");
    expect(repositoryFromRemote("https://github.com/acme/stockflow")).toBe("acme/stockflow");
    expect(repositoryFromRemote("git@github.com:acme/stock.flow.git\n")).toBe("acme/stock.flow");
    expect(repositoryFromRemote("ssh://git@github.example.com/acme/stockflow.git")).toBe("acme/stockflow");
  });

  it("is not guessed from a remote that names no owner/name", () => {
    expect(repositoryFromRemote("")).toBeUndefined();
    expect(repositoryFromRemote("/srv/git/stockflow")).toBeUndefined();
    expect(repositoryFromRemote("../stockflow.git")).toBeUndefined();
  });
});
