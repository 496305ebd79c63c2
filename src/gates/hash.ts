import { createHash } from "node:crypto";

/**
 * The hashes that pin what a gate approved (docs/ARCHITECTURE.md, Gates): sha256 of file texts
 * after line endings are normalised, git blob ids, and one hash over a set. Pure functions.
 */

/** Line endings normalised so a checkout on Windows does not look like a change. */
export function normaliseLineEndings(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** sha256 hex of a frozen file's text after CRLF/CR → LF. */
export function hashFrozenText(text: string): string {
  return createHash("sha256").update(normaliseLineEndings(text), "utf8").digest("hex");
}

/**
 * The git blob id of a text (sha-1 of `blob <bytes>\0<bytes>`): what a tree lists for a file holding
 * exactly that text, so a frozen file is checked at a commit by one tree read, without its content.
 */
export function gitBlobId(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1")
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest("hex");
}

/** One hash over a set of already-hashed files, stable over the order the paths come in. */
export function manifestHashFromHashes(hashes: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const path of Object.keys(hashes).sort()) hash.update(`${path}\u0000${hashes[path]}\n`, "utf8");
  return hash.digest("hex");
}

/** One hash over a set of files (path → text), stable over the order the paths come in. */
export function manifestHash(files: Record<string, string>): string {
  const hashes: Record<string, string> = {};
  for (const [path, text] of Object.entries(files)) hashes[path] = hashFrozenText(text);
  return manifestHashFromHashes(hashes);
}
