import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { parseArtifact, validateArtifacts } from "../../src/artifacts/validate.js";
import { ReviewVerdict } from "../../src/contracts/review.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { edited, stockflowFiles, stockflowText } from "../orchestrator/fixtures/stockflow.js";

const P = ARTIFACT_PATHS;
const withFile = (path: string, text: string | undefined) => ({ ...stockflowFiles(), [path]: text });

describe("StockFlow F1's design artifacts", () => {
  it("are valid at every checkpoint, test globs included", () => {
    for (const checkpoint of ["stories", "spec", "architecture", "db-design", "ux", "design", "test-list"] as const) {
      const result = validateArtifacts(stockflowFiles(), checkpoint, { testGlobs: defaultConfig().paths.tests });
      expect(result.issues, checkpoint).toEqual([]);
    }
  });

  it("parse into typed artifacts", () => {
    const { artifacts } = validateArtifacts(stockflowFiles(), "test-list");
    expect(artifacts.spec?.stories.map((s) => s.id)).toEqual(["S1", "S2"]);
    expect(artifacts.testList?.tests).toHaveLength(8);
    expect(artifacts.architecture?.persistenceInvariants.map((i) => i.id)).toEqual(["INV1", "INV2", "INV3"]);
  });
});

describe("broken artifacts: each problem names the file, the JSON path and the fix", () => {
  it("a test naming an acceptance criterion the spec does not have", () => {
    const files = withFile(
      P.testList,
      edited(stockflowText.testList, (j) => (j.tests[2].ac = "S1-AC9")),
    );
    const { issues } = validateArtifacts(files, "test-list");
    expect(issues).toContainEqual({
      file: P.testList,
      path: "$.tests[2].ac",
      message: "T3 names S1-AC9, which is not an acceptance criterion in spec.json",
      fix: expect.stringContaining("S1-AC3"),
    });
  });

  it("an acceptance criterion no test covers", () => {
    const files = withFile(
      P.testList,
      edited(
        stockflowText.testList,
        (j) =>
          (j.tests = j.tests
            .filter((t: { ac: string }) => t.ac !== "S2-AC2")
            .map((t: object, i: number) => ({ ...t, id: `T${i + 1}` }))),
      ),
    );
    const { issues } = validateArtifacts(files, "test-list");
    expect(issues).toEqual([
      expect.objectContaining({
        file: P.testList,
        path: "$.tests",
        message: "acceptance criterion S2-AC2 has no test",
      }),
    ]);
  });

  it("a persistence invariant no test proves", () => {
    const files = withFile(
      P.testList,
      edited(stockflowText.testList, (j) => delete j.tests[4].invariant),
    );
    const { issues } = validateArtifacts(files, "test-list");
    expect(issues).toEqual([
      expect.objectContaining({
        message: "persistence invariant INV2 (quantity is never negative) is proven by no test",
        fix: expect.stringContaining('"invariant": "INV2"'),
      }),
    ]);
  });

  it("a persistence invariant the db design realises nowhere", () => {
    const files = withFile(
      P.dbDesign,
      edited(stockflowText.dbDesign, (j) => (j.migrations[0].realizes = ["INV1", "INV2"])),
    );
    const { issues } = validateArtifacts(files, "db-design");
    expect(issues).toEqual([
      expect.objectContaining({
        file: P.dbDesign,
        path: "$.migrations",
        message: expect.stringMatching(/^persistence invariant INV3 .* is realised by no migration$/),
      }),
    ]);
  });

  it("a migration realising an invariant the architecture does not declare, for a story the spec does not have", () => {
    const files = withFile(
      P.dbDesign,
      edited(stockflowText.dbDesign, (j) =>
        j.migrations.push({ id: "0002_x", story: "S7", description: "x", reversible: true, realizes: ["INV9"] }),
      ),
    );
    const { issues } = validateArtifacts(files, "db-design");
    expect(issues.map((i) => i.path)).toEqual(["$.migrations[1].story", "$.migrations[1].realizes[0]"]);
  });

  it("duplicate story ids and an AC filed under the wrong story", () => {
    const files = withFile(
      P.spec,
      edited(stockflowText.spec, (j) => {
        j.stories[1].id = "S1";
      }),
    );
    const { issues } = validateArtifacts(files, "stories");
    expect(issues.map((i) => `${i.path} ${i.message}`)).toEqual([
      "$.stories[1].id story id S1 is used twice",
      "$.stories[1].acceptanceCriteria[0].id S2-AC1 sits under story S1",
      "$.stories[1].acceptanceCriteria[1].id S2-AC2 sits under story S1",
    ]);
  });

  it("the spec step needs the NFRs, the stories step does not", () => {
    const files = withFile(
      P.spec,
      edited(stockflowText.spec, (j) => delete j.nfrs),
    );
    expect(validateArtifacts(files, "stories").ok).toBe(true);
    expect(validateArtifacts(files, "spec").issues).toEqual([
      expect.objectContaining({ path: "$", fix: expect.stringContaining("add `nfrs`") }),
    ]);
  });

  it("a layer allowed to import a layer that does not exist, and an NFR the architecture ignores", () => {
    const files = withFile(
      P.architecture,
      edited(stockflowText.architecture, (j) => {
        j.layers[0].mayImport.push("cache");
        j.nfrs.pop();
      }),
    );
    const { issues } = validateArtifacts(files, "architecture");
    expect(issues.map((i) => i.path)).toEqual(["$.layers[0].mayImport[1]", "$.nfrs"]);
    expect(issues[1]?.message).toBe("spec NFR NFR3 (layering) is not addressed");
  });

  it("a user-facing story without a screen", () => {
    const files = withFile(
      P.ux,
      edited(stockflowText.ux, (j) => (j.screens[0].stories = ["S1"])),
    );
    const { issues } = validateArtifacts(files, "ux");
    expect(issues).toEqual([
      expect.objectContaining({ file: P.ux, path: "$.screens", message: "user-facing story S2 has no screen" }),
    ]);
  });

  it("a missing ux.json when a story is user-facing", () => {
    const { issues } = validateArtifacts(withFile(P.ux, undefined), "design");
    expect(issues).toEqual([
      {
        file: P.ux,
        path: "$",
        message: "the file is missing",
        fix: expect.stringContaining("create .consort/ux.json"),
      },
    ]);
  });

  it("layers but no fitness test", () => {
    const files = withFile(
      P.testList,
      edited(stockflowText.testList, (j) => (j.tests[7].kind = "behavior")),
    );
    expect(validateArtifacts(files, "test-list").issues.map((i) => i.message)).toEqual([
      "the architecture declares layers but no fitness test checks them",
    ]);
  });

  it("a test file outside the configured test globs", () => {
    const files = withFile(
      P.testList,
      edited(stockflowText.testList, (j) => (j.tests[0].file = "src/stock.ts")),
    );
    const { issues } = validateArtifacts(files, "test-list", { testGlobs: defaultConfig().paths.tests });
    expect(issues).toEqual([
      expect.objectContaining({ path: "$.tests[0].file", fix: expect.stringContaining("test/**") }),
    ]);
  });

  it("shape errors: a missing field, an unknown key, a bad enum, invalid JSON", () => {
    const spec = withFile(
      P.spec,
      edited(stockflowText.spec, (j) => {
        delete j.stories[0].soThat;
        j.stories[0].priority = "high";
        j.nfrs[0].category = "speed";
      }),
    );
    const issues = validateArtifacts(spec, "spec").issues;
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "$.stories[0].soThat", fix: "add `soThat` (string)" }),
        expect.objectContaining({ path: "$.stories[0]", fix: expect.stringMatching(/^remove `priority`/) }),
        expect.objectContaining({ path: "$.nfrs[0].category", fix: expect.stringMatching(/^use one of "validation"/) }),
      ]),
    );
    expect(validateArtifacts(withFile(P.spec, "{ stories: "), "stories").issues[0]).toMatchObject({
      path: "$",
      fix: "fix the JSON syntax",
    });
  });
});

describe("every problem at once", () => {
  it("a misnumbered test list still has its tests checked against the spec, and the renumbering is said once", () => {
    const files = withFile(
      P.testList,
      edited(stockflowText.testList, (j) => {
        j.tests[1].id = "T9";
        j.tests[2].ac = "S1-AC9";
      }),
    );
    const { issues } = validateArtifacts(files, "test-list");
    expect(issues).toEqual([
      {
        file: P.testList,
        path: "$.tests[1].id",
        message: "test ids run T1…Tn in list order: entry 2 must be T2, not T9",
        fix: "renumber the list",
      },
      expect.objectContaining({ path: "$.tests[2].ac", message: expect.stringContaining("S1-AC9") }),
    ]);
  });

  it("a test entry missing a field does not hide another entry's dangling acceptance criterion", () => {
    const files = withFile(
      P.testList,
      edited(stockflowText.testList, (j) => {
        delete j.tests[0].kind;
        j.tests[2].ac = "S1-AC9";
      }),
    );
    const paths = validateArtifacts(files, "test-list").issues.map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(["$.tests[0].kind", "$.tests[2].ac"]));
  });
});

describe("foreign keys to tables the feature does not create", () => {
  const withForeignKey = (table: string, columns = ["id"]) =>
    withFile(
      P.dbDesign,
      edited(stockflowText.dbDesign, (j) =>
        (j.tables[0].foreignKeys ??= []).push({ columns: [j.tables[0].primaryKey[0]], references: { table, columns } }),
      ),
    );

  it("are accepted when the parent database's schema holds the table and its columns", () => {
    const existingTables = new Map([["products", new Set(["id", "name"])]]);
    const { issues } = validateArtifacts(withForeignKey("products"), "design", { existingTables });
    expect(issues).toEqual([]);
  });

  it("are refused, naming the parent database, when its schema has no such table or column", () => {
    const existingTables = new Map([["products", new Set(["id"])]]);
    expect(validateArtifacts(withForeignKey("prodcts"), "design", { existingTables }).issues).toEqual([
      expect.objectContaining({
        message: "foreign key to prodcts, which db-design.json does not describe and the parent database does not hold",
      }),
    ]);
    expect(validateArtifacts(withForeignKey("products", ["sku"]), "design", { existingTables }).issues).toEqual([
      expect.objectContaining({ message: "products has no column sku in the parent database" }),
    ]);
  });

  it("are left to the database check when the validation cannot see the parent's schema (the machine)", () => {
    expect(validateArtifacts(withForeignKey("products"), "design").issues).toEqual([]);
  });
});

describe("review verdicts", () => {
  it("accepts the Navigator's refactor verdict with notes", () => {
    expect(parseArtifact(".consort/reviews/T1.json", stockflowText.reviewT1, ReviewVerdict).value?.verdict).toBe(
      "refactor",
    );
  });
  it("refuses a refactor verdict without notes", () => {
    const { issues } = parseArtifact(".consort/reviews/T1.json", '{"unit":"T1","verdict":"refactor"}', ReviewVerdict);
    expect(issues).toEqual([
      expect.objectContaining({ path: "$.notes", fix: expect.stringContaining("say what the Driver should change") }),
    ]);
  });
});
