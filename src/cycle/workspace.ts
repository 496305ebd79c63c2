import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { promisify } from "node:util";
import picomatch from "picomatch";
import type { FrozenTestFile } from "./request.js";
import type { FrozenFileState } from "./verdict.js";

/** What the cycle reads from the checkout: its commit, its test files, the frozen files' texts. */

const run = promisify(execFile);

/** The commit checked out in `cwd` (git rev-parse HEAD), or undefined when it is not a git checkout. */
export async function headCommit(cwd: string): Promise<string | undefined> {
  try {
    const { stdout } = await run("git", ["rev-parse", "HEAD"], { cwd });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

const SKIP_DIRS = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__", "target", "dist", "coverage"]);

/** Repository-relative paths (forward slashes) of the files under `root`, without dependency folders. */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) await walk(join(dir, entry.name));
      } else if (entry.isFile()) {
        out.push(relative(root, join(dir, entry.name)).split(sep).join("/"));
      }
    }
  }
  await walk(root);
  return out.sort();
}

/** The test files in the checkout by the configured globs. */
export async function listTestFiles(root: string, globs: string[]): Promise<string[]> {
  const isTest = picomatch(globs, { dot: false });
  return (await listFiles(root)).filter((path) => isTest(path));
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

export async function readFrozenFiles(root: string, frozen: FrozenTestFile[]): Promise<FrozenFileState[]> {
  return Promise.all(
    frozen.map(async (file) => ({
      path: file.path,
      sha256: file.sha256,
      ...(file.text !== undefined ? { frozen: file.text } : {}),
      current: await readIfExists(join(root, file.path)),
    })),
  );
}
