import { readdirSync, readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { renderJsonSchemas } from "../../scripts/schemas.js";
import { edited, stockflowText } from "../orchestrator/fixtures/stockflow.js";

const committedDir = new URL("../../schemas/", import.meta.url);
const rendered = renderJsonSchemas();

describe("schemas/ (JSON Schema generated from the zod schemas)", () => {
  it("is exactly what `npm run schemas` generates now (run it after changing a schema)", () => {
    const committed = Object.fromEntries(
      readdirSync(committedDir)
        .filter((f) => f.endsWith(".schema.json"))
        .map((f) => [f, readFileSync(new URL(f, committedDir), "utf8")]),
    );
    expect(committed).toEqual(rendered);
  });

  const validator = (file: string) =>
    new Ajv2020({ strict: false, allErrors: true }).compile(JSON.parse(rendered[file]!));

  it("lets an editor accept StockFlow's artifacts", () => {
    expect(validator("spec.schema.json")(JSON.parse(stockflowText.spec))).toBe(true);
    expect(validator("architecture.schema.json")(JSON.parse(stockflowText.architecture))).toBe(true);
    expect(validator("db-design.schema.json")(JSON.parse(stockflowText.dbDesign))).toBe(true);
    expect(validator("ux.schema.json")(JSON.parse(stockflowText.ux))).toBe(true);
    expect(validator("test-list.schema.json")(JSON.parse(stockflowText.testList))).toBe(true);
    expect(validator("review.schema.json")(JSON.parse(stockflowText.reviewT1))).toBe(true);
  });

  it("lets an editor flag a broken test list the same way zod does", () => {
    const validate = validator("test-list.schema.json");
    expect(validate(JSON.parse(edited(stockflowText.testList, (j) => (j.tests[0].kind = "smoke"))))).toBe(false);
    expect(validate(JSON.parse(edited(stockflowText.testList, (j) => (j.tests[0].extra = 1))))).toBe(false);
  });

  it("accepts an empty consort.yml (everything has a default) and rejects an unknown granularity", () => {
    const validate = validator("consort-config.schema.json");
    expect(validate({})).toBe(true);
    expect(validate(parseYaml('granularity: ac\nrepairBound: 2\nroles:\n  driver: ["driver-bot[bot]"]\n'))).toBe(true);
    expect(validate(parseYaml("granularity: story\n"))).toBe(false);
  });
});
