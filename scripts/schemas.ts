import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { Architecture } from "../src/artifacts/architecture.js";
import { DbDesign } from "../src/artifacts/db-design.js";
import { ReviewVerdict } from "../src/contracts/review.js";
import { Spec } from "../src/artifacts/spec.js";
import { TestList } from "../src/contracts/test-list.js";
import { Ux } from "../src/artifacts/ux.js";
import { TrackEvidence } from "../src/board/evidence.js";
import { ConsortConfig } from "../src/config/consort-config.js";

/**
 * The JSON Schemas editors use for the artifacts and `.github/consort.yml`, generated from the zod
 * schemas (one source of truth). `npm run schemas` writes them to `schemas/`; a test fails when
 * the committed files are stale. Cross-file rules are not expressible here: `consort validate` runs them.
 * A script, not src/: it gathers schemas from every floor (artifacts, configuration, the board's evidence).
 */

const SCHEMA_BASE = "https://consort.dev/schemas/";

const SOURCES: Array<{ file: string; title: string; description: string; schema: z.ZodType }> = [
  {
    file: "spec.schema.json",
    title: "Consort spec (.consort/spec.json)",
    description: "Stories, acceptance criteria (given/when/then) and non-functional requirements.",
    schema: Spec,
  },
  {
    file: "architecture.schema.json",
    title: "Consort architecture (.consort/architecture.json)",
    description: "Layers, modules, allowed imports, persistence invariants and how NFRs are met.",
    schema: Architecture,
  },
  {
    file: "db-design.schema.json",
    title: "Consort database design (.consort/db-design.json)",
    description: "Tables and the per-story migration plan, with the invariants each migration realises.",
    schema: DbDesign,
  },
  {
    file: "test-list.schema.json",
    title: "Consort test list (.consort/test-list.json)",
    description: "The ordered tests T1..Tn the build lane drives, each with its AC, file, exact title and kind.",
    schema: TestList,
  },
  {
    file: "ux.schema.json",
    title: "Consort UX (.consort/ux.json)",
    description: "Screens and their states for user-facing stories.",
    schema: Ux,
  },
  {
    file: "review.schema.json",
    title: "Consort review verdict (.consort/reviews/<unit>.json)",
    description: "The Navigator's verdict after a verified GREEN: accept or refactor, with notes.",
    schema: ReviewVerdict,
  },
  {
    file: "consort-config.schema.json",
    title: "Consort configuration (.github/consort.yml)",
    description: "Read from the default branch; every field has a default.",
    schema: ConsortConfig,
  },
  {
    file: "track-evidence.schema.json",
    title: "Consort track evidence (evidence.json from the board)",
    description:
      "Who approved which frozen files at which hash, every cycle with its run and verdict, the database branch and its promotion.",
    schema: TrackEvidence,
  },
];

/** file name → JSON text (2-space indented, trailing newline), in a stable order. */
export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { file, title, description, schema } of SOURCES) {
    // `input`: what a person writes (fields with defaults are optional), not what the parser returns.
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    const document = { $schema: json.$schema, $id: `${SCHEMA_BASE}${file}`, title, description, ...json };
    out[file] = `${JSON.stringify(document, null, 2)}\n`;
  }
  return out;
}

/** `npm run schemas`: regenerate `schemas/` from the zod schemas (and drop files no schema makes any more). */
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = join(dirname(fileURLToPath(import.meta.url)), "../schemas");
  mkdirSync(dir, { recursive: true });
  const rendered = renderJsonSchemas();
  for (const file of readdirSync(dir))
    if (file.endsWith(".schema.json") && !(file in rendered)) rmSync(join(dir, file));
  for (const [file, text] of Object.entries(rendered)) writeFileSync(join(dir, file), text);
  console.log(`wrote ${Object.keys(rendered).length} schemas to schemas/`);
}
