import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderJsonSchemas } from "./json-schemas.js";

/** `npm run schemas`: regenerate `schemas/` from the zod schemas (and drop files no schema makes any more). */
const dir = join(process.cwd(), "schemas");
mkdirSync(dir, { recursive: true });
const rendered = renderJsonSchemas();
for (const file of readdirSync(dir)) if (file.endsWith(".schema.json") && !(file in rendered)) rmSync(join(dir, file));
for (const [file, text] of Object.entries(rendered)) writeFileSync(join(dir, file), text);
console.log(`wrote ${Object.keys(rendered).length} schemas to schemas/`);
