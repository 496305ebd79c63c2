import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateCheckout, ValidateArtifactsOutput } from "../../src/tools/validate-artifacts.js";
import { edited, stockflowText } from "../orchestrator/fixtures/stockflow.js";
import { sql } from "../helpers/postgres.js";
import { call, errorText } from "./mcp-client.js";
import { toolsOnCheckout } from "./fixture.js";

const work = mkdtempSync(join(tmpdir(), "consort-validate-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function checkout(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** The one validation `consort validate` and `validate_artifacts` both give: its default checkpoint is as far as the files go. */
describe("validateCheckout", () => {
  it("validates only as far as the design has come", () => {
    const dir = checkout("early", { ".consort/spec.json": edited(stockflowText.spec, (j) => delete j.nfrs) });
    expect(validateCheckout(dir)).toMatchObject({ ok: true, checkpoint: "stories" });
    expect(validateCheckout(dir, { upTo: "spec" }).issues).toEqual([
      expect.objectContaining({ fix: expect.stringContaining("add `nfrs`") }),
    ]);
  });

  it("checks only the configuration when there is no design yet", () => {
    const dir = checkout("fresh", { ".github/consort.yml": "granularity: ac\n" });
    expect(validateCheckout(dir)).toMatchObject({ ok: true, files: [], config: ".github/consort.yml" });
    expect(validateCheckout(dir, { upTo: "stories" }).issues).toEqual([
      expect.objectContaining({ file: ".consort/spec.json", message: "the file is missing" }),
    ]);
  });

  it("reports YAML that does not parse", () => {
    const dir = checkout("yaml", { ".github/consort.yml": "granularity: [test\n" });
    expect(validateCheckout(dir).issues[0]).toMatchObject({
      file: ".github/consort.yml",
      path: "$",
      fix: "Fix the YAML syntax, then run `npx --no-install consort validate` to check the file.",
    });
  });
});

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
    // No checkpoint asked: as far as the files go, as `consort validate` does.
    expect(output.checkpoint).toBe("test-list");
    expect(output.filesRead).toEqual([
      ".consort/architecture.json",
      ".consort/db-design.json",
      ".consort/spec.json",
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
        fix: "Correct those fields (node_modules/consort-for-github/schemas/consort-config.schema.json lists every field and its allowed values), then run `npx --no-install consort validate` to check the file.",
      });
    } finally {
      await restore();
    }
  });

  it("defaults, like `consort validate`, to as far as the files go: an early design is not failed for files not due", async () => {
    const later = [".consort/architecture.json", ".consort/db-design.json", ".consort/test-list.json"];
    const texts = await Promise.all(later.map((path) => readFile(join(tools.checkout.path, path), "utf8")));
    for (const path of later) rmSync(join(tools.checkout.path, path));
    try {
      const output = await validate();
      expect(output).toMatchObject({ ok: true, checkpoint: "spec", filesRead: [".consort/spec.json"] });
      expect((await validate({ checkpoint: "test-list" })).ok).toBe(false);
    } finally {
      await Promise.all(later.map((path, i) => writeFile(join(tools.checkout.path, path), texts[i]!)));
    }
  });

  it("accepts a foreign key to a table the parent database already holds, checked against the database branch", async () => {
    const provider = await tools.checkout.context().provider();
    const root = await provider.rootBranch();
    await sql(
      await provider.connectionUrl(root),
      "CREATE TABLE IF NOT EXISTS products (id bigint PRIMARY KEY, name text)",
    );
    await provider.refreshBase?.(root);
    const toProducts = (table: string) =>
      edit(".consort/db-design.json", (text) =>
        edited(text, (j) => {
          j.tables[0].columns.push({ name: "product_id", type: "bigint", nullable: true });
          j.tables[0].foreignKeys = [{ columns: ["product_id"], references: { table, columns: ["id"] } }];
        }),
      );
    let restore = await toProducts("products");
    try {
      expect((await validate({ checkpoint: "design" })).issues).toEqual([]);
    } finally {
      await restore();
    }
    restore = await toProducts("prodcts");
    try {
      expect((await validate({ checkpoint: "design" })).issues).toEqual([
        expect.objectContaining({
          path: "$.tables[0].foreignKeys[0].references.table",
          message: `foreign key to prodcts, which db-design.json does not describe and the parent database does not hold`,
          fix: expect.stringContaining("products"),
        }),
      ]);
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
