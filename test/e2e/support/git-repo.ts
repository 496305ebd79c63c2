import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
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
  /** Who made the commit object (GitHub shows its login when the e-mail maps to an account). */
  committer?: { name: string; email: string };
}

export interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
  size: number | undefined;
  path: string;
}

export interface FileChange {
  path: string;
  status: "added" | "removed" | "modified";
  blob: string;
}

export interface ChangedFiles {
  added: string[];
  modified: string[];
  removed: string[];
}

/**
 * Who GitHub makes the author and committer of what the app writes through the API: its bot, by
 * the bot's no-reply address (`<bot id>+<slug>[bot]@users.noreply.github.com`, which GitHub maps
 * to the login `consort[bot]`), committed and signed by GitHub (web-flow).
 */
const APP_IDENTITY = {
  GIT_AUTHOR_NAME: "consort[bot]",
  GIT_AUTHOR_EMAIL: "41898282+consort[bot]@users.noreply.github.com",
  GIT_COMMITTER_NAME: "GitHub",
  GIT_COMMITTER_EMAIL: "noreply@github.com",
};
/** Every commit has the same date, so shas are deterministic for the same content and parents. */
const FIXED_DATE = "2026-03-01T12:00:00Z";

export class GitRepo {
  /** Branch heads, kept here (git objects are immutable, so every read below is cached by sha). */
  private readonly refs = new Map<string, string>();
  private readonly types = new Map<string, string | undefined>();
  private readonly commits = new Map<string, CommitInfo>();
  private readonly files = new Map<string, Buffer | undefined>();
  private readonly trees = new Map<string, TreeEntry[]>();
  /** Contents of blobs this process wrote or read. */
  private readonly blobContent = new Map<string, Buffer>();

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
    return execFileSync(
      "git",
      ["-c", "commit.gpgsign=false", "-c", "user.name=Scenario", "-c", "user.email=scenario@example.invalid", ...args],
      {
        cwd: this.dir,
        env: { ...process.env, GIT_AUTHOR_DATE: FIXED_DATE, GIT_COMMITTER_DATE: FIXED_DATE, ...env },
        input,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
        maxBuffer: 64 * 1024 * 1024,
      },
    ).trimEnd();
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
    const committerLine = lines.find((l) => l.startsWith("committer "))?.slice(10) ?? "";
    const made = /^(.*) <(.*)> \d+ [+-]\d{4}$/.exec(committerLine);
    return {
      sha,
      tree,
      parents,
      message: rest.join("\n\n"),
      author: {
        name: match?.[1] ?? "",
        email: match?.[2] ?? "",
        date: new Date(Number(match?.[3] ?? 0) * 1000).toISOString(),
      },
      ...(made ? { committer: { name: made[1]!, email: made[2]! } } : {}),
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
    const entry = this.entryAt(commit, path);
    if (entry?.type !== "blob") return undefined;
    const known = this.blobContent.get(entry.sha);
    if (known) return known;
    try {
      if (this.git("cat-file", "-t", `${commit}:${path}`) !== "blob") return undefined;
      return execFileSync("git", ["cat-file", "blob", `${commit}:${path}`], {
        cwd: this.dir,
        maxBuffer: 64 * 1024 * 1024,
      });
    } catch {
      return undefined;
    }
  }

  blobSha(ref: string, path: string): string | undefined {
    const commit = this.resolve(ref);
    const entry = commit ? this.entryAt(commit, path) : undefined;
    return entry?.type === "blob" ? entry.sha : undefined;
  }

  /** The tree entry at `path` in a commit, walking cached trees. */
  private entryAt(commit: string, path: string): TreeEntry | undefined {
    let tree = this.commitInfo(commit)?.tree;
    const parts = path.split("/");
    for (let i = 0; i < parts.length; i++) {
      if (!tree) return undefined;
      const entry = this.listTree(tree).find((e) => e.path === parts[i]);
      if (!entry || i === parts.length - 1) return entry;
      tree = entry.type === "tree" ? entry.sha : undefined;
    }
    return undefined;
  }

  /** One level of a tree, as `git ls-tree` (with sizes) lists it. */
  listTree(treeSha: string): TreeEntry[] {
    const cached = this.trees.get(treeSha);
    if (cached) return cached;
    const listing = this.readTree(treeSha);
    this.trees.set(treeSha, listing);
    return listing;
  }

  private readTree(treeSha: string): TreeEntry[] {
    const out = this.git("ls-tree", "-l", treeSha);
    if (!out) return [];
    return out.split("\n").map((line) => {
      const [meta, path] = line.split("\t") as [string, string];
      const [mode, type, sha, size] = meta.split(/\s+/) as [string, string, string, string];
      return { mode, type, sha, size: size === "-" ? undefined : Number(size), path };
    });
  }

  /** Write a loose object as git does (zlib of "<type> <size>\\0<body>"), named by its sha-1. */
  private writeObject(type: "blob" | "tree" | "commit", body: Buffer): string {
    const full = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
    const sha = createHash("sha1").update(full).digest("hex");
    const file = join(this.dir, ".git", "objects", sha.slice(0, 2), sha.slice(2));
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, deflateSync(full));
    }
    this.types.set(sha, type);
    return sha;
  }

  writeBlob(content: string | Buffer): string {
    const body = Buffer.from(content);
    const sha = this.writeObject("blob", body);
    this.blobContent.set(sha, body);
    return sha;
  }

  /** A new tree: `base` (optional) with each entry set (a blob sha, or null to delete); paths may nest. */
  writeTree(base: string | undefined, entries: Array<{ path: string; mode: string; sha: string | null }>): string {
    return this.buildTree(
      base,
      entries.map((e) => ({ parts: e.path.split("/"), mode: e.mode, sha: e.sha })),
    );
  }

  private buildTree(
    base: string | undefined,
    changes: Array<{ parts: string[]; mode: string; sha: string | null }>,
  ): string {
    const listing = new Map((base ? this.listTree(base) : []).map((e) => [e.path, e]));
    const nested = new Map<string, Array<{ parts: string[]; mode: string; sha: string | null }>>();
    for (const change of changes) {
      const [name, ...rest] = change.parts as [string, ...string[]];
      if (rest.length === 0) {
        if (change.sha === null) listing.delete(name);
        else
          listing.set(name, {
            mode: change.mode,
            type: "blob",
            sha: change.sha,
            size: this.blobContent.get(change.sha)?.length,
            path: name,
          });
      } else {
        nested.set(name, [...(nested.get(name) ?? []), { ...change, parts: rest }]);
      }
    }
    for (const [name, inner] of nested) {
      const existing = listing.get(name);
      const child = this.buildTree(existing?.type === "tree" ? existing.sha : undefined, inner);
      if (this.listTree(child).length === 0) listing.delete(name);
      else listing.set(name, { mode: "040000", type: "tree", sha: child, size: undefined, path: name });
    }
    // git orders entries by name bytes, a tree's name compared as if it ended in "/".
    const key = (e: TreeEntry) => Buffer.from(e.type === "tree" ? `${e.path}/` : e.path);
    const sorted = [...listing.values()].sort((a, b) => Buffer.compare(key(a), key(b)));
    const body = Buffer.concat(
      sorted.flatMap((e) => [
        Buffer.from(`${e.mode === "040000" ? "40000" : e.mode} ${e.path}\0`),
        Buffer.from(e.sha, "hex"),
      ]),
    );
    const sha = this.writeObject("tree", body);
    this.trees.set(sha, sorted);
    return sha;
  }

  /** A commit; by default as one made through the API (GitHub makes the app its author when none is given). */
  writeCommit(
    tree: string,
    parents: string[],
    message: string,
    author = { name: APP_IDENTITY.GIT_AUTHOR_NAME, email: APP_IDENTITY.GIT_AUTHOR_EMAIL },
    committer = { name: APP_IDENTITY.GIT_COMMITTER_NAME, email: APP_IDENTITY.GIT_COMMITTER_EMAIL },
  ): string {
    const seconds = Math.floor(Date.parse(FIXED_DATE) / 1000);
    const text = `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}author ${author.name} <${author.email}> ${seconds} +0000\ncommitter ${committer.name} <${committer.email}> ${seconds} +0000\n\n${message}`;
    const sha = this.writeObject("commit", Buffer.from(text));
    this.commits.set(sha, {
      sha,
      tree,
      parents,
      message,
      author: { ...author, date: new Date(seconds * 1000).toISOString() },
      committer: { name: committer.name, email: committer.email },
    });
    return sha;
  }

  /** Commits reachable from `head` and not from `exclude`, oldest first (first-parent order). */
  revList(head: string, exclude: string): string[] {
    const excluded = new Set<string>();
    const walk = [exclude];
    while (walk.length > 0) {
      const sha = walk.pop()!;
      if (excluded.has(sha)) continue;
      excluded.add(sha);
      walk.push(...(this.commitInfo(sha)?.parents ?? []));
    }
    const out: string[] = [];
    const seen = new Set<string>();
    const queue = [head];
    while (queue.length > 0) {
      const sha = queue.shift()!;
      if (excluded.has(sha) || seen.has(sha)) continue;
      seen.add(sha);
      out.push(sha);
      queue.push(...(this.commitInfo(sha)?.parents ?? []));
    }
    return out.reverse();
  }

  /** Compare-and-swap a branch: undefined `expected` creates it (fails if it exists). */
  setBranch(branch: string, sha: string, expected?: string): void {
    if (this.refs.get(branch) !== expected)
      throw new Error(`${branch} is at ${this.refs.get(branch) ?? "nothing"}, not ${expected ?? "nothing"}`);
    this.refs.set(branch, sha);
  }

  saveRefs(): Array<[string, string]> {
    return [...this.refs];
  }

  restoreRefs(refs: Array<[string, string]>): void {
    this.refs.clear();
    for (const [branch, sha] of refs) this.refs.set(branch, sha);
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
  commitOn(
    branch: string,
    author: GitIdentity,
    message: string,
    files: Record<string, string | null>,
    committer: { name: string; email: string } = author,
  ): { sha: string; changes: ChangedFiles } {
    const parent = this.branchHead(branch);
    if (!parent) throw new Error(`no branch ${branch} to commit on`);
    const parentTree = this.commitInfo(parent)!.tree;
    const entries = Object.entries(files).map(([path, text]) => ({
      path,
      mode: "100644",
      sha: text === null ? null : this.writeBlob(text),
    }));
    const tree = this.writeTree(parentTree, entries);
    const sha = this.writeCommit(tree, [parent], message, author, committer);
    this.setBranch(branch, sha, parent);
    return { sha, changes: this.changesOf(sha) };
  }

  /** What a commit changed against its first parent, as a push payload lists it. */
  changesOf(sha: string): ChangedFiles {
    const info = this.commitInfo(sha)!;
    const changes: ChangedFiles = { added: [], modified: [], removed: [] };
    const out = info.parents[0]
      ? this.git("diff-tree", "--no-commit-id", "--name-status", "-r", info.parents[0], sha)
      : this.git("ls-tree", "-r", "--name-only", sha).replace(/^/gm, "A\t");
    for (const line of out.split("\n").filter(Boolean)) {
      const [status, path] = line.split("\t") as [string, string];
      if (status === "A") changes.added.push(path);
      else if (status === "D") changes.removed.push(path);
      else changes.modified.push(path);
    }
    return changes;
  }

  /**
   * What a commit changed against its first parent, each path with its status and new blob (as
   * GitHub's commit API lists `files`); a merge commit is compared with its first parent too.
   */
  fileChanges(sha: string): FileChange[] {
    const parent = this.commitInfo(sha)!.parents[0];
    if (!parent)
      return this.listTreeRecursive(this.commitInfo(sha)!.tree)
        .filter((e) => e.type === "blob")
        .map((e) => ({ path: e.path, status: "added" as const, blob: e.sha }));
    return this.diffFiles(parent, sha);
  }

  /**
   * The unified diff of each text file a commit changed against its first parent, from its first
   * hunk on (GitHub's `patch` of a file in the commit API); binary files have none.
   */
  patchesOf(sha: string): Map<string, string> {
    const parent = this.commitInfo(sha)!.parents[0];
    const out = parent
      ? this.git("diff", "--no-color", "--no-renames", parent, sha)
      : this.git("show", "--no-color", "--format=", sha);
    const patches = new Map<string, string>();
    for (const section of out.split(/^diff --git /m).slice(1)) {
      const path = /^\+\+\+ b\/(.+)$/m.exec(section)?.[1] ?? /^--- a\/(.+)$/m.exec(section)?.[1];
      const hunks = section.indexOf("\n@@");
      if (path && hunks >= 0) patches.set(path, section.slice(hunks + 1).replace(/\n$/, ""));
    }
    return patches;
  }

  /**
   * `git rebase onto`: the branch's own commits since it left `onto`'s history replayed one by one
   * on top of `onto` (merges of it dropped), authors and messages kept, `committer` the rebaser.
   * Only for paths `onto` did not also change: such a replay would need a merge, and this throws.
   */
  rebaseOn(branch: string, onto: string, committer: GitIdentity): string {
    const head = this.branchHead(branch)!;
    const own = this.revList(head, onto).filter((sha) => this.commitInfo(sha)!.parents.length === 1);
    let parent = onto;
    for (const sha of own) {
      const info = this.commitInfo(sha)!;
      const changes = this.diffFiles(info.parents[0]!, sha);
      for (const change of changes)
        if (this.blobSha(parent, change.path) !== this.blobSha(info.parents[0]!, change.path))
          throw new Error(`${change.path} changed on both sides: rebasing ${sha.slice(0, 7)} needs a merge`);
      const tree = this.writeTree(
        this.commitInfo(parent)!.tree,
        changes.map((c) => ({ path: c.path, mode: "100644", sha: c.status === "removed" ? null : c.blob })),
      );
      parent = this.writeCommit(tree, [parent], info.message, info.author, committer);
    }
    this.setBranch(branch, parent, head);
    return parent;
  }

  /** What changed from commit `from` to commit `to`, path by path. */
  diffFiles(from: string, to: string): FileChange[] {
    const out = this.git("diff-tree", "--no-commit-id", "--no-renames", "-r", from, to);
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [meta, path] = line.split("\t") as [string, string];
        const [, , , blob, status] = meta.split(" ") as [string, string, string, string, string];
        return {
          path,
          status: status === "A" ? ("added" as const) : status === "D" ? ("removed" as const) : ("modified" as const),
          blob,
        };
      });
  }

  /**
   * The diff of each text file from commit `from` to commit `to`, as GitHub's compare and commit
   * APIs give it in a file's `patch`: the hunks of a unified diff with three lines of context, without
   * git's file headers. A binary file has none (GitHub leaves `patch` out for it).
   */
  patches(from: string, to: string): Map<string, string> {
    const out = this.git("diff", "--no-renames", "--no-color", "--no-ext-diff", "-U3", from, to);
    const patches = new Map<string, string>();
    for (const chunk of out.split(/^diff --git /m).slice(1)) {
      const lines = chunk.split("\n");
      const path = /^\+\+\+ b\/(.*)$/m.exec(chunk)?.[1] ?? /^--- a\/(.*)$/m.exec(chunk)?.[1];
      const first = lines.findIndex((line) => line.startsWith("@@"));
      if (path === undefined || first < 0) continue;
      patches.set(path, lines.slice(first).join("\n").replace(/\n$/, ""));
    }
    return patches;
  }

  /** Every entry of a tree and its subtrees, paths from the root (as `git ls-tree -r -t` lists them). */
  listTreeRecursive(treeSha: string): TreeEntry[] {
    const out = this.git("ls-tree", "-r", "-t", "-l", treeSha);
    if (!out) return [];
    return out.split("\n").map((line) => {
      const [meta, path] = line.split("\t") as [string, string];
      const [mode, type, sha, size] = meta.split(/\s+/) as [string, string, string, string];
      return { mode, type, sha, size: size === "-" ? undefined : Number(size), path };
    });
  }

  /**
   * A merge commit on `branch` of the commit `other` (as GitHub's "Update branch" makes it), its
   * tree git's own merge of the two; `files` (optional) are changed on top, as a hand-made merge may.
   * Where both sides changed a path and git cannot merge it, GitHub's "Update branch" refuses
   * ("This branch has conflicts that must be resolved"): so does this, unless `files` resolves
   * every conflicted path (as a person does in GitHub's conflict editor or a local merge).
   */
  mergeOn(
    branch: string,
    other: string,
    message: string,
    author: GitIdentity,
    files: Record<string, string | null> = {},
  ): string {
    const parent = this.branchHead(branch);
    if (!parent) throw new Error(`no branch ${branch} to merge into`);
    const merged = this.mergedTree(parent, other, Object.keys(files));
    const tree = this.writeTree(
      merged,
      Object.entries(files).map(([path, text]) => ({
        path,
        mode: "100644",
        sha: text === null ? null : this.writeBlob(text),
      })),
    );
    const sha = this.writeCommit(tree, [parent, other], message, author, author);
    this.setBranch(branch, sha, parent);
    return sha;
  }

  /** git's merge of two commits' trees; throws naming the conflicted paths `resolved` leaves open. */
  private mergedTree(ours: string, theirs: string, resolved: string[]): string {
    try {
      return this.git("merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs).split("\n")[0]!;
    } catch (error) {
      // Exit status 1: a tree with conflict markers, then the conflicted paths, one a line.
      const out = String((error as { stdout?: unknown }).stdout ?? "");
      const [tree, ...conflicted] = out.split("\n").filter(Boolean);
      const open = conflicted.filter((path) => !resolved.includes(path));
      if (!tree || conflicted.length === 0 || open.length > 0)
        throw new Error(
          `merging ${theirs.slice(0, 7)} into ${ours.slice(0, 7)} conflicts in ${open.join(", ") || "(git said nothing)"}: resolve them`,
        );
      return tree;
    }
  }

  /**
   * The branches as a fresh clone sees them (`refs/remotes/origin/*`, as actions/checkout with
   * full history leaves them): git's own refs are not moved when the double's branches are.
   */
  publishRemoteRefs(): void {
    const current = new Map([...this.refs].map(([branch, sha]) => [`refs/remotes/origin/${branch}`, sha]));
    const stale = this.git("for-each-ref", "--format=%(refname)", "refs/remotes/origin/")
      .split("\n")
      .filter((ref) => ref && !current.has(ref));
    const commands = [
      ...stale.map((ref) => `delete ${ref}`),
      ...[...current].map(([ref, sha]) => `update ${ref} ${sha}`),
    ];
    this.gitWith({}, `${commands.join("\n")}\n`, "update-ref", "--stdin");
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
