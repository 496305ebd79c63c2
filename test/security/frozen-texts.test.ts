import { describe, expect, it } from "vitest";
import { restoreSnapshot, SnapshotError } from "../../src/orchestrator/index.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { TrackSim } from "../orchestrator/helpers/track.js";

/**
 * A frozen test entry names its text by hash (snapshot version 2), and an older text may be held as
 * a prefix of a newer one. A snapshot edited so that an entry's text is gone, or a prefix reaches
 * past its text, cannot be compared with what a push changes: restoring it fails closed, naming the
 * file, the test that froze it and the hash, rather than treating the file as unfrozen.
 */
function lateSnapshot(): TrackSnapshot {
  // 40 tests over 25 files: the third unit appends a second test to five of them.
  const sim = TrackSim.longTrack(40);
  for (let i = 0; i < 3; i++) sim.throughUnit();
  return JSON.parse(JSON.stringify(sim.snapshot)) as TrackSnapshot;
}

describe("a snapshot whose frozen entry names a text it does not hold", () => {
  it("is refused when the text is deleted", () => {
    const tampered = lateSnapshot();
    const entry = tampered.context.frozenTests.T21!;
    const others = Object.entries(tampered.context.frozenTests).filter(([, e]) => e.hash === entry.hash);
    delete tampered.context.frozenTexts[entry.hash];
    expect(() => restoreSnapshot(tampered)).toThrow(SnapshotError);
    const message = (() => {
      try {
        restoreSnapshot(tampered);
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    })();
    expect(message).toContain(
      `the frozen text of ${entry.file} (frozen by T21) is missing: no frozenTexts entry for hash ${entry.hash}`,
    );
    // Every entry that named that text is reported, not just the first.
    for (const [, other] of others)
      expect(message).toContain(`the frozen text of ${other.file} (frozen by ${other.test}) is missing`);
  });

  it("is refused when the entry is pointed at a hash nothing holds", () => {
    const tampered = lateSnapshot();
    const forged = "0".repeat(64);
    tampered.context.frozenTests.T21!.hash = forged;
    expect(() => restoreSnapshot(tampered)).toThrow(
      `the frozen text of ${tampered.context.frozenTests.T21!.file} (frozen by T21) is missing: no frozenTexts entry for hash ${forged}`,
    );
  });

  it("is refused when a prefix reference reaches past the text it refers to", () => {
    const tampered = lateSnapshot();
    const [hash, ref] = Object.entries(tampered.context.frozenTexts).find(([, t]) => typeof t !== "string")!;
    if (typeof ref === "string") throw new Error("a prefix reference was expected");
    const base = tampered.context.frozenTexts[ref.of] as string;
    tampered.context.frozenTexts[hash] = { of: ref.of, length: base.length + 1 };
    expect(() => restoreSnapshot(tampered)).toThrow(
      `the frozen text ${hash} is missing: it is the first ${base.length + 1} characters of ${ref.of}, which holds no text that long`,
    );
  });

  it("is refused when a prefix reference names a text nothing holds", () => {
    const tampered = lateSnapshot();
    const [hash, ref] = Object.entries(tampered.context.frozenTexts).find(([, t]) => typeof t !== "string")!;
    if (typeof ref === "string") throw new Error("a prefix reference was expected");
    delete tampered.context.frozenTexts[ref.of];
    const forged = { of: "f".repeat(64), length: ref.length };
    tampered.context.frozenTexts[hash] = forged;
    expect(() => restoreSnapshot(tampered)).toThrow(
      `the frozen text ${hash} is missing: it is the first ${ref.length} characters of ${forged.of}, which holds no text that long`,
    );
  });

  it("is refused when the record of texts is removed altogether", () => {
    const tampered = lateSnapshot() as unknown as { context: Record<string, unknown> };
    delete tampered.context.frozenTexts;
    expect(() => restoreSnapshot(tampered)).toThrow(/the track snapshot is malformed: .*frozenTexts/);
  });
});
