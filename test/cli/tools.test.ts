import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { OPENAI_SPEC_PATH } from "../../src/cli/tools.js";
import { consortTools } from "../../src/tools/index.js";

/** Run the CLI in this process (a spawned `node bin/consort.js` is tested in stdio.test.ts) and capture what it prints. */
async function consort(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await runCli(["node", "consort", ...args]);
    return { code, stdout, stderr };
  } finally {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  }
}

afterEach(() => vi.restoreAllMocks());

describe("consort tools", () => {
  it("--openai prints exactly the committed specification", async () => {
    const { code, stdout } = await consort("tools", "--openai");
    expect(code).toBe(0);
    expect(stdout).toBe(readFileSync(OPENAI_SPEC_PATH, "utf8"));
  });

  it("--json lists every tool with its input and output JSON Schemas", async () => {
    const { stdout } = await consort("tools", "--json");
    const listing = JSON.parse(stdout) as {
      tools: Array<{ name: string; readOnly: boolean; inputSchema: { type: string }; outputSchema: { type: string } }>;
    };
    expect(listing.tools.map((tool) => tool.name)).toEqual(consortTools.map((tool) => tool.name));
    expect(
      listing.tools.every((tool) => tool.inputSchema.type === "object" && tool.outputSchema.type === "object"),
    ).toBe(true);
    expect(listing.tools.filter((tool) => !tool.readOnly).map((tool) => tool.name)).toEqual(["run_cycle", "db_branch"]);
  });
});
