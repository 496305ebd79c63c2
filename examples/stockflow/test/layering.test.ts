import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "../src");

async function importsOf(folder: string): Promise<Array<{ file: string; from: string }>> {
  const files = (await readdir(join(src, folder))).filter((f) => f.endsWith(".ts"));
  const found: Array<{ file: string; from: string }> = [];
  for (const file of files) {
    const text = await readFile(join(src, folder, file), "utf8");
    for (const match of text.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
      found.push({ file: `${folder}/${file}`, from: (match[1] ?? match[2])! });
    }
  }
  return found;
}

test("routes never touch the database directly: they import services, not repositories, db or pg", async () => {
  const imports = await importsOf("routes");
  expect(imports.length).toBeGreaterThan(0);
  const forbidden = imports.filter(({ from }) => /(^pg$|\/repositories\/|\/db\/)/.test(from));
  expect(forbidden).toEqual([]);
});
