/**
 * Where a repository keeps its Consort configuration (docs/ARCHITECTURE.md, Configuration). Declared in a module that
 * imports nothing, so src/roles (which the schema imports) can protect the file on tracks
 * without an import cycle; everyone else takes it from src/config/load.ts.
 */
export const CONFIG_PATH = ".github/consort.yml";
