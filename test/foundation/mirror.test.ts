import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// test/ mirrors src/: a test for src/X/y.ts lives under test/X/. These folders hold tests of the whole
// app, of the harness, or shared helpers and data, so they name no folder of src/; test/scripts/
// mirrors the repository's own scripts/ (the build and the schema writer), which are not src/.
const NOT_MIRRORED = new Set(["e2e", "security", "setup", "helpers", "support", "fixtures", "foundation", "scripts"]);

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Test files (paths relative to test/) whose folder names no folder under src/, with the reason. */
function misplaced(testFiles: readonly string[], srcFolders: ReadonlySet<string>): string[] {
  return testFiles.flatMap((file) => {
    const folders = file.split("/").slice(0, -1);
    if (folders.some((folder) => NOT_MIRRORED.has(folder))) return [];
    const folder = folders.join("/");
    if (folder === "") return [`test/${file}: sits at the root of test/, not in a folder that mirrors src/`];
    return srcFolders.has(folder) ? [] : [`test/${file}: src/${folder}/ does not exist`];
  });
}

const posix = (path: string) => path.split(sep).join("/");
const testFiles = walk(join(ROOT, "test"))
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => posix(relative(join(ROOT, "test"), file)));
const srcFolders = new Set(
  walk(join(ROOT, "src"))
    .map((file) => posix(relative(join(ROOT, "src"), join(file, ".."))))
    .flatMap((folder) => folder.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"))),
);

describe("test/ mirrors src/", () => {
  it("puts every test file in a folder that names a folder of src/", () => {
    expect(testFiles.length).toBeGreaterThan(50);
    expect(misplaced(testFiles, srcFolders)).toEqual([]);
  });

  it("refuses a test filed under another module's folder, a made-up folder or the root of test/", () => {
    expect(
      misplaced(
        [
          "orchestrator/roles/classify.test.ts",
          "orchestrator/machine/graph.test.ts",
          "widgets/thing.test.ts",
          "loose.test.ts",
          "state/store.test.ts",
          "cycle/junit/parse.test.ts",
          "e2e/feature.test.ts",
          "cycle/junit/fixtures/node/project/test/cart.test.ts",
        ],
        srcFolders,
      ),
    ).toEqual([
      "test/orchestrator/roles/classify.test.ts: src/orchestrator/roles/ does not exist",
      "test/orchestrator/machine/graph.test.ts: src/orchestrator/machine/ does not exist",
      "test/widgets/thing.test.ts: src/widgets/ does not exist",
      "test/loose.test.ts: sits at the root of test/, not in a folder that mirrors src/",
    ]);
  });
});
