import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** `npm run bench`: every `bench/*.bench.ts`, one process each, in name order. */
const dir = fileURLToPath(new URL(".", import.meta.url));
const benches = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .sort();
if (benches.length === 0) {
  console.error("no benchmarks found in bench/");
  process.exit(1);
}
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file} ===`);
  const result = spawnSync(process.execPath, ["--import", "tsx", `${dir}${file}`, ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  if (result.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
