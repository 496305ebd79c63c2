import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { expandStored, keptTexts, storedFormOf, textsFrom, type StoredSource } from "./compact.js";
import { STATE_BRANCH, type TrackState } from "./schema.js";

/**
 * Reading what a compact state file refers to from a local git directory (a clone that fetched
 * consort/state, or the local lane's): every object a read needs through one `git cat-file
 * --batch` process, where one `git show` a record cost a process each (a board of a 50-unit track
 * started 50).
 */

/**
 * The texts of git objects by name (`<rev>:<path>`, or an object id), undefined for a name the
 * directory does not hold as a blob. One `git cat-file --batch` for all of them.
 */
async function readGitObjects(cwd: string, names: readonly string[]): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  // A name with a line break would split the batch's input: it names nothing the batch can read.
  const asked = [...new Set(names)].filter((name) => {
    const readable = name.length > 0 && !/[\r\n]/.test(name);
    if (!readable) out.set(name, undefined);
    return readable;
  });
  if (asked.length === 0) return out;
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
        : reject(new Error(`git cat-file --batch failed in ${cwd}: ${errors.trim() || `exit code ${code}`}`)),
    );
    child.stdin.end(asked.map((name) => `${name}\n`).join(""));
  });
  let at = 0;
  for (const name of asked) {
    const lineEnd = output.indexOf(0x0a, at);
    if (lineEnd < 0) throw new Error(`git cat-file --batch in ${cwd} answered fewer objects than it was asked for`);
    const header = output.toString("utf8", at, lineEnd);
    at = lineEnd + 1;
    // `<name> missing` or `<name> ambiguous` carry no content; `<oid> <type> <size>` is followed by it.
    const [, type, size] = header.split(" ");
    if (size === undefined || !/^\d+$/.test(size)) {
      out.set(name, undefined);
      continue;
    }
    out.set(name, type === "blob" ? output.toString("utf8", at, at + Number(size)) : undefined);
    at += Number(size) + 1;
  }
  return out;
}

/** What a compact state file read at `ref` refers to, from the git directory at `cwd`: texts by blob id, records at `ref`. */
export function gitStoredSource(cwd: string, ref: string): StoredSource {
  return {
    texts: async (blobs) => {
      // Texts this process already holds are not read again.
      const read = await readGitObjects(
        cwd,
        blobs.filter((blob) => !keptTexts.has(blob)),
      );
      return textsFrom(blobs, (blob) => Promise.resolve(read.get(blob)));
    },
    records: async (paths) => {
      const read = await readGitObjects(
        cwd,
        paths.map((path) => `${ref}:${path}`),
      );
      return new Map(paths.map((path) => [path, read.get(`${ref}:${path}`)]));
    },
  };
}

const run = promisify(execFile);

/** Where a clone holds the state branch, most authoritative first: the fetched one, then a local one. */
export const STATE_REFS = [`refs/remotes/origin/${STATE_BRANCH}`, `refs/heads/${STATE_BRANCH}`];

/**
 * A state file read from disk, as the app works with it, with every finished unit's record: a
 * compact file's texts and records read from the git directory at `cwd`, which holds them once it
 * fetched the state branch (`git fetch origin consort/state`). Throws what it cannot read.
 */
export async function expandStateFileFromGit(state: TrackState, cwd: string): Promise<TrackState> {
  if (!storedFormOf(state)) return state;
  let ref = STATE_REFS[0]!;
  for (const candidate of STATE_REFS) {
    const found = await run("git", ["rev-parse", "--verify", "--quiet", candidate], { cwd }).then(
      () => true,
      () => false,
    );
    if (found) {
      ref = candidate;
      break;
    }
  }
  return (await expandStored(state.trackId, state, true, gitStoredSource(cwd, ref))).state;
}
