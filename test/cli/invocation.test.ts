import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { consortCommand, MCP_SETUP, PACKAGE_NAME, PACKAGE_VERSION } from "../../src/cli/invocation.js";
import { buildProgram } from "../../src/cli/main.js";
import { SCHEMAS_DIR } from "../../src/artifacts/paths.js";

/** The one way a user's repository runs the CLI, and the package facts every message relies on. */

describe("how the CLI is invoked in a user's repository", () => {
  test("always through the repository's own install, never a bare npx consort", () => {
    expect(consortCommand("init")).toBe("npx --no-install consort init");
    expect(MCP_SETUP).toBe("claude mcp add consort -- npx --no-install consort mcp");
  });

  test("the package's name and version are package.json's, and the schemas messages point at are where it installs", async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
      name: string;
      version: string;
      bin: Record<string, string>;
    };
    expect([PACKAGE_NAME, PACKAGE_VERSION]).toEqual([pkg.name, pkg.version]);
    expect(Object.keys(pkg.bin)).toEqual(["consort"]);
    expect(SCHEMAS_DIR).toBe(`node_modules/${PACKAGE_NAME}/schemas`);
    expect((await buildProgram()).version()).toBe(PACKAGE_VERSION);
  });
});
