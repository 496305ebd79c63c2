import { constants, crc32, deflateRawSync } from "node:zlib";

/**
 * A zip bomb, built the cheap way an attacker would: one megabyte of spaces deflated once (about
 * a kilobyte, self-contained thanks to a full flush), repeated, then a final empty block. The zip
 * around it is written by hand so its headers can tell the truth about the size or lie about it.
 */
export function zipBomb({
  name,
  mebibytes,
  declaredSize,
}: {
  name: string;
  mebibytes: number;
  /** What the headers claim the file unpacks to; the real size when left out. */
  declaredSize?: number;
}): Uint8Array {
  const megabyte = Buffer.alloc(1024 * 1024, 0x20);
  const segment = deflateRawSync(megabyte, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const data = Buffer.concat([...Array<Buffer>(mebibytes).fill(segment), deflateRawSync(Buffer.alloc(0))]);
  let crc = 0;
  for (let i = 0; i < mebibytes; i++) crc = crc32(megabyte, crc);
  const size = declaredSize ?? mebibytes * megabyte.length;
  const fileName = Buffer.from(name, "utf8");

  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4); // version needed
  local.writeUInt16LE(0x0800, 6); // UTF-8 name
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt32LE(crc >>> 0, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(fileName.length, 26);

  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x0800, 8);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc >>> 0, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(fileName.length, 28);
  central.writeUInt32LE(0, 42); // local header at the start

  const centralOffset = local.length + fileName.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return new Uint8Array(Buffer.concat([local, fileName, data, central, fileName, end]));
}
