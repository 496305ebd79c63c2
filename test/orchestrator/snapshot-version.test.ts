import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { workflowRequestOf } from "../../src/engine/requests.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { hashFrozenText } from "../../src/gates/hash.js";
import { frozenTextOf } from "../../src/orchestrator/context.js";
import { restoreSnapshot, SnapshotError, transition } from "../../src/orchestrator/index.js";
import type { TrackEvent, TrackSnapshot } from "../../src/orchestrator/types.js";
import { TrackSim } from "./helpers/track.js";

/**
 * Recorded with the code before snapshot version 2 (frozen test entries holding their texts): a
 * version-1 snapshot of TrackSim.longTrack(40) after two units, then each step's event and what
 * that code decided from it (stage, rejection, effects, dispatch requests), the snapshot after the
 * last step, and a push that rewrites a frozen test file.
 */
interface Recorded {
  event: TrackEvent;
  stage: string;
  rejection: { reasons: string[] } | null;
  effects: unknown[];
}
const fixture = JSON.parse(readFileSync(new URL("./fixtures/snapshot-v1.json", import.meta.url), "utf8")) as {
  start: {
    schemaVersion: number;
    context: {
      frozenTests: Record<string, { file: string; text: string; hash: string; test: string; commit: string }>;
    };
  };
  steps: Array<Recorded & { requests: unknown[] }>;
  end: unknown;
  refusedRewrite: Recorded;
};
const config = { ...defaultConfig(), granularity: "ac" as const };
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("a version-1 snapshot", () => {
  it("is what the fixture says: entries holding their texts, most of them repeated", () => {
    expect(fixture.start.schemaVersion).toBe(1);
    const entries = Object.values(fixture.start.context.frozenTests);
    expect(entries).toHaveLength(30);
    expect(new Set(entries.map((e) => e.text)).size).toBeLessThan(entries.length);
  });

  it("converts: each entry without its text, each distinct text once by its hash", () => {
    const restored = restoreSnapshot(clone(fixture.start));
    expect(restored.schemaVersion).toBe(2);
    const v1 = fixture.start.context.frozenTests;
    expect(Object.keys(restored.context.frozenTests)).toEqual(Object.keys(v1));
    for (const [key, { text, ...entry }] of Object.entries(v1)) {
      expect(restored.context.frozenTests[key]).toEqual(entry);
      expect(frozenTextOf(restored.context, entry)).toBe(text);
    }
    // Each file's tests were appended RED by RED: its latest text whole, the older ones as its prefixes.
    const files = new Set(Object.values(v1).map((e) => e.file));
    const whole = Object.values(restored.context.frozenTexts).filter((t) => typeof t === "string");
    expect(whole).toHaveLength(files.size);
    expect(Object.keys(restored.context.frozenTexts).sort()).toEqual(
      [...new Set(Object.values(v1).map((e) => e.hash))].sort(),
    );
  });

  const withArchitecture = (recorded: unknown) => {
    const dispatched = recorded as { workflow: string; request: { step?: string } };
    return dispatched.workflow === "cycle" && dispatched.request.step === "red"
      ? {
          ...dispatched,
          request: {
            ...dispatched.request,
            architecture: {
              path: ".consort/architecture.json",
              sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
              approvedAt: expect.stringMatching(/^[0-9a-f]{40}$/),
            },
          },
        }
      : dispatched;
  };

  it("decides every later step as the version-1 code did, and the next snapshot written is version 2", () => {
    let snapshot: TrackSnapshot = restoreSnapshot(clone(fixture.start));
    for (const step of fixture.steps) {
      const result = transition(snapshot, step.event, config);
      expect(result.snapshot.stage).toBe(step.stage);
      expect(result.rejection ?? null).toEqual(step.rejection);
      expect(result.effects).toEqual(step.effects);
      const requests = result.effects.map((e) => workflowRequestOf(e, result.snapshot.context.branch, result.snapshot));
      // A RED's request has since also named the approved architecture (the job tells new modules from git).
      expect(requests.filter(Boolean)).toEqual(step.requests.map(withArchitecture));
      expect(result.snapshot.schemaVersion).toBe(2);
      snapshot = result.snapshot;
    }
    // The RED verified on the way froze every test file again: the same record, in the new shape.
    expect(snapshot).toEqual(restoreSnapshot(clone(fixture.end)));
    for (const entry of Object.values(snapshot.context.frozenTests)) expect(entry).not.toHaveProperty("text");
  });

  it("refuses a push that rewrites a frozen test file with the reason the version-1 code gave", () => {
    const result = transition(restoreSnapshot(clone(fixture.start)), fixture.refusedRewrite.event, config);
    expect(result.rejection ?? null).toEqual(fixture.refusedRewrite.rejection);
    expect(result.effects).toEqual(fixture.refusedRewrite.effects);
    expect(result.snapshot.stage).toBe(fixture.refusedRewrite.stage);
  });

  it("whose frozen text does not match its hash fails closed, naming the file", () => {
    const tampered = clone(fixture.start);
    const entry = tampered.context.frozenTests.T1!;
    entry.text += "it('added by hand', () => {});\n";
    expect(() => restoreSnapshot(tampered)).toThrow(SnapshotError);
    expect(() => restoreSnapshot(tampered)).toThrow(
      `the track snapshot (version 1) is malformed: the frozen text of test/stock-0.test.ts (frozen by T1) does not match its hash ${entry.hash}`,
    );
    expect(() => restoreSnapshot(tampered)).toThrow(
      expect.objectContaining({ hint: "the state file is damaged: restore it from the consort/state history" }),
    );
  });
});

describe("a version-2 snapshot", () => {
  it("survives a JSON round trip late in a long track and decides the same", () => {
    const sim = TrackSim.longTrack(40);
    for (let i = 0; i < 3; i++) sim.throughUnit();
    const restored = restoreSnapshot(JSON.stringify(sim.snapshot));
    expect(restored).toEqual(sim.snapshot);
    const commit = sim.redCommit();
    const event: TrackEvent = {
      type: "push",
      at: "2026-01-02T00:00:00.000Z",
      before: sim.context.head,
      after: commit.sha,
      forced: false,
      commits: [commit],
    };
    expect(transition(restored, event, sim.config)).toEqual(transition(sim.snapshot, event, sim.config));
  });

  it("holds each distinct frozen text once, however many REDs froze it", () => {
    const sim = TrackSim.longTrack(40);
    for (let i = 0; i < 3; i++) sim.throughUnit();
    const { frozenTests, frozenTexts } = sim.context;
    const hashes = new Set(Object.values(frozenTests).map((e) => e.hash));
    expect(Object.keys(frozenTexts).sort()).toEqual([...hashes].sort());
    expect(hashes.size).toBeLessThan(Object.keys(frozenTests).length);
    // Only each file's latest text is held whole; every older one is its prefix, and reads back as frozen.
    const files = new Set(Object.values(frozenTests).map((e) => e.file));
    expect(Object.values(frozenTexts).filter((t) => typeof t === "string")).toHaveLength(files.size);
    expect(files.size).toBeLessThan(hashes.size);
    for (const entry of Object.values(frozenTests))
      expect(hashFrozenText(frozenTextOf(sim.context, entry))).toBe(entry.hash);
  });
});
