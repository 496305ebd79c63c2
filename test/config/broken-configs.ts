/** Two broken configurations and what a person reads about them, from disk or from GitHub alike. */
export const FIX_SCHEMA =
  "Correct those fields (node_modules/consort-for-github/schemas/consort-config.schema.json lists every field and its allowed values), then run `npx --no-install consort validate` to check the file.";
export const FIX_YAML = "Fix the YAML syntax, then run `npx --no-install consort validate` to check the file.";
export const BROKEN_SCHEMA = "repairBound: 50\ndatabase:\n  provider: oracle\n";
export const BROKEN_YAML = "repairBound: [1,\n";
export const YAML_PROBLEM =
  "not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1";
