import { execFile, spawn } from "node:child_process";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { promisify } from "node:util";
import picomatch from "picomatch";
import { TestList } from "../contracts/test-list.js";
import { formatZodError } from "../contracts/zod-error.js";
import { hashFrozenText } from "../gates/freeze.js";
import { testIdsOf, type CycleRequest, type FrozenTestFile } from "../contracts/cycle-request.js";
import type { FrozenFileState, TestFileChange } from "./verdict.js";

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

/** The text of a file, or undefined when it does not exist. */
async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * The texts of `paths` as stored in git at `commit` (undefined for a path the commit does not
 * hold): the evidence a verdict stands on, whatever the working tree says. One `git cat-file
 * --batch` for all of them.
 */
export async function readAtCommit(
  cwd: string,
  commit: string,
  paths: string[],
): Promise<Map<string, string | undefined>> {
  const texts = new Map<string, string | undefined>();
  if (paths.length === 0) return texts;
  const output = await new Promise<Buffer>((resolvePromise, reject) => {
    const child = spawn("git", ["cat-file", "--batch"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolvePromise(Buffer.concat(chunks))
        : reject(new Error(`git cat-file could not read the commit ${commit.slice(0, 12)}: ${errors.trim()}`)),
    );
    child.stdin.end(paths.map((path) => `${commit}:${path}\n`).join(""));
  });
  let at = 0;
  for (const path of paths) {
    const lineEnd = output.indexOf(0x0a, at);
    const header = output.toString("utf8", at, lineEnd);
    at = lineEnd + 1;
    const [, type, size] = header.split(" ");
    if (header.endsWith(" missing") || type !== "blob") {
      texts.set(path, undefined);
      continue;
    }
    texts.set(path, output.toString("utf8", at, at + Number(size)));
    at += Number(size) + 1;
  }
  return texts;
}

/**
 * The frozen texts the request points at, read from git at the commit whose verified RED froze
 * each file (the request carries hashes, never text). A text is kept only if it hashes to the
 * frozen sha256; one missing or different is left out, so a RED that changed the file refuses.
 */
export async function frozenTextsFromGit(cwd: string, frozen: FrozenTestFile[]): Promise<Map<string, string>> {
  const byCommit = new Map<string, string[]>();
  for (const file of frozen)
    if (file.commit) byCommit.set(file.commit, [...(byCommit.get(file.commit) ?? []), file.path]);
  const texts = new Map<string, string>();
  for (const [commit, paths] of byCommit) {
    let read: Map<string, string | undefined>;
    try {
      read = await readAtCommit(cwd, commit, paths);
    } catch {
      continue; // a commit the checkout does not hold: no frozen text, and the verdict says so
    }
    for (const file of frozen.filter((f) => f.commit === commit)) {
      const text = read.get(file.path);
      if (text !== undefined && hashFrozenText(text) === file.sha256) texts.set(file.path, text);
    }
  }
  return texts;
}

/**
 * The tests a request names by id in the test list, with their files and titles as the list holds
 * them in git at the commit under test. The list must hash to what the test-list gate approved: a
 * list nobody approved never decides which tests count. Without a `testList` the request names its
 * tests in full, and those are taken as they are.
 */
export async function testsOfRequest(cwd: string, request: CycleRequest): Promise<CycleRequest["tests"]> {
  const listed = request.testList;
  if (!listed) return request.tests;
  const at = request.commit.slice(0, 12);
  const text = (await readAtCommit(cwd, request.commit, [listed.path])).get(listed.path);
  if (text === undefined)
    throw new Error(
      `the test list ${listed.path} is not in the commit ${at} under test: the cycle cannot tell which tests to judge, so it refuses (commit the approved test list)`,
    );
  const hash = hashFrozenText(text);
  if (hash !== listed.sha256)
    throw new Error(
      `the test list ${listed.path} at ${at} hashes to ${hash.slice(0, 12)}, not to the ${listed.sha256.slice(0, 12)} the test-list gate approved: the cycle refuses to take tests from a list nobody approved (restore the approved list, or have the test-list gate approve this one)`,
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`the test list ${listed.path} at ${at} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = TestList.safeParse(data);
  if (!parsed.success)
    throw new Error(formatZodError(parsed.error, `the test list ${listed.path} at ${at} is invalid`));
  const byId = new Map(parsed.data.tests.map((t) => [t.id, { id: t.id, file: t.file, title: t.title }]));
  const ids = testIdsOf(request);
  const pick = (id: string) => {
    const test = byId.get(id);
    if (!test)
      throw new Error(
        `the request names ${id}, but the test list ${listed.path} at ${at} has only T1-T${parsed.data.tests.length}: the cycle refuses`,
      );
    return test;
  };
  return { inTurn: ids.inTurn.map(pick), earlierGreen: ids.earlierGreen.map(pick) };
}

/** The frozen files as the commit under test holds them (never the working tree). */
export function frozenFilesAt(
  committed: Map<string, string | undefined>,
  frozen: FrozenTestFile[],
  frozenTexts: Map<string, string>,
): FrozenFileState[] {
  return frozen.map((file) => {
    const text = frozenTexts.get(file.path);
    return {
      path: file.path,
      sha256: file.sha256,
      ...(text !== undefined ? { frozen: text } : {}),
      current: committed.get(file.path),
    };
  });
}

/** The paths whose working-tree file is not what the commit holds (changed, added or deleted). */
export async function driftFromCommit(root: string, committed: Map<string, string | undefined>): Promise<string[]> {
  const drifted: string[] = [];
  for (const [path, text] of committed) if ((await readIfExists(join(root, path))) !== text) drifted.push(path);
  return drifted;
}

/** Every path the commit holds (files and links; a submodule's folder too), for the source check. */
export async function committedPaths(cwd: string, commit: string): Promise<string[]> {
  const { stdout } = await run("git", ["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.split("\0").filter(Boolean);
}

/** What is at `path`: a link's target, a file's bytes, or nothing (missing, or a folder). */
async function contentAt(path: string): Promise<string | Buffer | undefined> {
  try {
    const entry = await lstat(path);
    if (entry.isSymbolicLink()) return `link:${await readlink(path)}`;
    return entry.isFile() ? await readFile(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The committed paths whose file in `copy` is not what it is in the checkout `source` it was
 * copied from (which the commands never reach): changed, replaced or deleted while they ran.
 */
export async function sourceDrift(source: string, copy: string, paths: string[]): Promise<string[]> {
  const drifted: string[] = [];
  for (const path of paths) {
    const [was, is] = await Promise.all([contentAt(join(source, path)), contentAt(join(copy, path))]);
    if (was === undefined) continue; // a submodule's folder: not a file of this repository
    const same = typeof was === "string" || typeof is === "string" ? was === is : is !== undefined && was.equals(is);
    if (!same) drifted.push(path);
  }
  return drifted;
}

/** The commit the track's changes are measured from, or why it could not be found. */
export type TestBase = { ok: true; commit: string; describe: string } | { ok: false; reason: string };

/** The default branch candidates when a request names no base (older requests, `consort cycle`). */
const DEFAULT_BASE_REFS = [
  "refs/remotes/origin/HEAD",
  "refs/remotes/origin/main",
  "refs/remotes/origin/master",
  "refs/heads/main",
  "refs/heads/master",
];

async function gitOut(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch {
    return undefined;
  }
}

const shortName = (ref: string) => ref.replace(/^refs\/(heads|remotes)\//, "");

/**
 * The merge base of HEAD with the request's base (its commit, else its branch as `origin/<branch>`
 * or the local branch, else the default branch). Fails (never guesses) when none of them is in the
 * checkout or they share no history with HEAD (a shallow clone).
 */
export async function resolveTestBase(
  cwd: string,
  base: { commit?: string; branch?: string } | undefined,
): Promise<TestBase> {
  const candidates: string[] = [];
  if (base?.commit) candidates.push(base.commit);
  if (base?.branch) candidates.push(`refs/remotes/origin/${base.branch}`, `refs/heads/${base.branch}`);
  if (!base) candidates.push(...DEFAULT_BASE_REFS);
  for (const candidate of candidates) {
    const sha = (await gitOut(cwd, ["rev-parse", "--verify", "--quiet", `${candidate}^{commit}`]))?.trim();
    if (!sha || !SHA.test(sha)) continue;
    const name = SHA.test(candidate) ? candidate.slice(0, 12) : shortName(candidate);
    const mergeBase = (await gitOut(cwd, ["merge-base", sha, "HEAD"]))?.trim();
    if (!mergeBase || !SHA.test(mergeBase)) {
      return {
        ok: false,
        reason: `the checkout's HEAD shares no history with the base ${name}, so the track's own test changes cannot be told from the trunk's; check out with full history (actions/checkout \`fetch-depth: 0\`)`,
      };
    }
    return { ok: true, commit: mergeBase, describe: `the merge base ${mergeBase.slice(0, 12)} with ${name}` };
  }
  const wanted = base
    ? [base.commit?.slice(0, 12), base.branch && `the branch ${base.branch}`].filter(Boolean).join(" or ")
    : "the default branch (the request names no base)";
  return {
    ok: false,
    reason: `the base to compare the track's test files with, ${wanted}, is not in the checkout, so the track's own test changes cannot be told from the trunk's; check out with full history (actions/checkout \`fetch-depth: 0\`)`,
  };
}

/**
 * The test files (by the configured globs) the checkout's working tree changed since `baseCommit`:
 * added, modified or deleted (a rename is a deletion and an addition), untracked files included.
 */
export async function testFileChanges(cwd: string, baseCommit: string, globs: string[]): Promise<TestFileChange[]> {
  const isTest = picomatch(globs, { dot: false });
  const diff = await run(
    "git",
    ["-c", "core.quotePath=false", "diff", "--name-status", "--no-renames", "-z", baseCommit],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  );
  const changes = new Map<string, TestFileChange["change"]>();
  const fields = diff.stdout.split("\0");
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!;
    const path = fields[i + 1]!;
    changes.set(path, status.startsWith("A") ? "added" : status.startsWith("D") ? "deleted" : "modified");
  }
  const untracked = await run("git", ["ls-files", "--others", "--exclude-standard", "-z"], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const path of untracked.stdout.split("\0")) {
    if (path && !path.split("/").some((part) => SKIP_DIRS.has(part))) changes.set(path, "added");
  }
  return [...changes]
    .filter(([path]) => isTest(path))
    .map(([path, change]) => ({ path, change }))
    .sort((a, b) => a.path.localeCompare(b.path));
}
