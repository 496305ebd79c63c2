import { simpleGit, type SimpleGit } from "simple-git";
import {
  COMMIT_FILES_CAP,
  COMPARE_FILES_CAP,
  loginFromEmail,
  type ChangedFile,
  type Compared,
  type ListedCommit,
  type PushSource,
  type TreeRead,
} from "./source.js";

/**
 * The push reader's local-git adapter: the same reads as GitHub's REST API answers them, from the
 * checkout's own git (plumbing only, nothing written). It lists no more than GitHub does, so a push
 * GitHub's lists cannot vouch for is refused here as the app would refuse it.
 */
export function gitSource(repoPath: string): PushSource {
  const git = simpleGit(repoPath);
  const commits = new Map<string, ListedCommit>();
  const commitOf = async (sha: string): Promise<ListedCommit> => {
    const known = commits.get(sha);
    if (known) return known;
    const listed = parseCommit(sha, await git.raw(["cat-file", "commit", sha]));
    commits.set(sha, listed);
    return listed;
  };
  return {
    async compare(base, head) {
      const [b, h] = [await resolve(git, base), await resolve(git, head)];
      const mergeBase = (await git.raw(["merge-base", b, h])).trim();
      const ahead = await revList(git, `${b}..${h}`);
      const behind = await revList(git, `${h}..${b}`);
      const status = b === h ? "identical" : behind.length === 0 ? "ahead" : ahead.length === 0 ? "behind" : "diverged";
      const listed = (await changedFiles(git, mergeBase, h)).slice(0, COMPARE_FILES_CAP);
      const compared: Compared = {
        status,
        commits: await Promise.all(ahead.map(commitOf)),
        files: listed.map((f) => f.path),
        listed,
        baseTree: (await git.raw(["rev-parse", `${b}^{tree}`])).trim(),
        baseSha: b,
        mergeBase,
      };
      return compared;
    },
    async commitFiles(sha) {
      const parent = (await commitOf(await resolve(git, sha))).parents[0];
      // A root commit adds its whole tree, as the empty tree's diff says.
      const from = parent ?? (await git.raw(["hash-object", "-t", "tree", "/dev/null"])).trim();
      return (await changedFiles(git, from, sha)).slice(0, COMMIT_FILES_CAP);
    },
    async fileAt(path, ref) {
      const spec = `${ref}:${path}`;
      const type = await git.raw(["cat-file", "-t", spec]).catch(() => "");
      return type.trim() === "blob" ? git.raw(["cat-file", "blob", spec]) : null;
    },
    async tree(sha) {
      const out = await git.raw(["ls-tree", "-r", "-z", "--full-tree", sha]);
      const blobs: TreeRead["blobs"] = [];
      for (const entry of out.split("\0").filter(Boolean)) {
        const [meta = "", path = ""] = entry.split("\t");
        const [, type, blob] = meta.split(" ");
        if (type === "blob" && blob) blobs.push({ path, sha: blob });
      }
      return { sha: (await git.raw(["rev-parse", `${sha}^{tree}`])).trim(), blobs, truncated: false };
    },
  };
}

/** The commit `ref` names; a branch the checkout holds only as origin's (a clone's default branch) is origin's. */
async function resolve(git: SimpleGit, ref: string): Promise<string> {
  for (const name of [ref, `refs/remotes/origin/${ref}`]) {
    // simple-git resolves a failed `--quiet` call with no output, so the output decides.
    const sha = (await git.raw(["rev-parse", "--verify", "--quiet", `${name}^{commit}`]).catch(() => "")).trim();
    if (sha) return sha;
  }
  throw new Error(`no commit ${ref} in this repository: fetch it (git fetch) or name a commit it holds`);
}

/** Oldest first, each after its parents (GitHub's compare lists them so). */
const revList = async (git: SimpleGit, range: string) =>
  (await git.raw(["rev-list", "--reverse", "--topo-order", range])).split("\n").filter(Boolean);

/** A raw commit object: its parents, tree, author's login (from a noreply address) and the message as written. */
function parseCommit(sha: string, raw: string): ListedCommit {
  const end = raw.indexOf("\n\n");
  const header = (end < 0 ? raw : raw.slice(0, end)).split("\n");
  const field = (name: string) => header.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1));
  const email = /<([^>]*)>/.exec(field("author")[0] ?? "")?.[1] ?? "";
  return {
    sha,
    parents: field("parent"),
    message: end < 0 ? "" : raw.slice(end + 2),
    authorLogin: loginFromEmail(email),
    tree: field("tree")[0] ?? "",
  };
}

const STATUS: Record<string, ChangedFile["status"]> = {
  A: "added",
  M: "modified",
  D: "removed",
  R: "renamed",
  C: "copied",
  T: "changed",
};

/** What changed from `from` to `to`, path by path, with each file's blob after and its diff's hunks (as GitHub lists `files`). */
async function changedFiles(git: SimpleGit, from: string, to: string): Promise<ChangedFile[]> {
  const raw = (await git.raw(["diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", from, to])).split("\0");
  const patches = parsePatches(
    await git.raw(["diff", "-M", "--no-color", "--no-ext-diff", "-U3", "--src-prefix=a/", "--dst-prefix=b/", from, to]),
  );
  const files: ChangedFile[] = [];
  for (let i = 0; i < raw.length - 1;) {
    const [, , , blob = "", code = ""] = raw[i++]!.slice(1).split(" ");
    const status = STATUS[code[0] ?? ""] ?? "changed";
    const first = raw[i++]!;
    const renamed = status === "renamed" || status === "copied";
    const path = renamed ? raw[i++]! : first;
    const patch = patches.get(path);
    files.push({
      path,
      status,
      ...(renamed ? { previousPath: first } : {}),
      ...(status !== "removed" ? { blob } : {}),
      ...(patch !== undefined ? { patch } : {}),
    });
  }
  return files;
}

/** Each text file's hunks, from its first `@@` (GitHub's `patch`); a binary file has none. */
function parsePatches(out: string): Map<string, string> {
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
