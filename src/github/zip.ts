import { inflateRawSync } from "node:zlib";

/**
 * Reading named files out of a zip the app did not make (a run's result artifact) without letting
 * the zip decide how much memory that takes: only the names asked for are read, each is inflated
 * with a hard output bound (zlib stops at it), and anything ambiguous (a name listed twice, a
 * method other than stored or deflate, ZIP64 sizes) is refused rather than guessed at.
 */

export class ZipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ZipError";
  }
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeader: number;
}

/** The files named in `names` (those present), each at most `maxBytes` once inflated. */
export function readZipFiles(zip: Uint8Array, names: readonly string[], maxBytes: number): Record<string, Uint8Array> {
  const bytes = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
  const wanted = new Set(names);
  const found = new Map<string, Entry>();
  for (const entry of centralDirectory(bytes)) {
    if (!wanted.has(entry.name)) continue;
    if (found.has(entry.name)) throw new ZipError(`it lists ${entry.name} twice`);
    found.set(entry.name, entry);
  }
  const files: Record<string, Uint8Array> = {};
  for (const [name, entry] of found) files[name] = inflateEntry(bytes, entry, maxBytes);
  return files;
}

function centralDirectory(bytes: Buffer): Entry[] {
  const end = findEndOfCentralDirectory(bytes);
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL_FILE_HEADER)
      throw new ZipError("its central directory is cut short");
    const nameLength = bytes.readUInt16LE(at + 28);
    entries.push({
      method: bytes.readUInt16LE(at + 10),
      compressedSize: bytes.readUInt32LE(at + 20),
      size: bytes.readUInt32LE(at + 24),
      localHeader: bytes.readUInt32LE(at + 42),
      name: bytes.toString("utf8", at + 46, at + 46 + nameLength),
    });
    at += 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
  return entries;
}

function findEndOfCentralDirectory(bytes: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535.
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--) {
    if (bytes.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new ZipError("it has no end of central directory record (not a zip)");
}

function inflateEntry(bytes: Buffer, entry: Entry, maxBytes: number): Uint8Array {
  if (entry.compressedSize === 0xffffffff || entry.size === 0xffffffff || entry.localHeader === 0xffffffff)
    throw new ZipError(`${entry.name} uses ZIP64 sizes, far more than a result can be`);
  if (entry.size > maxBytes)
    throw new ZipError(
      `${entry.name} unpacks to ${entry.size} bytes, more than the ${maxBytes} a result file may have`,
    );
  const at = entry.localHeader;
  if (at + 30 > bytes.length || bytes.readUInt32LE(at) !== LOCAL_FILE_HEADER)
    throw new ZipError(`${entry.name}'s local header is missing`);
  const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
  const end = start + entry.compressedSize;
  if (end > bytes.length) throw new ZipError(`${entry.name} is cut short`);
  const data = bytes.subarray(start, end);
  if (entry.method === STORED) {
    if (data.length > maxBytes)
      throw new ZipError(`${entry.name} holds more than the ${maxBytes} bytes a result file may have`);
    return new Uint8Array(data);
  }
  if (entry.method !== DEFLATED) throw new ZipError(`${entry.name} is compressed with method ${entry.method}`);
  try {
    // The declared size may lie: zlib itself stops once the output passes the bound.
    return new Uint8Array(inflateRawSync(data, { maxOutputLength: maxBytes }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
      throw new ZipError(`${entry.name} unpacks to more than the ${maxBytes} bytes a result file may have`);
    throw new ZipError(`${entry.name} does not inflate: ${(error as Error).message}`);
  }
}
