import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { promisify } from "node:util";
import picomatch from "picomatch";
import type { FrozenTestFile } from "./request.js";
import type { FrozenFileState } from "./verdict.js";

/** What the cycle reads from the checkout: its commit, its test files, the frozen files' texts. */

const run = promisify(execFile);

/**
 * The commit checked out in `cwd`, or undefined when it is not a git checkout. Read from `.git`
 * directly when the layout is the plain one (a process spawn is most of a cycle's own overhead);
 * anything unusual asks git itself.
 */
export async function headCommit(cwd: string): Promise<string | undefined> {
  const direct = await readHeadDirectly(cwd).catch(() => undefined);
  if (direct) return direct;
  try {
    const { stdout } = await run("git", ["rev-parse", "HEAD"], { cwd });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

const SHA = /^[0-9a-f]{40}$/;

async function readHeadDirectly(cwd: string): Promise<string | undefined> {
  const gitDir = join(cwd, ".git");
  const head = (await readFile(join(gitDir, "HEAD"), "utf8")).trim();
  if (SHA.test(head)) return head;
  const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  try {
    const loose = (await readFile(join(gitDir, ref), "utf8")).trim();
    return SHA.test(loose) ? loose : undefined;
  } catch {
    const packed = await readFile(join(gitDir, "packed-refs"), "utf8");
    const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
    const sha = line?.slice(0, 40);
    return sha && SHA.test(sha) ? sha : undefined;
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
