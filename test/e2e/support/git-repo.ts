import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The repository "on GitHub" in a scenario: a real git repository on disk. The GitHub double
 * answers the Git Data and contents APIs from it, scenario steps commit into it as agents would
 * push, and the cycle runner checks its commits out. Synchronous on purpose: nock answers from
 * a synchronous callback.
 */

export interface GitIdentity {
  name: string;
  email: string;
  /** The GitHub login the commit is attributed to (what `push` payloads call `username`). */
  login: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author: { name: string; email: string; date: string };
}

export interface ChangedFiles {
  added: string[];
  modified: string[];
  removed: string[];
}

const APP_IDENTITY = { GIT_AUTHOR_NAME: "consort[bot]", GIT_AUTHOR_EMAIL: "consort@users.noreply.github.com", GIT_COMMITTER_NAME: "GitHub", GIT_COMMITTER_EMAIL: "noreply@github.com" };
/** Every commit has the same date, so shas are deterministic for the same content and parents. */
const FIXED_DATE = "2026-03-01T12:00:00Z";

export class GitRepo {
  /** Branch heads, kept here (git objects are immutable, so every read below is cached by sha). */
  private readonly refs = new Map<string, string>();
  private readonly types = new Map<string, string | undefined>();
  private readonly commits = new Map<string, CommitInfo>();
  private readonly files = new Map<string, Buffer | undefined>();
  private readonly blobs = new Map<string, string | undefined>();
  private readonly trees = new Map<string, ReturnType<GitRepo["listTree"]>>();

  private constructor(readonly dir: string) {}

  /** A new repository whose default branch holds one commit with the files of `sourceDir` (less `leaveOut`). */
  static fromDirectory(sourceDir: string, { defaultBranch = "main", leaveOut = [] as string[] } = {}): GitRepo {
    const dir = mkdtempSync(join(tmpdir(), "consort-e2e-repo-"));
    const repo = new GitRepo(dir);
    repo.git("init", "-q", "-b", defaultBranch);
    repo.git("config", "core.autocrlf", "false");
    execFileSync("cp", ["-a", `${sourceDir}/.`, dir]);
    rmSync(join(dir, "node_modules"), { recursive: true, force: true });
    for (const path of ["junit.xml", ...leaveOut]) rmSync(join(dir, path), { recursive: true, force: true });
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", "StockFlow: the example backend");
    repo.refs.set(defaultBranch, repo.git("rev-parse", "HEAD"));
    return repo;
  }

  git(...args: string[]): string {
    return this.gitWith({}, undefined, ...args);
  }

  gitWith(env: Record<string, string>, input: string | Buffer | undefined, ...args: string[]): string {
    return execFileSync("git", ["-c", "commit.gpgsign=false", "-c", "user.name=Scenario", "-c", "user.email=scenario@example.invalid", ...args], {
      cwd: this.dir,
      env: { ...process.env, GIT_AUTHOR_DATE: FIXED_DATE, GIT_COMMITTER_DATE: FIXED_DATE, ...env },
      input,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    }).trimEnd();
  }

  /** The commit a branch points at, or undefined. */
  branchHead(branch: string): string | undefined {
    return this.refs.get(branch);
  }

  /** A branch name (or `refs/heads/x`) or a full commit sha → the commit. */
  resolve(ref: string): string | undefined {
    const branch = ref.replace(/^refs\/heads\//, "");
    if (this.refs.has(branch)) return this.refs.get(branch);
    return /^[0-9a-f]{40}$/.test(ref) && this.objectType(ref) === "commit" ? ref : undefined;
  }

  objectType(sha: string): string | undefined {
    if (!/^[0-9a-f]{40}$/.test(sha)) return undefined;
    if (!this.types.has(sha)) {
      let type: string | undefined;
      try {
        type = this.git("cat-file", "-t", sha);
      } catch {
        type = undefined;
      }
      if (type === undefined) return undefined; // it may be written later: do not cache a miss
      this.types.set(sha, type);
    }
    return this.types.get(sha);
  }

  commitInfo(sha: string): CommitInfo | undefined {
    const cached = this.commits.get(sha);
    if (cached) return cached;
    const info = this.readCommit(sha);
    if (info) this.commits.set(sha, info);
    return info;
  }

  private readCommit(sha: string): CommitInfo | undefined {
    if (this.objectType(sha) !== "commit") return undefined;
    const raw = this.git("cat-file", "commit", sha);
    const [header, ...rest] = raw.split("\n\n");
    const lines = header!.split("\n");
    const tree = lines.find((l) => l.startsWith("tree "))!.slice(5);
    const parents = lines.filter((l) => l.startsWith("parent ")).map((l) => l.slice(7));
    const authorLine = lines.find((l) => l.startsWith("author "))!.slice(7);
    const match = /^(.*) <(.*)> (\d+) [+-]\d{4}$/.exec(authorLine);
    return {
      sha,
      tree,
      parents,
      message: rest.join("\n\n"),
      author: { name: match?.[1] ?? "", email: match?.[2] ?? "", date: new Date(Number(match?.[3] ?? 0) * 1000).toISOString() },
    };
  }

  /** The text of `path` at `ref`, or undefined when it does not exist there (or is a folder). */
  fileAt(ref: string, path: string): Buffer | undefined {
    const commit = this.resolve(ref);
    if (!commit) return undefined;
    const key = `${commit}:${path}`;
    if (!this.files.has(key)) this.files.set(key, this.readFile(commit, path));
    return this.files.get(key);
  }

  private readFile(commit: string, path: string): Buffer | undefined {
    try {
      if (this.git("cat-file", "-t", `${commit}:${path}`) !== "blob") return undefined;
      return execFileSync("git", ["cat-file", "blob", `${commit}:${path}`], { cwd: this.dir, maxBuffer: 64 * 1024 * 1024 });
    } catch {
      return undefined;
    }
  }

  blobSha(ref: string, path: string): string | undefined {
    const commit = this.resolve(ref);
    if (!commit) return undefined;
    const key = `${commit}:${path}`;
    if (!this.blobs.has(key)) {
      try {
        this.blobs.set(key, this.git("rev-parse", "--verify", "-q", key));
      } catch {
        this.blobs.set(key, undefined);
      }
    }
    return this.blobs.get(key);
  }

  /** One level of a tree, as `git ls-tree` (with sizes) lists it. */
  listTree(treeSha: string): Array<{ mode: string; type: string; sha: string; size: number | undefined; path: string }> {
    const cached = this.trees.get(treeSha);
    if (cached) return cached;
    const listing = this.readTree(treeSha);
    this.trees.set(treeSha, listing);
    return listing;
  }

  private readTree(treeSha: string): Array<{ mode: string; type: string; sha: string; size: number | undefined; path: string }> {
    const out = this.git("ls-tree", "-l", treeSha);
    if (!out) return [];
    return out.split("\n").map((line) => {
      const [meta, path] = line.split("\t") as [string, string];
      const [mode, type, sha, size] = meta.split(/\s+/) as [string, string, string, string];
      return { mode, type, sha, size: size === "-" ? undefined : Number(size), path };
    });
  }

  writeBlob(content: string | Buffer): string {
    return this.gitWith({}, content, "hash-object", "-w", "--stdin");
  }

  /** A new tree: `base` (optional) with each entry set (a blob sha, or null to delete). */
  writeTree(base: string | undefined, entries: Array<{ path: string; mode: string; sha: string | null }>): string {
    const index = join(this.dir, ".git", `index-api-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const env = { GIT_INDEX_FILE: index };
    try {
      if (base) this.gitWith(env, undefined, "read-tree", base);
      else this.gitWith(env, undefined, "read-tree", "--empty");
      // One --index-info pass: mode 0 with the null sha removes a path.
      const info = entries.map((e) => (e.sha === null ? `0 ${"0".repeat(40)}\t${e.path}` : `${e.mode} ${e.sha}\t${e.path}`)).join("\n");
      if (entries.length > 0) this.gitWith(env, `${info}\n`, "update-index", "--index-info");
      return this.gitWith(env, undefined, "write-tree");
    } finally {
      try {
        unlinkSync(index);
      } catch {
        /* read-tree --empty on an empty tree may not write an index */
      }
    }
  }

  /** A commit made through the API: GitHub makes the app its author when none is given. */
  writeCommit(tree: string, parents: string[], message: string): string {
    return this.gitWith(APP_IDENTITY, message, "commit-tree", tree, ...parents.flatMap((p) => ["-p", p]));
  }

  /** Compare-and-swap a branch: undefined `expected` creates it (fails if it exists). */
  setBranch(branch: string, sha: string, expected?: string): void {
    if (this.refs.get(branch) !== expected) throw new Error(`${branch} is at ${this.refs.get(branch) ?? "nothing"}, not ${expected ?? "nothing"}`);
    this.refs.set(branch, sha);
  }

  deleteBranch(branch: string): void {
    this.refs.delete(branch);
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const queue = [descendant];
    while (queue.length > 0) {
      const sha = queue.pop()!;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(this.commitInfo(sha)?.parents ?? []));
    }
    return false;
  }

  /**
   * Commit on `branch` as `author` would push it: `files` maps a path to its new text, or null to
   * delete it. The branch moves to the new commit.
   */
  commitOn(branch: string, author: GitIdentity, message: string, files: Record<string, string | null>): { sha: string; changes: ChangedFiles } {
    const parent = this.branchHead(branch);
    if (!parent) throw new Error(`no branch ${branch} to commit on`);
    const parentTree = this.commitInfo(parent)!.tree;
    const entries = Object.entries(files).map(([path, text]) => ({ path, mode: "100644", sha: text === null ? null : this.writeBlob(text) }));
    const tree = this.writeTree(parentTree, entries);
    const env = { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_COMMITTER_NAME: author.name, GIT_COMMITTER_EMAIL: author.email };
    const sha = this.gitWith(env, message, "commit-tree", tree, "-p", parent);
    this.setBranch(branch, sha, parent);
    return { sha, changes: this.changesOf(sha) };
  }

  /** What a commit changed against its first parent, as a push payload lists it. */
  changesOf(sha: string): ChangedFiles {
    const info = this.commitInfo(sha)!;
    const changes: ChangedFiles = { added: [], modified: [], removed: [] };
    const out = info.parents[0] ? this.git("diff-tree", "--no-commit-id", "--name-status", "-r", info.parents[0], sha) : this.git("ls-tree", "-r", "--name-only", sha).replace(/^/gm, "A\t");
    for (const line of out.split("\n").filter(Boolean)) {
      const [status, path] = line.split("\t") as [string, string];
      if (status === "A") changes.added.push(path);
      else if (status === "D") changes.removed.push(path);
      else changes.modified.push(path);
    }
    return changes;
  }

  /** A working copy of `commit` for the cycle runner (a worktree sharing this repository's objects). */
  addWorktree(dir: string, commit: string): void {
    mkdirSync(dirname(dir), { recursive: true });
    this.git("worktree", "add", "-q", "--detach", dir, commit);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
