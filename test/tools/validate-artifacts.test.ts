import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ValidateArtifactsOutput } from "../../src/tools/validate-artifacts.js";
import { call, errorText } from "./mcp-client.js";
import { toolsOnCheckout } from "./fixture.js";

describe("validate_artifacts on examples/stockflow", () => {
  const tools = toolsOnCheckout();

  const validate = async (args: Record<string, unknown> = {}) =>
    ValidateArtifactsOutput.parse((await call(tools.client, "validate_artifacts", args)).structuredContent);
  const edit = async (path: string, change: (text: string) => string) => {
    const file = join(tools.checkout.path, path);
    const before = await readFile(file, "utf8");
    await writeFile(file, change(before));
    return () => writeFile(file, before);
  };

  it("finds the example's complete design valid, having read all four artifacts", async () => {
    const output = await validate();
    expect(output.issues).toEqual([]);
    expect(output.ok).toBe(true);
    expect(output.filesRead).toEqual([
      ".consort/spec.json",
      ".consort/architecture.json",
      ".consort/db-design.json",
      ".consort/test-list.json",
    ]);
  });

  it("names the file, the JSON path and the fix when a test points at an acceptance criterion that does not exist", async () => {
    const restore = await edit(".consort/test-list.json", (text) => text.replace('"ac": "S2-AC2"', '"ac": "S2-AC9"'));
    try {
      const output = await validate();
      expect(output.ok).toBe(false);
      expect(output.issues).toContainEqual(
        expect.objectContaining({ file: ".consort/test-list.json", path: "$.tests[7].ac" }),
      );
      expect(output.issues.every((issue) => issue.fix.length > 0)).toBe(true);
    } finally {
      await restore();
    }
  });

  it("reports a design file that is not JSON as an issue of that file", async () => {
    const restore = await edit(".consort/db-design.json", (text) => text.slice(0, text.length / 2));
    try {
      const output = await validate({ checkpoint: "design" });
      expect(output.issues).toContainEqual(
        expect.objectContaining({
          file: ".consort/db-design.json",
          path: "$",
          message: expect.stringContaining("not valid JSON"),
        }),
      );
    } finally {
      await restore();
    }
  });

  it("reports an invalid .github/consort.yml among the issues", async () => {
    const restore = await edit(".github/consort.yml", (text) => `${text}repairBound: 99\n`);
    try {
      const output = await validate();
      expect(output.ok).toBe(false);
      expect(output.issues).toContainEqual({
        file: ".github/consort.yml",
        path: "$.repairBound",
        message: "Too big: expected number to be <=10",
        fix: "Correct those fields (node_modules/consort-for-github/schemas/consort-config.schema.json lists every field and its allowed values), then run `consort validate` to check the file.",
      });
    } finally {
      await restore();
    }
  });

  it("refuses a checkpoint that does not exist with a tool error listing the real ones", async () => {
    const result = await call(tools.client, "validate_artifacts", { checkpoint: "everything" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain('"test-list"');
  });
});
