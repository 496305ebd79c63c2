import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { zodProblems } from "../contracts/zod-error.js";
import { SIGNATURE_PREFIX, TrackStateFile, type TrackState } from "./schema.js";
import { TamperedStateError } from "./errors.js";

/**
 * Signing and verifying state files. The signature is an HMAC-SHA256 over the canonical JSON
 * (keys sorted, no whitespace) of every field but `signature`, so formatting does not matter and
 * any change of content does.
 */

/** JSON with object keys sorted at every depth and undefined members dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)));
  if (isJsonObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = value[key];
      if (member !== undefined) out[key] = sortKeys(member);
    }
    return out;
  }
  return value;
}

function requireKey(key: string): void {
  if (typeof key !== "string" || key.length === 0) {
    throw new Error(
      "The state key is empty: set CONSORT_STATE_KEY (32+ random characters) before reading or writing state",
    );
  }
}

/** A state key's public id: a hash of the key that names it without revealing it. */
export function keyIdOf(key: string): string {
  return createHash("sha256").update(`consort-state-key-id\0${key}`).digest("hex").slice(0, 16);
}

const hmacOfText = (text: string, key: string): string =>
  SIGNATURE_PREFIX + createHmac("sha256", key).update(text).digest("hex");

/**
 * Each file sealState made, sorted as it is stored: it was sorted once to be signed, and sorting a
 * long track's state again to write it cost as much as the decision (the file is not changed after).
 */
const sortedFiles = new WeakMap<TrackStateFile, Record<string, unknown>>();

/**
 * Sign a state with the key, naming the key's id: the file to store. The state is not parsed again
 * here: the store checks every state it is given against the schema (checkNext) before compacting
 * and sealing it, and every file is checked against it again when it is opened.
 */
export function sealState(state: TrackState, key: string): TrackStateFile {
  requireKey(key);
  const parsed = { ...state, keyId: keyIdOf(key) };
  const sorted = sortKeys(parsed) as Record<string, unknown>;
  const signature = hmacOfText(JSON.stringify(sorted), key);
  const file = { ...parsed, signature };
  const stored: Record<string, unknown> = {};
  for (const name of [...Object.keys(sorted), "signature"].sort())
    stored[name] = name === "signature" ? signature : sorted[name];
  sortedFiles.set(file, stored);
  return file;
}

/** The text written to `tracks/<id>.json`: sorted keys, two-space indent, final newline. */
export function serialiseStateFile(file: TrackStateFile): string {
  return `${JSON.stringify(sortedFiles.get(file) ?? sortKeys(file), null, 2)}\n`;
}

/**
 * Whether `signature` is the app's over `body`. A file the app wrote keeps its keys sorted, so its
 * body as parsed is already canonical and is checked as it is (no sorted copy made); only when that
 * fails is the body sorted and checked again, so a file whose layout alone changed still verifies.
 * Equal HMACs mean equal texts, so the shortcut admits exactly the content the app sealed.
 */
function sealedBy(signature: unknown, body: Record<string, unknown>, key: string): boolean {
  return (
    signatureMatches(signature, hmacOfText(JSON.stringify(body), key)) ||
    signatureMatches(signature, hmacOfText(canonicalJson(body), key))
  );
}

function signatureMatches(actual: unknown, expected: string): boolean {
  if (typeof actual !== "string") return false;
  const a = Buffer.from(actual);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Everything that is wrong with a stored file's text; empty when it is sound. The file names the
 * key that sealed it: the app's key, or one of `previousKeys` (retired by a rotation, kept so the
 * files they sealed still open until the app writes them again with the current key).
 */
export function checkStateFile(
  text: string,
  key: string,
  expected: { trackId: string; repository?: string },
  previousKeys: readonly string[] = [],
): { problems: string[]; file?: TrackStateFile; raw?: Record<string, unknown> } {
  requireKey(key);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { problems: [`not valid JSON (${(error as Error).message})`] };
  }
  if (!isJsonObject(raw)) return { problems: ["not a JSON object"] };
  const problems: string[] = [];
  const { signature, ...body } = raw;
  // The signature is checked over the raw content, before the schema could coerce anything.
  const keyId = typeof body.keyId === "string" ? body.keyId : undefined;
  // A file sealed before key ids were kept names none: only the current key can have sealed it.
  const sealedWith = keyId === undefined ? key : [key, ...previousKeys].find((k) => k && keyIdOf(k) === keyId);
  if (signature === undefined) problems.push("signature is missing");
  else if (sealedWith === undefined)
    problems.push(
      `sealed with state key ${keyId}, which is not this app's key ${keyIdOf(key)}${previousKeys.length > 0 ? ` nor one of its previous keys (${previousKeys.map(keyIdOf).join(", ")})` : ""}: if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has`,
    );
  else if (!sealedBy(signature, body, sealedWith))
    problems.push("signature does not match the content (edited outside the app, or sealed with another key)");
  const parsed = TrackStateFile.safeParse(raw);
  if (!parsed.success) {
    problems.push(...zodProblems(parsed.error).map((problem) => `schema: ${problem}`));
  } else {
    if (parsed.data.trackId !== expected.trackId)
      problems.push(`trackId is "${parsed.data.trackId}" but the file is for "${expected.trackId}"`);
    if (expected.repository && parsed.data.repository.toLowerCase() !== expected.repository.toLowerCase()) {
      problems.push(`repository is "${parsed.data.repository}" but this is ${expected.repository}`);
    }
  }
  return { problems, file: parsed.success ? parsed.data : undefined, raw };
}

/** Parse and verify a stored file; fails closed with TamperedStateError naming what failed. */
export function openStateFile(
  text: string,
  key: string,
  where: { trackId: string; path: string; repository?: string; commit?: string },
  previousKeys: readonly string[] = [],
): TrackStateFile {
  const { problems, file } = checkStateFile(text, key, where, previousKeys);
  if (problems.length > 0 || !file) throw new TamperedStateError(where.trackId, where.path, problems, where.commit);
  return file;
}

/** The state without its signature. */
export function unsealed(file: TrackStateFile): TrackState {
  const { signature: _signature, ...state } = file;
  return state;
}
